"""vLLM (V1 engine) as vLLM 0.34.0 sizes its KV pool at start-up.

vLLM 0.34's default on CUDA, the extensible KV cache (option `extensible_kv_cache`, `vllm_extensible`): the pool is
what the memory measured after warm-up and CUDA-graph capture leaves, less the transient peak and a margin of
max(1 GiB, 0.75 x that peak), within gpu_memory_utilization (default 1.0) x the total, in blocks mapped in 2 MiB
granules per layer region.

Without it (`--no-enable-extensible-kv-cache`, and every release before 0.34), `vllm/v1/worker/gpu_worker.py`
`Worker.determine_available_memory` with `vllm/utils/mem_utils.py` `memory_profiling` and
`vllm/v1/worker/utils.py` `request_memory`:

    requested = ceil(gpu_memory_utilization x total)        total: torch.cuda.mem_get_info, not the datasheet
    KV pool   = requested - weights - torch peak increase of the profile run
                          - non-torch increase - CUDA-graph estimate (unless enforce_eager)

with gpu_memory_utilization 0.92 unless set (vLLM 0.6.4's documentation gives 0.9, which memviz takes for a log
that states none).

- profile run (`profile_run`, `_dummy_run(max_num_tokens)`, `_dummy_sampler_run` of the V2 model runner,
  `v1/worker/gpu/model_runner.py`, 0.34's only runner, or of V1's `gpu_model_runner.py` with
  VLLM_USE_V2_MODEL_RUNNER=0 in 0.33 and earlier: option `model_runner`): one forward of `max_num_batched_tokens` tokens spread over
  min(max_num_seqs, tokens) dummy requests (flash attention: no score matrix; an MLA layer's stand-in for the
  largest up-projected context, `mla_profile_context_bytes`; fused
  MoE: S x (2I + I + H) rows; without attention metadata, delta-net and Mamba2 layers skip their scan:
  `activations.skipped_core_workspace`), then the sampler on one row per request (`vllm_sampler`: V2 samples an fp32
  copy of the logits with FlashInfer's sampler, 2 + 4 + 4 + 4 bytes per vocabulary entry and request, or masks it in
  place with vLLM's Triton kernel beside its buffer of a vocabulary row per SM; V1 also holds softmax probabilities
  and exponential noise and warms the Triton kernel beside FlashInfer's; releases before 0.17 sorted: 38 bytes;
  option sampler, by default the one vLLM picks for the GPU); the forward's hidden states (tokens x hidden) stay
  alive through it. The V2 runner's sampler keeps an int32 count per vocabulary entry and request slot from loading
  on (`vllm_sampler.v2_state_bytes`), which the profile counts as consumed: `stage_runtime_bytes`. Also held: the
  fused-MoE workspace from the first MoE layer on (`vllm_moe_workspace`), a later pipeline stage's receive buffer
  (`vllm_pipeline`) and, on a cold start, the compile's kernel benchmark on a copy of the embedding table
  (`vllm_compile`). Before the forward a multimodal model's vision tower passes the largest inputs the encoder
  budget allows (`encoder_pass`; Gemma 4's in the chunks `vllm_gemma4_vision` sizes).
- defaults (`vllm/engine/arg_utils.py` `get_batch_defaults`, `vllm serve`):
  max_num_batched_tokens 2048 and max_num_seqs 256 below 70 GiB or on A100,
  8192 / 1024 from 70 GiB, 16384 / 1024 from 160 GiB; block_size 64 (`CacheConfig.DEFAULT_BLOCK_SIZE`, 16 before
  0.34); chunked prefill on (off: a whole max_model_len prompt is one step).
- `--kv-cache-memory-bytes` (option kv_cache_memory_bytes): `determine_available_memory` still makes the profile
  run, then returns that size for the pool whatever the rest takes; `request_memory` still asks
  gpu_memory_utilization x total free at start-up. The fit then judges the sequences against that pool, and
  the pool beside the rest beyond what CUDA leaves is a refusal (out of memory).
  Without it vLLM prints the size to set (`compile_or_warm_up_model`): the budget less the rest, less the CUDA
  graphs it captured (counted twice from 0.20: in the estimate and as captured) and 150 MiB; memviz states it
  (`suggested_kv_cache_memory_bytes`).
- KV blocks (`vllm/v1/core/kv_cache_utils.py`, `vllm_kv`): whole blocks of block_size tokens
  over all layers, grouped by spec where layers cache differently; "Maximum concurrency" = blocks / blocks
  one max_model_len request needs; "GPU KV cache size: N tokens" = that x max_model_len; a pool that
  cannot hold one such request is an error (`check_enough_kv_cache_memory`).
  MLA models cache the latent, replicated on every tensor-parallel rank; KV heads
  are split over TP ranks (replicated when fewer heads than ranks).

Outside the budget (`gpu_worker.py` `init_device`): the CUDA context, cuBLAS handles and, since vLLM
0.11 (PR #25359), the NCCL buffers are allocated before the baseline snapshot; `request_memory` refuses to
start when the memory still free then is less than the requested share ("Free memory on device ... on
startup is less than desired GPU memory utilization"). memviz takes the torch CUDA baseline
(`base.TORCH_CUDA_BASELINE_BYTES`) plus 256 MiB of NCCL buffers per GPU of the TP x PP group when it has more
than one (V0 published profiles: 2.10 GiB at TP 8; constant: published NCCL footprints range from 0.1 GiB
over PCIe to 4.5 GiB with NVLink, so only the context is grounds to refuse, NCCL a stated risk). vLLM 0.10's
profiles still counted NCCL as non-torch memory inside the budget (0.12 GiB at TP 2 and 0.18 GiB at TP 4
without custom all-reduce, dennislee22/vLLM-benchmarking logs). On Hopper HGX boards a tensor-parallel rank's
profile grows non-torch memory by about 2 GiB inside the budget (`HOPPER_TP_NON_TORCH_BYTES`, vLLM 0.19 logs).

Kernel padding (`weight_extra`): MXFP4 MoE experts are re-laid out for the backend vLLM picks by compute
capability (`fused_moe/oracle/mxfp4.py` `_get_priority_backends_for_gpt_oss`, `_get_priority_backends`,
`mxfp4_round_up_hidden_size_and_intermediate_size`): Marlin (Ampere, Ada, consumer Blackwell) rounds each
rank's intermediate size up to 128 and the hidden size to 256; FlashInfer TRT-LLM (SM100) the same; the
Triton kernels gpt-oss takes on Hopper round the intermediate size to 64 only and pad their swizzled scales' rows
to 256 (`_hopper_scale_padding`). gpt-oss-120b at TP 4 on A100:
17.22 GiB per rank loaded, 15.21 GiB unpadded, 17.17 GiB padded. FP8 weights on a GPU without FP8 (below compute
capability 8.9) run on Marlin with 16-bit scales widened to one per output row and 128 inputs
(`_marlin_fp8_scales`): Qwen3-30B-A3B-FP8 on an A800, 29.50 GiB loaded, 29.04 GiB unwidened, 29.47 GiB widened.
An MLA layer's quantized kv_b_proj is held twice: as loaded and dequantized into the model's dtype for decode
(`dequantized_kv_b_bytes`: DeepSeek-V3's FP8 release, 256 MB a rank at TP 8).

Tensor parallelism (`tp_shares`): MLA's down-projections (q_a_proj, kv_a_proj_with_mqa) and the lightning
indexer's projections are held whole on every rank (`REPLICATED_KINDS`), the indexer's wk and weights_proj in
the model's dtype whatever the checkpoint stores, as are Mistral Large 4's kv_a_proj_with_mqa and kv_b_proj
(`indexer_upcast_bytes`); with fewer KV heads than ranks, each
rank holds one KV head's K and V projections. Data parallelism (`data_parallel_size`) runs engine replicas, each
on its own tp x pp GPUs with its own pool, whose MoE layers span all tp x dp GPUs: a slice of every expert, or
with `enable_expert_parallel` whole experts (`moe_parallel`, `expert_share`); EPLB's redundant experts, maps
and expert buffer (`vllm_eplb`). Not modelled: the all-to-all backends' buffers. DeepSeek-Coder-V2-Lite at TP 4
loaded 7.3858 GiB a rank (vLLM 0.8, vllm-project/vllm#15607): 7.3829 with them whole, 7.3383 split.

Rotary tables (`vllm_rotary`): the cos / sin tables `get_rope` caches, one per distinct rope, their positions by
scaling type (Gemma 3's full layers: 8 x 131,072 for their linear factor, beside the sliding layers' own table),
loaded with the model ("Model loading took" includes them) and counted as runtime memory, as are the batch buffers
multimodal classes allocate at load (`BATCH_BUFFERS`: Gemma 3n / 4's per-layer embeddings, Qwen3-VL's deepstack).

LoRA (`vllm_lora`, option `enable_lora`): max_loras adapter slots of max_lora_rank in every linear layer, the
experts and the embeddings the model class lists, counted in the weights; CUDA graphs captured without and with
adapters.

Attention workspaces (`vllm_flashinfer`): where FlashInfer runs the attention (vLLM's choice on compute capability
10, or asked for), its metadata builder's workspace, max(394 MiB, max_num_batched_tokens x query heads x head size x
16 bytes), and the TRT-LLM kernels' 394 MiB (MLA: FLASHINFER_MLA's 128 MiB): within a measured pool's budget, after a
profile-sized pool (the kernels' in the CUDA-graph estimate's capture). Llama-3.1-8B on a B200: 1.38 GiB.

CUDA-graph memory (`profile_cudagraph_memory`, on by default since v0.20 and switched off with
VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0, option `estimate_cudagraphs`): `vllm_cudagraphs`, the capture sizes
vLLM picks, FlashAttention 3's split buffers where FLASH_ATTN runs on Hopper (option `attention_backend`), and the
graphs' own memory per layer and size, fitted to vLLM 0.19's captures on H100s.

Constants (provenance "constant"): non-torch memory inside the budget (attention-backend workspaces
allocated during the profile run) 64 MiB (published profiles: 0.01-0.08 GiB on one GPU; 0.19's DEBUG profiles on
H100s print 0.24-0.27 GiB: the pools those give stay within 0.4 %; 0.34 makes cuBLAS's handles before its baseline
snapshot, `init_device`).
"""

from __future__ import annotations

import json
import shlex
from dataclasses import asdict, dataclass
from math import ceil, lcm, prod
from typing import Any

import numpy as np

from memviz.core.activations import inference_workspace
from memviz.core.arch import DELTANET, FULL, KIMI_DELTA, LINEAR, MAMBA, MAMBA2, SHORTCONV, SLIDING, Architecture
from memviz.core.engines import (
    vllm_dtype,
    vllm_eagle3,
    vllm_eplb,
    vllm_extensible,
    vllm_int4,
    vllm_lora,
    vllm_mtp,
    vllm_ngram,
    vllm_router,
    vllm_turboquant,
)
from memviz.core.engines.base import TORCH_CUDA_BASELINE_BYTES, Engine, Inputs, Option, compute_bytes
from memviz.core.engines.bitnet_linear import FORMAT as BITNET
from memviz.core.engines.vllm_compile import embedding_benchmark_bytes
from memviz.core.engines.vllm_cudagraphs import Captures, capture_sizes, captured_split_kv_bytes, fa3_split_kv
from memviz.core.engines.vllm_cudagraphs import cudagraph_bytes as cudagraph_estimate
from memviz.core.engines.vllm_dsa import index_buffer_bytes
from memviz.core.engines.vllm_eplb import MAX_EXPERT_REDUNDANCY, WINDOW_STEPS
from memviz.core.engines.vllm_flashinfer import (
    MLA_WORKSPACE_BYTES,
    MM_PREFIX_TYPES,
    builder_workspace_bytes,
    kernels_workspace_bytes,
    runs_flashinfer,
    runs_flashinfer_mla,
)
from memviz.core.engines.vllm_flashinfer import describe as describe_workspaces
from memviz.core.engines.vllm_gemma4_vision import SOFT_TOKEN_CHOICES, profiled_modality, vision_pass
from memviz.core.engines.vllm_kv import CHUNKED_LOCAL_TYPES, PER_HEAD_MLA, KVGroups, kv_groups, local_blocks, mla_attention
from memviz.core.engines.vllm_moe_workspace import EXPERTS, NONE, moe_kernel_workspace, moe_workspace_bytes
from memviz.core.engines.vllm_pipeline import check_shared_latent_stages, pipeline_split, receive_buffer_bytes
from memviz.core.engines.vllm_rotary import rotary_table_bytes, rotary_tables
from memviz.core.engines.vllm_sampler import (
    RUNNER_SAMPLERS,
    RUNNERS,
    SAMPLERS,
    default_sampler,
    flashinfer_refusal,
    sampler_bytes,
    sampler_label,
    v2_state_bytes,
)
from memviz.core.errors import InputError
from memviz.core.formats import BITSANDBYTES, STORED, get_weight_format, tensor_bytes
from memviz.core.gpus import FP8_NATIVE_CAPABILITY, GPU, MARLIN_MIN_CAPABILITY, get_gpu
from memviz.core.inventory import Role
from memviz.core.kv import KVLayout, kv_cache_bytes, per_token_layer_bytes
from memviz.core.tensor_table import TensorTable, tensor_table
from memviz.core.towers import GEMMA4_VISION, VISION, VisionShape, encoder_bytes, vision_shape
from memviz.core.units import GiB, MiB

NON_TORCH_BYTES = 64 * MiB
#: non-torch memory a tensor-parallel rank gains in its first forward on Hopper HGX boards (GPUs joined by NVSwitch),
#: beside NON_TORCH_BYTES: the 59 vLLM 0.19.0 start-ups on H100 SXM 80GB published with their DEBUG profile
#: (llm-d-incubation/llm-d-planner accuracy/results/v0.19.0/logs, commit d3121e0: "non-torch forward increase
#: memory") print 2.06-2.11 GiB at TP 2 and 2.13-2.21 at TP 4 against 0.24-0.27 at TP 1 and 0.07 under pipeline
#: parallelism, for models of 7B to 72B alike; vllm-project/vllm PR #10511's H100 start-ups of December 2024 show the
#: same step (non_torch_memory 1.79 GiB at TP 1, 3.58 at TP 2). The A100 / A800 logs of 0.10 and 0.11 show 0.12-0.18
#: GiB. NCCL buffers connected at the first large all-reduce (NCCL connects lazily from 2.22) are the likely holder;
#: not modelled for PCIe / NVL cards or Blackwell, for which no log was found
HOPPER_TP_NON_TORCH_BYTES = round(1.84 * GiB)
HOPPER_NVSWITCH_GPUS = frozenset({"h100-80g", "h800", "h20", "h200"})
#: Tensors (`Tensor.kind`) vLLM 0.33 holds whole on every tensor-parallel rank: MLA's q_a_proj and
#: kv_a_proj_with_mqa (deepseek_v2.py `DeepseekV2MLAAttention`: `DeepSeekV2FusedQkvAProjLinear`, disable_tp, or a
#: `ReplicatedLinear`; likewise minicpm3.py, sarvam.py, AXK1.py, bailing_moe_v3.py, openpangu.py, dots3_note) and
#: DeepSeek sparse attention's indexer (models/deepseek_v32/attention.py `DeepseekV32Indexer`, which DeepSeek-V3.2
#: and dots3 run, and deepseek_v2.py `Indexer`, GLM-MoE-DSA's: wq_b a `ReplicatedLinear`, wk and weights_proj one
#: `MergedColumnParallelLinear` with disable_tp); LongCat-Flash-Lite's n-gram projections (longcat_flash_ngram.py
#: `NgramEmbedding.oe_projection`, a plain parameter; its tables are one VocabParallelEmbedding, split)
REPLICATED_KINDS = frozenset({"q_a", "kv_a", "indexer_q_b", "indexer_k", "indexer_proj", "ngram_proj"})
#: the K and V projections `QKVParallelLinear` shards by KV head
KV_PROJECTION_KINDS = frozenset({"k", "v", "k_bias", "v_bias"})
#: the indexer's wk and weights_proj, fused unquantized (`Indexer.wk_weights_proj`: quant_config None; an FP8 wk
#: is dequantized to the model's dtype while loading)
UNQUANTIZED_KINDS = frozenset({"indexer_k", "indexer_proj"})
#: Mistral Large 4's latent projections, built without quant_config whatever the checkpoint
#: (vllm/models/mistral/nvidia/attention.py `MistralMLAAttention`: kv_a_proj_with_mqa a `ReplicatedLinear`, kv_b_proj
#: a `ColumnParallelLinear`, both `quant_config=None`)
MISTRAL_UNQUANTIZED_KINDS = frozenset({"kv_a", "kv_b"})
#: `compile_or_warm_up_model` suggests `--kv-cache-memory=` the pool less the graphs it captured and this margin
#: ("redundancy_buffer_memory", vLLM 0.33 gpu_worker.py); with the CUDA-graph estimate on, the pool already left
#: the estimated graphs out, so vLLM counts them twice (vllm-project/vllm issue #57936): memviz prints what vLLM
#: prints, as a start-up of a vLLM fork shows (wtdcode/vllm-backport issue #34: 22.03 GiB requested, 19.47 consumed,
#: 0.6 peak with a 0.58 estimate, 0.1 captured: "--kv-cache-memory=1828800984 (1.7 GiB)", a pool of 1.95 in use)
SUGGESTION_MARGIN_BYTES = 150 * MiB
NCCL_BYTES_PER_GPU = 256 * MiB
#: FP8 weight formats and whether their scales are 128 x 128 blocks; the GPUs where vLLM runs them on Marlin
FP8_BLOCK_SCALES = {"fp8": False, "fp8-channel": False, "fp8-block": True}
#: what `--quantization` makes of a 16-bit checkpoint while loading (`model_executor/layers/quantization/fp8.py`
#: `Fp8Config` with is_checkpoint_fp8_serialized False: per-tensor dynamic FP8)
QUANTIZE_ON_LOAD = {"fp8": "fp8"}
#: types vLLM 0.34 has no model for (model_executor/models/registry.py), which its Transformers backend cannot run
#: either (models/transformers/: self-attention layers only, no convolution, recurrent state or cross-attention; and
#: `ModelRegistry._try_resolve_transformers` takes only a class whose attention goes through transformers'
#: attention interface: `is_backend_compatible()` or `_can_set_attn_implementation()`, transformers 5.24). A type
#: missing from the registry but taking that interface (GPT-NeoX, Phi, OLMo 2, Persimmon, dots.llm1, ...) runs on
#: the backend, with the same weights and cache
NOT_IN_VLLM = {"bamba": "0.23 removed it (registry.py _PREVIOUSLY_SUPPORTED_MODELS)",
               "mllama_text_model": "0.10.2 removed MllamaForConditionalGeneration (Llama 3.2 Vision) with the V0 "
                                    "engine's encoder-decoder models (registry.py _PREVIOUSLY_SUPPORTED_MODELS)",
               "axk2": "its registry names AXK1ForCausalLM only, and memviz does not model the Transformers "
                       "backend's DSA cache",
               "kolibri1_1": "its registry names no Kolibri 1.1 class, and its Transformers backend cannot run the "
                             "indexed layers (Kolibri1_1Attention needs an explicit 4D mask, which the backend does not "
                             "pass: \"Sparse attention layers need an explicit 4D attention mask\")",
               "mpt": "0.28 removed it (registry.py _PREVIOUSLY_SUPPORTED_MODELS), and its Transformers backend "
                      "cannot take MptForCausalLM (MptAttention calls no attention interface: "
                      "`_try_resolve_transformers` finds it incompatible)",
               "gpt_neo": "its registry names no GPTNeoForCausalLM, and its Transformers backend cannot take it "
                          "(GPTNeoSelfAttention calls no attention interface: `_try_resolve_transformers` finds it "
                          "incompatible)"}
#: memviz's KV formats by vLLM 0.34's --kv-cache-dtype names (config/cache.py `CacheDType`: "int8" alone is none)
KV_CACHE_DTYPES = {"bf16": "auto", "fp16": "auto", "fp32": "auto", "fp8": "fp8", "int8": "int8_per_token_head",
                   "fp8_pth": "fp8_per_token_head", "int4_pth": "int4_per_token_head", "nvfp4": "nvfp4",
                   **{name: name for name in vllm_turboquant.PRESETS}}
#: the backend a quantized cache dtype runs on where --attention-backend is auto: the per-token-head caches only on
#: TRITON_ATTN (the one backend listing them in `supported_kv_cache_dtypes`, its `customize_spec` packing the
#: scales), NVFP4 only on FLASHINFER (its `customize_spec`; fa2 on compute capability 8, 9 and 12, TRT-LLM on 10)
KV_DTYPE_BACKENDS = {"int8": "TRITON_ATTN", "fp8_pth": "TRITON_ATTN", "int4_pth": "TRITON_ATTN",
                     "nvfp4": "FLASHINFER"}
#: types vLLM 0.34 runs from the release's Mistral-format files only (params.json, consolidated*.safetensors:
#: transformers_utils/configs/mistral.py `adapt_config_dict` makes them MistralLarge4ForCausalLM; the registry has no
#: class for transformers' MistralLarge4ForConditionalGeneration), which the launch command asks for
MISTRAL_FORMAT_ONLY = frozenset({"mistral_large4_text"})
#: the 16-bit caches named explicitly, where vLLM would make "auto" something else (`fp8_cache_for_auto`, float32
#: weights: `vllm_dtype`)
EXPLICIT_16_BIT = {"bf16": "bfloat16", "fp16": "float16"}


def fp8_cache_for_auto(a: Architecture, sc: Any) -> bool:
    """Whether vLLM 0.34 turns the cache dtype "auto" into FP8 for this model on the scenario's GPU: GLM-5 on compute
    capability 10.x (model_executor/models/config.py `GlmMoeDsaForCausalLM.verify_and_update_config`, "Using fp8
    kv-cache for GlmMoeDsaForCausalLM on SM10x"). A 16-bit cache is then asked for by name (`launch_command`)."""
    cc = sc.compute_capability
    return a.model_type == "glm_moe_dsa" and cc is not None and cc[0] == 10


#: `CacheConfig.DEFAULT_BLOCK_SIZE` (vllm/config/cache.py, 0.34; 16 before)
DEFAULT_BLOCK_TOKENS = 64
#: buffers multimodal classes allocate at load for a batch: (fact, what it is, what it holds), as the CLI and the
#: Breakdown name them
BATCH_BUFFERS = (("per_layer_embedding_bytes", "per-layer embeddings' buffer", "per-layer inputs (Gemma 3n / 4)"),
                 ("deepstack_buffer_bytes", "deepstack buffers", "deepstack features, one a level (Qwen3-VL)"))
#: --max-lora-rank's default (`config/lora.py` `LoRAConfig.max_lora_rank`)
DEFAULT_LORA_RANK = 16
#: `--attention-backend` values memviz takes for standard attention (vllm/v1/attention/backends/registry.py
#: `AttentionBackendEnum`); "auto" is vLLM's own choice (platforms/cuda.py `_get_backend_priorities`)
ATTENTION_BACKENDS = ("auto", "FLASH_ATTN", "TRITON_ATTN", "FLASHINFER", "FLEX_ATTENTION")
#: FLASH_ATTN's smallest kernel block (`get_supported_kernel_block_sizes`: MultipleOf(16)) and FlashInfer's GDN
#: checkpoint grid (vllm/v1/attention/backends/gdn_attn.py FLASHINFER_GDN_CHECKPOINT_ALIGNMENT), vLLM 0.33
KERNEL_BLOCK_TOKENS = 16
#: DeepSeek sparse attention (DeepSeek-V3.2, GLM-5) in vLLM 0.33: the indexer's cache backend takes 64-token
#: blocks on CUDA (v1/attention/backends/mla/indexer.py `get_supported_kernel_block_sizes`: [64]), so
#: `update_block_size_for_backend` makes the block 64; the latent in fp8_ds_mla rows of 656 bytes (512 FP8 values,
#: 4 fp32 scales, 64 bf16 rope values: layers/attention/mla_attention.py `get_kv_cache_spec` state_content_bytes)
#: where `_canonicalize_sparse_mla_kv_cache_dtype` picks it: FLASHMLA_SPARSE with a quantized cache (the one
#: sparse backend of compute capability 9 that takes fp8: flashattn_mla_sparse.py takes bf16 only) and
#: FLASHINFER_MLA_SPARSE_SM120 with any cache it takes (auto, fp8); on compute capability 10 FlashInfer's sparse
#: backend, first for fp8 (platforms/cuda.py `_get_backend_priorities`), keeps the plain 576-byte row
DSA_BLOCK_TOKENS = 64
DS_MLA_ROW_BYTES = 656
#: MiniMax-M3's block-sparse backend and indexer (vllm/models/minimax_m3/common/sparse_attention.py, indexer.py
#: `get_supported_kernel_block_sizes`: [128], "page size == sparse block size"); `update_block_size_for_backend`
#: takes the smallest block every backend accepts
MINIMAX_SPARSE_BLOCK_TOKENS = 128
GDN_CHECKPOINT_TOKENS = 64
#: storages a weight is held in unquantized (memviz's formats and safetensors dtypes, upper-cased)
UNQUANTIZED_STORAGES = frozenset({"BF16", "FP16", "F16", "FP32", "F32"})


#: MXFP4's values per scale byte; the Hopper swizzle's scale rows (`HopperMXScaleLayout` SWIZZLE_ALIGN_M =
#: 2 x num_warps x 2 x 8 at `_swizzle_mxfp4`'s num_warps 8)
MX_BLOCK = 32
HOPPER_SCALE_ROWS = 2 * 8 * 2 * 8


def mxfp4_moe_backend(gpu: GPU, gpt_oss: bool) -> tuple[str, int, int] | None:
    """(backend, per-rank intermediate size rounded up to, hidden size rounded up to) vLLM 0.33 picks for MXFP4
    experts on `gpu` (None: not an NVIDIA GPU memviz knows the capability of). gpt-oss's list tries the OAI
    Triton kernels (SM90 up to SM12x, after Marlin on SM12x) before Marlin; other models go to Marlin below SM100."""
    cap = gpu.compute_capability
    if cap is None or cap < (7, 5):
        return None
    if cap[0] == 10:
        return "FLASHINFER_TRTLLM", 128, 256
    if gpt_oss and cap[0] == 9:
        return "TRITON", 64, 1
    return "MARLIN", 128, 256


def batch_defaults(gpu_total_bytes: float | None, gpu_label: str = "",
                   capability: tuple[int, int] | None = None) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs) of `vllm serve` on a GPU of that size (`get_batch_defaults`: an A100,
    by name, and GB10, compute capability 12.1 with "the memory but not the compute of a large discrete GPU", keep
    the small tier)."""
    if gpu_total_bytes is not None and gpu_total_bytes >= 160 * GiB:
        return 16384, 1024
    if (gpu_total_bytes is not None and gpu_total_bytes >= 70 * GiB and "a100" not in gpu_label.lower()
            and capability != (12, 1)):
        return 8192, 1024
    return 2048, 256


@dataclass(frozen=True)
class EncoderPass:
    """The encoder pass of vLLM's profile run: `items` items of `modality`, `tokens_per_item` merged tokens each;
    the tower's peak over them and the outputs kept in the encoder cache through the language model's pass; the
    V1 runner keeps the dummy batch's inputs on the GPU too (`input_bytes`)."""

    modality: str
    items: int
    tokens_per_item: int
    peak_bytes: float
    kept_bytes: float
    input_bytes: float = 0.0
    chunk: int = 0  # frames / images a call of the tower takes, where vLLM chunks the pass (Gemma 4); 0: one call


#: where the runner's persistent profile buffers (the experts' workspace, a later stage's receive buffer) count
ACTIVATIONS, OVERHEAD = "activations", "overhead"


def buffers_in(s: dict[str, Any]) -> str:
    """V1 makes them in the profile run, whose torch peak holds them; V2 keeps them as consumed memory (its profile's
    `total_consumed`, or made at load)."""
    return ACTIVATIONS if s["model_runner"] == "v1" else OVERHEAD


def deepseek_sparse(a: Architecture) -> bool:
    """DeepSeek sparse attention on MLA (DeepSeek-V3.2, GLM-5) as vLLM's DeepSeek path runs it (dots3 pads its own
    rows: `Architecture.layer_kv_lora_ranks`)."""
    return a.is_mla and bool(a.indexer_head_dim) and not a.layer_kv_lora_ranks


def sparse_mla_packed(a: Architecture, sc: Any) -> bool:
    """Whether vLLM's sparse-MLA backend for the scenario's GPU keeps the latent in fp8_ds_mla rows
    (`DS_MLA_ROW_BYTES`): compute capability 9 with an FP8 cache, 12 always; an unnamed GPU keeps the plain row."""
    cc = sc.compute_capability
    if not deepseek_sparse(a) or cc is None:
        return False
    return cc[0] == 12 or (cc[0] == 9 and sc.kv_format == "fp8")


def sized_tower(a: Architecture) -> VisionShape | None:
    """The model's vision tower whose pass memviz sizes (`VisionShape.vllm_sized`); None for the others."""
    return next((v for e in a.encoders if e.modality == VISION and (v := vision_shape(e)) is not None
                 and v.vllm_sized), None)


def gemma4_tower(a: Architecture) -> VisionShape | None:
    """Gemma 4's vision tower, whose pass `vllm_gemma4_vision` sizes; None for other models."""
    return next((v for e in a.encoders if e.family == GEMMA4_VISION and (v := vision_shape(e)) is not None), None)


#: towers vLLM 0.34 builds with transformers' AutoModel, whole on every tensor-parallel rank: Gemma 4's, their
#: linear layers replicated (`recursive_replace_linear`, "replicate") and projected with `ReplicatedLinear`
#: (gemma4_mm.py `Gemma4ForConditionalGeneration`); Gemma 3n's, plain transformers / timm modules (gemma3n_mm.py
#: `Gemma3nForConditionalGeneration`), whose embedders alone vLLM splits (VocabParallelEmbedding, RowParallelLinear:
#: about 4 million parameters each for E4B, counted whole here)
REPLICATED_TOWERS = frozenset({GEMMA4_VISION, "gemma4_audio", "gemma3n_vision", "gemma3n_audio"})


def pixel_bytes(settings: dict[str, Any], act_bytes: int) -> int:
    """Bytes of one pixel value on the GPU: raw uint8 under mm_device_do_normalize (0.34 `FusedMMInputNorm`: "raw
    uint8 pixels travel to the device unprocessed"; the towers memviz sizes all support it), else the processor's
    normalised values in the model's dtype (multimodal/processing/context.py `_postprocess_output`)."""
    return 1 if settings["mm_device_do_normalize"] else act_bytes


def dummy_requests(settings: dict[str, Any]) -> int:
    """The requests `_dummy_run` spreads the profile's tokens over, one row of logits each for the sampler."""
    return min(settings["max_num_seqs"], settings["max_num_batched_tokens"])


def per_prompt_limit(settings: dict[str, Any], modality: str) -> int:
    """Items of `modality` a prompt may hold: --limit-mm-per-prompt, else vLLM's default of 999
    (config/multimodal.py `get_limit_per_prompt`)."""
    limit = settings.get(f"limit_{modality}")
    return 999 if limit is None else limit


def profiled_item(v: VisionShape, settings: dict[str, Any]) -> tuple[str, int] | None:
    """The modality vLLM's profile run encodes and the tokens of one item (multimodal/encoder_budget.py
    `MultiModalBudget.get_modality_with_max_tokens`): of the modalities the per-prompt limits leave, the one whose
    largest item has the most tokens, video on a tie; None when the limits leave none."""
    image = v.image_tokens(settings.get("mm_max_pixels"))
    tokens = {}
    if per_prompt_limit(settings, "image"):
        tokens["image"] = image
    if v.video_pairs and per_prompt_limit(settings, "video"):
        tokens["video"] = v.video_item_tokens(settings["max_model_len"], image)
    return max(tokens.items(), key=lambda kv: (kv[1], kv[0]), default=None)


def encoder_items(tokens_per_item: int, settings: dict[str, Any], limit: int = 999) -> int:
    """Items of the modality with the most tokens an item that vLLM 0.33's profile run encodes at once
    (multimodal/encoder_budget.py `MultiModalBudget._get_max_items`, v1/core/encoder_cache_manager.py
    `compute_mm_encoder_budget`): max(1, min(budget // its tokens, max_num_seqs x max(1, min(limit, max_model_len //
    its tokens)))), the budget max(max_num_batched_tokens, an item's tokens), `limit` the per-prompt limit. Without
    chunked prefill vLLM also caps the requests at max_num_batched_tokens // its tokens, which never lowers this."""
    budget = max(settings["max_num_batched_tokens"], tokens_per_item)
    per_prompt = max(1, min(limit, settings["max_model_len"] // tokens_per_item))
    return max(1, min(budget // tokens_per_item, settings["max_num_seqs"] * per_prompt))


def outside_budget_bytes(sc: Any, options: dict[str, Any]) -> float:
    """Device memory taken before vLLM's baseline snapshot, outside its budget: the CUDA context and cuBLAS handles,
    and NCCL buffers when the model spans several GPUs."""
    world = sc.tp * sc.pp * options["data_parallel_size"]
    return TORCH_CUDA_BASELINE_BYTES + (NCCL_BYTES_PER_GPU * world if world > 1 else 0)


class VLLM(Engine):
    name = "vllm"
    label = "vLLM (V1 engine): paged KV pool, chunked prefill, CUDA graphs"
    version = "vLLM 0.34.0"
    source = ("vllm-project/vllm 0.34.0: vllm/v1/worker/extensible_kv_cache.py measure_kv_cache_bytes, "
              "vllm/v1/worker/gpu_worker.py determine_available_memory, vllm/utils/mem_utils.py memory_profiling, "
              "vllm/v1/core/kv_cache_utils.py")
    options = (
        Option("max_model_len", int, None, "longest request (default: the scenario's context)", minimum=1),
        Option("max_num_seqs", int, None, "concurrent requests scheduled (default by GPU size)", minimum=1),
        Option("max_num_batched_tokens", int, None,
               "tokens per scheduler step (default: the scenario's prefill chunk, else by GPU size)", minimum=1),
        Option("enable_chunked_prefill", bool, True, "split long prompts over steps"),
        Option("enforce_eager", bool, False, "no CUDA graphs"),
        Option("extensible_kv_cache", bool, True, "size the pool from the memory measured after warm-up and CUDA-graph "
               "capture (vLLM 0.34's default; false: --no-enable-extensible-kv-cache, the profile-based sizing of "
               "every earlier release; kv_cache_memory_bytes turns it off)"),
        Option("estimate_cudagraphs", bool, True, "CUDA-graph memory taken from the KV budget before capture "
               "(VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS; on since v0.20, off in earlier releases; the extensible "
               "cache measures the graphs instead)"),
        Option("attention_backend", str, "auto", "--attention-backend: auto (vLLM's choice), FLASH_ATTN, TRITON_ATTN, "
               "FLASHINFER or FLEX_ATTENTION; where FLASH_ATTN runs FlashAttention 3 (Hopper) the CUDA graphs hold "
               "its split-KV buffers (MLA models: auto only)", choices=ATTENTION_BACKENDS),
        Option("sampler", str, None, "top-k / top-p sampler of the profile run: flashinfer (vLLM's choice on CUDA "
               "GPUs of compute capability 8.0 to 12.1), triton (elsewhere, or VLLM_USE_FLASHINFER_SAMPLER=0: its "
               "buffer of a vocabulary row per SM, which the V1 runner also warms beside FlashInfer's); flashinfer-only "
               "(V1 runner of releases before 0.21: no Triton warm-up; on V2 the same as flashinfer); V1 runner only: "
               "sort (releases before 0.17 without FlashInfer's: the PyTorch sort, 38 bytes a logit instead of 14); "
               "V2 runner only: greedy (0.22 to 0.32: the logits alone); default the one vLLM picks for the GPU",
               choices=SAMPLERS),
        Option("chunked_local_hybrid_kv", bool, True, "Llama 4's chunked layers keep only their chunk under the "
               "hybrid KV cache manager (VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE, 1 by default in 0.34; "
               "false: 0, the default of earlier releases such as v0.19: every layer caches max_model_len tokens, "
               "as it does beside a drafter)"),
        Option("num_speculative_tokens", int, 0, "speculative decoding (--speculative-config '{\"method\": ..., "
               "\"num_speculative_tokens\": k}'): tokens the drafter drafts a step, 0 off; its layers add their "
               "weights and a full-attention layer's cache each, and a hybrid model's state layers k state pages a "
               "request", minimum=0, maximum=16),
        Option("speculative_method", str, "mtp", "the drafter: mtp (the model's own MTP layers: DeepSeek-V3, GLM-4.5, "
               "Qwen3-Next, Qwen3.5) or eagle3 (an EAGLE-3 drafter checkpoint: one layer of the target's widths, its "
               "own head over draft_vocab_size tokens)", choices=vllm_eagle3.SPECULATIVE_METHODS),
        Option("mtp_16bit", bool, False, "the MTP draft layers in bf16 whatever the weight format, as a quantized "
               "checkpoint whose recipe leaves them out keeps them (the published NVFP4 Qwen3.6-27B and 35B-A3B "
               "checkpoints load 0.79 and 1.57 GiB more with MTP than without, their draft layer in bf16)"),
        Option("draft_intermediate_size", int, 0, "the EAGLE-3 drafter's MLP width (its config's intermediate_size; "
               "0: a dense target's own; an MoE target's drafter must be given it)", minimum=0),
        Option("draft_vocab_size", int, 0, f"the EAGLE-3 drafter's vocabulary (its config's draft_vocab_size; 0: "
               f"{vllm_eagle3.DRAFT_VOCAB:,d}, the released drafters')", minimum=0),
        Option("draft_model", str, "", "the EAGLE-3 drafter's folder or repository id, as the launch command's "
               "--speculative-config names it (memviz estimate --draft-config sets it with the drafter's widths)"),
        Option("model_runner", str, "v2", "vLLM's model runner: v2 (0.34's only runner; its sampler keeps a "
               "vocabulary row of counts per request slot) or v1 (VLLM_USE_V2_MODEL_RUNNER=0 up to 0.33, and most "
               "models before 0.29; profile-based sizing only)", choices=RUNNERS),
        Option("block_size", int, DEFAULT_BLOCK_TOKENS, "tokens per KV block (64 since 0.34, 16 before; "
               "DeepSeek-V4's recipes set 256)",
               choices=(1, 8, 16, 32, 64, 128, 256)),
        Option("enable_prefix_caching", bool, True, "reuse cached prompt prefixes (on by default since hybrid models "
               "support it; a delta-net model's state then keeps checkpoint blocks per request)"),
        Option("kv_cache_memory_bytes", int, None, "KV pool per GPU, e.g. 20GiB (--kv-cache-memory-bytes: the profile "
               "still runs, gpu_memory_utilization no longer sizes the pool)", minimum=1, memory=True),
        Option("cpu_offload_gb", float, 0.0, "GiB of weights per GPU kept in host memory", minimum=0),
        Option("data_parallel_size", int, 1, "engine replicas (--data-parallel-size), each on its own tp x pp GPUs "
               "with its own KV pool; MoE experts are split over all tp x dp GPUs", minimum=1, maximum=1024),
        Option("enable_expert_parallel", bool, False, "--enable-expert-parallel: each GPU holds whole MoE experts, "
               "the experts / (tp x dp) of its share, instead of a slice of every expert"),
        Option("cold_compile", bool, True, "the start compiles the model, no vLLM compile cache yet (0.12+: Inductor's "
               "kernel benchmark holds a random copy of the embedding table in the profile run; a profile-sized pool "
               "only)"),
        Option("in_flight_admission", bool, True, "a sliding-window or chunked layer admits its window or chunk and "
               "the tokens of every concurrent batch (max_in_flight_tokens, since 0.26); false: and one batch of "
               "max_num_batched_tokens, as releases before 0.26 did"),
        Option("persistent_moe_workspace", bool, True, "the fused-MoE experts' workspace kept from the first MoE "
               "layer on (vLLM's WorkspaceManager; off for releases before 0.14, whose 16-bit experts freed theirs)"),
        Option("enable_eplb", bool, False, "--enable-eplb: the expert-parallel load balancer (its maps and a layer's "
               "expert buffer on every GPU; models whose vLLM class implements MixtureOfExperts)"),
        Option("num_redundant_experts", int, 0, "--eplb-config num_redundant_experts: copies of experts spread "
               "with the others, (experts + copies) / (tp x dp) a GPU", minimum=0, maximum=MAX_EXPERT_REDUNDANCY),
        Option("eplb_window_size", int, WINDOW_STEPS, "--eplb-config window_size: steps of expert load the balancer "
               "keeps (an int32 per physical expert, MoE layer and step)", minimum=1, maximum=10_000_000),
        Option("language_model_only", bool, False, "a multimodal model without its encoders (--language-model-only: "
               "no image / audio inputs, the towers not loaded)"),
        Option("mm_max_pixels", int, None, "largest image in pixels (--mm-processor-kwargs max_pixels; Qwen-VL image "
               "processors; default the model folder's, else the released 12,845,056 / 16,777,216)", minimum=1),
        Option("mm_max_soft_tokens", int, None, "Gemma 4's tokens an image at most (--mm-processor-kwargs "
               "max_soft_tokens: 70, 140, 280, 560 or 1120; default the config's default_output_length, 280)",
               minimum=1),
        Option("limit_image", int, None, "images a prompt may hold (--limit-mm-per-prompt; default 999)", minimum=0),
        Option("limit_video", int, None, "videos a prompt may hold (--limit-mm-per-prompt; default 999)", minimum=0),
        Option("mm_device_do_normalize", bool, True, "pixels sent to the GPU as raw uint8 and normalised there "
               "(--mm-device-do-normalize, 0.28+, on for Qwen-VL and Gemma 3 / 4); off: in the model's dtype"),
        Option("skip_mm_profiling", bool, False, "--skip-mm-profiling: the profile run leaves the encoders' pass out "
               "(a larger pool; a batch with images may then run out of memory)"),
        Option("enable_lora", bool, False, "--enable-lora: slots for LoRA adapters in every linear layer, the experts "
               "and the embeddings the model class lists, and CUDA graphs with and without them"),
        Option("max_loras", int, None, "--max-loras: adapters a batch may use (default 1)", minimum=1),
        Option("max_lora_rank", int, None, "--max-lora-rank: 1, 8, 16, 32, 64, 128, 256, 320 or 512 (default 16)",
               minimum=1),
        Option("fully_sharded_loras", bool, False, "--fully-sharded-loras: a column layer's A and a row layer's B "
               "split over the tensor-parallel ranks too"),
        Option("lora_dtype", str, "auto", "--lora-dtype: auto (the model's), float16 or bfloat16",
               choices=("auto", "float16", "bfloat16")),
        Option("lora_target_modules", str, "", "--lora-target-modules: the modules given LoRA slots, apart by "
               "spaces or '+' (vLLM's names: qkv_proj or q_proj / k_proj / v_proj for all three, o_proj, gate_up_proj, "
               "down_proj, experts, embed_tokens, lm_head, ...; default every one)"),
    )
    attention_default = "flash"
    supports_tp = True
    quantizes_on_load = frozenset(QUANTIZE_ON_LOAD)

    # --- options resolved against the model, the GPU and the scenario ------------------
    def resolve(self, raw: dict[str, Any]) -> dict[str, Any]:
        """As `Engine.resolve`; sessions and command lines of memviz before December 2026 name the sampler with a
        boolean `flashinfer_sampler`, whose false meant the PyTorch sort."""
        if "flashinfer_sampler" in raw:
            raw = dict(raw)
            on = Option("flashinfer_sampler", bool, True, "").parse(raw.pop("flashinfer_sampler"))
            raw.setdefault("sampler", "flashinfer" if on else "sort")
        return super().resolve(raw)

    def settings(self, a: Architecture, sc: Any, options: dict[str, Any]) -> dict[str, Any]:
        gpu = sc.gpu_spec
        tokens, seqs = batch_defaults(gpu.cuda_total_bytes if gpu else None, gpu.label if gpu else "",
                                      gpu.compute_capability if gpu else None)
        s = dict(options)
        s["max_model_len"] = s["max_model_len"] or sc.longest_sequence
        s["max_num_seqs"] = s["max_num_seqs"] or seqs
        if not s["max_num_batched_tokens"]:
            chunk = sc.prefill_chunk_tokens or tokens
            s["max_num_batched_tokens"] = chunk if s["enable_chunked_prefill"] else max(s["max_model_len"], tokens)
        s["sampler"] = s["sampler"] or default_sampler(gpu)
        s["max_loras"] = s["max_loras"] or 1
        s["max_lora_rank"] = s["max_lora_rank"] or DEFAULT_LORA_RANK
        s["attention_backend_run"] = s["attention_backend"] if s["attention_backend"] != "auto" \
            else KV_DTYPE_BACKENDS.get(sc.kv_format, "auto")
        if vllm_turboquant.is_turboquant(sc.kv_format) and vllm_turboquant.hybrid(a):
            s["attention_backend_run"] = "TURBOQUANT"  # no boundary layers left on the default backend
        return s

    def accepts_weights(self, weight_format: str) -> bool:
        """Not GGUF files nor bitsandbytes formats: vLLM 0.34.0 has neither quantization method
        (model_executor/layers/quantization/__init__.py `QUANTIZATION_METHODS`; 0.19's wheel had gguf.py and
        bitsandbytes.py, 0.28's neither)."""
        return weight_format not in BITSANDBYTES and get_weight_format(weight_format).gguf_mix is None

    def check(self, a: Architecture, sc: Any, options: dict[str, Any]) -> None:
        super().check(a, sc, options)
        vllm_int4.check(a, sc.weight_format)
        if not self.accepts_weights(sc.weight_format):
            gguf = get_weight_format(sc.weight_format).gguf_mix is not None
            what, other = ("GGUF", "llama.cpp") if gguf else ("bitsandbytes", "transformers")
            raise InputError(f"vLLM 0.34 has no {what} quantization (model_executor/layers/quantization "
                             f"QUANTIZATION_METHODS: gone by 0.28); estimate {sc.weight_format} with {other}, or "
                             "choose a format vLLM loads")
        if BITNET in (sc.weight_format, a.native_format if sc.weight_format == STORED else ""):
            raise InputError("vLLM 0.34 has no BitNet quantization (model_executor/layers/quantization: no 'bitnet' "
                             "method); estimate its packed weights with transformers or a GGUF file with llama.cpp")
        s = self.settings(a, sc, options)
        if any(heads % sc.tp for heads in set(a.layer_heads) | {a.num_heads}):
            raise InputError(f"vLLM needs the {a.num_heads} attention heads divisible by tp ({sc.tp})")
        if a.num_kv_heads >= sc.tp and a.num_kv_heads % sc.tp:
            raise InputError(f"vLLM needs the {a.num_kv_heads} KV heads divisible by tp ({sc.tp})")
        if a.num_kv_heads < sc.tp and sc.tp % a.num_kv_heads:
            raise InputError(f"vLLM needs tp ({sc.tp}) to be a multiple of the {a.num_kv_heads} KV heads")
        if a.compress_ratios:
            raise InputError("memviz does not model vLLM's DeepSeek-V4 cache yet (vllm/models/deepseek_v4: its window, "
                             "compressed, indexer and compressor-state groups share pages of their own sizes); "
                             "estimate it with llama.cpp or transformers")
        if a.linear_mixer == KIMI_DELTA and a.state_layers:
            raise InputError("memviz does not model vLLM's Kimi Linear yet (vLLM 0.34 runs it with Kimi-K3's model, "
                             "vllm/models/kimi_k3/nvidia/model.py: the delta attention's conv and float32 states "
                             "share pages with the MLA layers' latents); estimate it with llama.cpp or transformers")
        if a.model_type in NOT_IN_VLLM:
            raise InputError(f"vLLM 0.34 does not run {a.model_type}: {NOT_IN_VLLM[a.model_type]}")
        if LINEAR in a.layer_types and FULL not in a.layer_types and a.attends:
            raise InputError("vLLM sizes a hybrid model's state pages by its full-attention layers; this model's "
                             "attention layers all slide, which memviz does not model")
        if a.state_layers and a.linear_mixer == MAMBA2:
            if a.linear_v_heads % sc.tp or (a.linear_k_heads % sc.tp and a.linear_k_heads != 1):
                raise InputError(f"vLLM needs the Mamba2 layers' {a.linear_v_heads} heads divisible by tp ({sc.tp}) "
                                 f"and their {a.linear_k_heads} groups too, or one group (MambaMixer2)")
        elif a.state_layers and a.linear_mixer == MAMBA:
            # model_executor/layers/mamba/mamba_mixer.py `MambaMixer` splits d_inner over ranks (Jamba),
            # mamba_utils.py `mamba1_state_shape` `divide`s it
            if a.linear_conv_dim % sc.tp:
                raise InputError(f"vLLM needs the Mamba layers' {a.linear_conv_dim} channels divisible by tp ({sc.tp})")
        elif a.state_layers and a.linear_mixer == SHORTCONV:
            # model_executor/layers/mamba/short_conv.py `ShortConv` splits in_proj and the convolution over ranks,
            # mamba_utils.py `short_conv_state_shape` `divide`s the channels
            if a.linear_conv_dim % sc.tp:
                raise InputError(f"vLLM needs the short convolution's {a.linear_conv_dim} channels divisible by tp "
                                 f"({sc.tp})")
        elif a.state_layers and (a.linear_k_heads % sc.tp or a.linear_v_heads % sc.tp):
            raise InputError(f"vLLM needs the delta-net's {a.linear_k_heads} key and {a.linear_v_heads} value heads "
                             f"divisible by tp ({sc.tp})")
        if sc.kv_format not in KV_CACHE_DTYPES:
            raise InputError(f"vLLM has no KV cache dtype {sc.kv_format!r}; it takes {', '.join(KV_CACHE_DTYPES)}")
        vllm_eplb.check(a, options, sc.tp * options["data_parallel_size"])
        self._check_speculative(a, sc.pp, options)
        self._check_lora(a, sc.tp, options, s)
        if (options["sampler"] or "").startswith("flashinfer") and (
                why := flashinfer_refusal(sc.gpu_spec)):
            raise InputError(f"{why} (vLLM 0.34 flashinfer_sampler_supported); the default sampler there is triton")
        if s["model_runner"] == "v1" and self.measured(options):
            raise InputError("vLLM 0.34 has only the V2 model runner; the V1 runner (VLLM_USE_V2_MODEL_RUNNER=0, 0.33 "
                             "and earlier) sizes its pool by profile: set extensible_kv_cache false with it")
        if a.ngram_embedders and s["model_runner"] != "v2":
            raise InputError("LongCat-Flash-Lite runs on vLLM's V2 model runner only (longcat_flash_ngram.py "
                             "`get_model_state_cls`: its n-gram inputs live in the V2 model state)")
        vllm_dtype.check(a, sc)
        self._check_kv_dtype(a, sc, options["attention_backend"])
        self._check_attention_backend(a, sc, s["attention_backend_run"])  # a cache dtype's backend too
        if s["sampler"] not in RUNNER_SAMPLERS[s["model_runner"]]:
            raise InputError(f"vLLM's {s['model_runner'].upper()} model runner has no {s['sampler']!r} sampler step; "
                             f"it takes {', '.join(RUNNER_SAMPLERS[s['model_runner']])}")
        if deepseek_sparse(a):
            self._check_sparse_mla(sc)
        if a.model_type == "mistral_large4_text":
            check_shared_latent_stages(a, sc.pp)
        if sc.longest_sequence > s["max_model_len"]:
            raise InputError(f"a sequence of {sc.longest_sequence:,d} tokens exceeds max_model_len {s['max_model_len']:,d}")
        if not s["enable_chunked_prefill"] and s["max_num_batched_tokens"] < s["max_model_len"]:
            raise InputError("without chunked prefill vLLM needs max_num_batched_tokens >= max_model_len")
        self._check_multimodal(a, s)

    @staticmethod
    def _check_sparse_mla(sc: Any) -> None:
        """vLLM 0.33's sparse-MLA backends (platforms/cuda.py `_get_backend_priorities`): FLASH_ATTN_MLA_SPARSE,
        FLASHMLA_SPARSE and FlashInfer's on compute capability 9 and 10, FlashInfer's SM120 one on 12; none
        elsewhere, and none keeps an int8 cache (their `supported_kv_cache_dtypes`)."""
        cc = sc.compute_capability
        if cc is not None and cc[0] not in (9, 10, 12):
            raise InputError(f"vLLM 0.34 has no sparse-MLA attention backend for compute capability {cc[0]}.{cc[1]} "
                             "(DeepSeek-V3.2 / GLM-5 run on Hopper, Blackwell and SM120 GPUs)")
        if sc.kv_format not in ("bf16", "fp8"):
            raise InputError(f"vLLM's sparse-MLA backends keep a bf16 or fp8 cache, not {sc.kv_format}")

    @staticmethod
    def _check_speculative(a: Architecture, pp: int, options: dict[str, Any]) -> None:
        """The drafter vLLM would load (`vllm_mtp.check`, `vllm_eagle3.check`); its settings need draft tokens."""
        eagle3 = options["speculative_method"] == "eagle3"
        given = [k for k in ("draft_intermediate_size", "draft_vocab_size", "draft_model") if options[k]]
        if (eagle3 or given) and not options["num_speculative_tokens"]:
            raise InputError(f"{', '.join(given) or 'speculative_method eagle3'} set without num_speculative_tokens: "
                             "vLLM runs no drafter then")
        if given and not eagle3:
            raise InputError(f"{', '.join(given)} shape an EAGLE-3 drafter: set speculative_method eagle3")
        if options["mtp_16bit"] and (eagle3 or not options["num_speculative_tokens"]):
            raise InputError("mtp_16bit sets the MTP draft layers' weights: it needs num_speculative_tokens with "
                             "speculative_method mtp")
        if options["num_speculative_tokens"] and eagle3:
            vllm_eagle3.check(a, options, pp)
        elif options["num_speculative_tokens"]:
            vllm_mtp.check(a, options["num_speculative_tokens"])

    @staticmethod
    def _check_lora(a: Architecture, tp: int, options: dict[str, Any], s: dict[str, Any]) -> None:
        """LoRA's settings need --enable-lora (vLLM ignores them without); with it, what vLLM refuses
        (`vllm_lora.check`)."""
        if options["enable_lora"]:
            vllm_lora.check(a, s["max_loras"], s["max_lora_rank"], tp, options["fully_sharded_loras"],
                            vllm_lora.parse_targets(options["lora_target_modules"]))
            return
        given = [k for k in ("max_loras", "max_lora_rank", "fully_sharded_loras", "lora_target_modules") if options[k]]
        if given or options["lora_dtype"] != "auto":
            raise InputError(f"{', '.join(given) or 'lora_dtype'} set without enable_lora: vLLM serves no LoRA "
                             "adapters then")

    @staticmethod
    def _check_multimodal(a: Architecture, s: dict[str, Any]) -> None:
        """max_pixels needs an image processor that reads it; limits that leave a sized tower no input are
        --language-model-only's effect (`_mark_tower_model` skips the tower), which that option models."""
        if s["language_model_only"]:
            return
        v = sized_tower(a)
        if s["mm_max_pixels"] is not None and (v is None or not v.unit):
            raise InputError("mm_max_pixels is read by Qwen-VL image processors (Qwen2-VL to Qwen3.5); "
                             "this model has none (its images, if any, have one fixed size)")
        g = gemma4_tower(a)
        soft = s["mm_max_soft_tokens"]
        if soft is not None and (g is None or soft not in SOFT_TOKEN_CHOICES):
            raise InputError("mm_max_soft_tokens is read by Gemma 4's image processor and takes "
                             f"{', '.join(map(str, SOFT_TOKEN_CHOICES))}" + ("" if g else "; this model has no Gemma 4 tower"))
        none_left = g is not None and not profiled_modality(g, per_prompt_limit(s, "image"), per_prompt_limit(s, "video"))
        if none_left or v is not None and profiled_item(v, s) is None:  # also refuses a max_pixels below one token
            raise InputError("limit_image / limit_video of 0 leave the vision tower no input: vLLM then does not "
                             "load it; that is language_model_only, which memviz models")

    # --- the model of the engine --------------------------------------------------------
    def runs_as(self, a: Architecture, options: dict[str, Any]) -> Architecture:
        """Llama 4's chunked local attention stays chunked under the hybrid KV cache manager, which vLLM 0.34 keeps on
        for it (envs.py: VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE defaults to 1); config/vllm.py
        `VllmConfig.__post_init__` turns the manager off where the variable is 0 (the default of earlier releases:
        "a latency regression") or a drafter reads the target's hidden states (`uses_target_hidden_states`: MTP,
        EAGLE-3), and `unify_hybrid_kv_cache_specs` (v1/core/kv_cache_planning.py) then promotes every
        ChunkedLocalAttentionSpec to a FullAttentionSpec: each layer holds max_model_len tokens a request. A
        published v0.19 start-up of Llama-4-Scout on four H100s gives that case: 16.75 GiB for 365,968 tokens, every
        one of its 48 layers caching each token (llm-d-planner accuracy/results/v0.19.0)."""
        hybrid = options["chunked_local_hybrid_kv"] and not options["num_speculative_tokens"]
        if a.model_type not in CHUNKED_LOCAL_TYPES or SLIDING not in a.layer_types or hybrid:
            return a
        return a.windows_in_full()

    def stages(self, x: Inputs) -> list[range]:
        return pipeline_split(x.a.num_layers, x.sc.pp, x.a.block_layers)

    def kv_layout(self, x: Inputs) -> KVLayout:
        return self._layout(x, self.hybrid_block(x)[0])

    @staticmethod
    def _layout(x: Inputs, block_tokens: int = 0) -> KVLayout:
        """MLA's latent (dots3's full layers padded to its sliding layers' width; Mistral Large 4's NoPE layers as
        wide as its RoPE layers, their rope part zero: vllm/models/mistral/nvidia/attention.py `MistralMLAAttention`),
        KV heads over the TP ranks; DeepSeek sparse attention's indexer keys in FP8 with scales, MiniMax-M3's in
        bfloat16."""
        widest = bool(x.a.layer_kv_lora_ranks or x.a.nope_layers)
        native = vllm_turboquant.boundary_layers(x.a) if vllm_turboquant.is_turboquant(x.kvf.name) else frozenset()
        return KVLayout(latent_mla=mla_attention(x.a), block_tokens=block_tokens, kv_heads_divisor=x.sc.tp,
                        indexer_fp8=x.a.is_mla, indexer_bf16=not x.a.is_mla, latent_widest=widest,
                        v_as_wide_as_k=x.a.model_type in PER_HEAD_MLA,
                        latent_row_bytes=DS_MLA_ROW_BYTES if sparse_mla_packed(x.a, x.sc) else 0,
                        native_layers=native, native_bits=8 * x.act_bytes)

    def linear_state_bytes(self, x: Inputs) -> int:
        """One delta-net, Mamba, Mamba2 or short-convolution layer's state on this rank, unpadded
        (vllm/model_executor/layers/mamba/mamba_utils.py `gated_delta_net_state_shape` / `mamba1_state_shape` /
        `mamba2_state_shape` / `short_conv_state_shape` and `_mamba_state_dtype`; LFM2's has no recurrent part): the
        convolution's last kernel - 1 inputs over its channels in the model's dtype (mamba_cache_dtype "auto"), and
        value heads x value x key values (Mamba2: heads x head width x d_state; Mamba: d_inner x d_state) in the
        config's mamba_ssm_dtype (Qwen3.5's released configs: float32), else the model's dtype (Qwen3-Next,
        Granite-4.0-H, Jamba: mamba_ssm_cache_dtype "auto"). With speculative decoding a delta-net's or Mamba2's
        convolution keeps the drafted tokens' inputs too: kernel - 1 + num_speculative_tokens columns (`num_spec`, which
        vLLM 0.34's qwen3_5.py / qwen3_next.py / nemotron_h.py / granitemoehybrid.py / falcon_h1.py / mamba2.py pass; Jamba's
        Mamba and LFM2's short convolution do not)."""
        a, tp = x.a, x.sc.tp
        act = x.act_bytes
        ssm = 4 if a.linear_state_dtype == "float32" else 2 if a.linear_state_dtype else act
        conv_dim = a.linear_conv_dim
        if a.linear_mixer == MAMBA2 and a.linear_k_heads % tp:  # `mamba2_state_shape`: a single group of B and C is
            conv_dim += 2 * (tp - a.linear_k_heads) * a.linear_k_head_dim  # repeated on every rank
        drafted = x.options["num_speculative_tokens"] if a.linear_mixer in (DELTANET, MAMBA2) else 0
        conv = conv_dim // tp * (a.linear_conv_kernel - 1 + drafted) * act
        return conv + a.linear_v_heads // tp * a.linear_v_head_dim * a.linear_k_head_dim * ssm

    def linear_state_held_bytes(self, x: Inputs) -> int:
        """The pages of the pool a delta-net layer takes per request (`hybrid_block`)."""
        _, page, blocks = self.hybrid_block(x)
        return page * blocks

    def gdn_checkpoints(self, x: Inputs) -> bool:
        """Whether a delta-net layer exports prefill checkpoints: with prefix caching ("align" mode) and FlashInfer's
        GDN prefill, which vLLM 0.33 picks on Hopper (`_resolve_gdn_prefill_backend`; on Blackwell it needs a CUDA 13
        runtime, not assumed here); then its blocks sit on a 64-token grid and a request keeps one block more."""
        gpu = x.sc.gpu_spec
        return bool(x.options["enable_prefix_caching"] and gpu and (gpu.compute_capability or (0,))[0] == 9
                    and x.a.linear_mixer == DELTANET)  # MambaMixer2 exports no checkpoints (no alignment)

    def hybrid_block(self, x: Inputs) -> tuple[int, int, int]:
        """(tokens a block, a delta-net layer's page, the pages one request takes per layer) as vLLM 0.33 sizes them
        (vllm/platforms/interface.py `_align_hybrid_block_size`): the attention block grows to the smallest multiple
        of the kernel block (16, FLASH_ATTN; lcm with FlashInfer's 64-token checkpoint grid) whose page holds the
        state, and the state page is padded to it; a request takes 1 page per layer, 2 with prefix caching (the
        running and the cached state), 3 with checkpoints (`MambaSpec.max_memory_usage_bytes`), and one more for each
        drafted token (layers/mamba/abstract.py `get_kv_cache_spec`: num_speculative_blocks = num_speculative_tokens,
        whatever the layer's mixer)."""
        block = x.options["block_size"]
        if x.a.block_indexer:  # MINIMAX_M3_SPARSE and its indexer take pages of one sparse block only
            block = lcm(block, MINIMAX_SPARSE_BLOCK_TOKENS)
        if deepseek_sparse(x.a):
            block = lcm(block, DSA_BLOCK_TOKENS)
        if not x.a.state_layers:
            return block, 0, 1
        drafted = x.options["num_speculative_tokens"]
        if not x.a.attends:  # attention-free (Mamba, Mamba2): one state page a layer, unpadded; prefix caching is off
            # by default (config/model.py `is_prefix_caching_supported`), so a block is max_model_len tokens
            # (models/config.py `MambaModelConfig`) and a request holds one and one a drafted token
            # (`MambaSpec.max_memory_usage_bytes`)
            return self.settings(x.a, x.sc, x.options)["max_model_len"], self.linear_state_bytes(x), 1 + drafted
        layout = self._layout(x)
        attn = int(per_token_layer_bytes(x.a, x.kvf, layout, x.a.layer_types.index(FULL)))
        checkpoints = self.gdn_checkpoints(x)
        align = lcm(max(KERNEL_BLOCK_TOKENS, block), GDN_CHECKPOINT_TOKENS if checkpoints else 1)
        need = align * ceil(self.linear_state_bytes(x) / (align * attn))
        block = max(block, KERNEL_BLOCK_TOKENS * ceil(need / KERNEL_BLOCK_TOKENS))
        per_request = (2 + checkpoints if x.options["enable_prefix_caching"] else 1) + drafted
        return block, block * attn, per_request

    def activations(self, x: Inputs, last_stage: bool, streamed_layer_bytes: float,
                    first_stage: bool = True, loaded_bytes: float = 0.0) -> np.ndarray:
        """Torch peak increase of the profile run on one rank (`profile_run`); with the extensible KV cache, or of a
        sizing step where its prompt logprobs take more (`vllm_extensible`). With data parallelism the DP ranks
        run their dummy batches together (`_dummy_run`, `coordinate_batch_across_dp`) and the MoE layers gather every
        rank's tokens before the experts (fused_moe/prepare_finalize/naive_dp_ep.py, the default
        allgather_reducescatter all2all backend's `dispatch`, no chunking in 0.33's modular kernel): the routed
        experts' workspace is dp x the tokens', each expert's intermediate as the GPU holds it (`moe_parallel`),
        beside the gathered input as the dispatch sends it (`dispatch_value_bytes`). The experts' workspace stays
        allocated from the first MoE layer on (`moe_workspace`): V1's profile peak holds it beside the later layers and
        the sampler step; the V2 runner's profile counts it as consumed (`stage_runtime_bytes`). A first stage that
        compiles the model on a cold start holds at least the compile's kernel benchmark (`compile_benchmark_bytes`);
        its encoder pass (`encoder_pass`) may depend on the memory `loaded_bytes` (its weights) leaves free."""
        a, sc = x.a, x.sc
        s = self.settings(a, sc, x.options)
        tokens = s["max_num_batched_tokens"]
        act_bytes = x.act_bytes
        dp = x.options["data_parallel_size"]
        workspace, kind = self.moe_workspace(x, s)
        held = workspace if buffers_in(s) == ACTIVATIONS else 0.0  # V2: consumed memory (`stage_runtime_bytes`)
        scratch = workspace and kind == EXPERTS  # else the kernel's own, per call
        ws = inference_workspace(a, tokens, tokens, 1, "flash", act_bytes, 0, 0, sc.tp, recurrent_cores=False,
                                 moe_gather=dp, moe_tp=self.moe_parallel(x)[1],
                                 moe_gather_bytes=self.dispatch_value_bytes(x) if dp > 1 else None,
                                 routed_bytes=held if scratch else None)
        attention = ws.attention + self.mla_profile_context_bytes(x, s) + held
        peak = ws.hidden + np.maximum(np.maximum(attention, ws.mlp), ws.logits + held)
        if last_stage:
            hidden = tokens * a.hidden_size * act_bytes + held
            peak = np.maximum(peak, hidden + self.sampler_step_bytes(x, s))
            if self.measured(x.options):  # a sizing step's prompt logprobs (`vllm_extensible`)
                prompt = min(tokens, s["max_model_len"] - 1)
                peak = max(peak, hidden + vllm_extensible.prompt_logprob_chunk_bytes(prompt, a.output_rows, act_bytes))
        if self.measured(x.options):
            peak = max(peak, self.mla_context_step_bytes(x, s) + held)
        if not first_stage and buffers_in(s) == ACTIVATIONS:  # made in the profile run's forward (`vllm_pipeline`)
            peak = peak + receive_buffer_bytes(a, tokens, act_bytes)
        if first_stage:
            peak = np.maximum(peak, self.compile_benchmark_bytes(x, s))
            peak = np.maximum(peak, vllm_ngram.input_peak_bytes(a, tokens, act_bytes))
        encoder = self.encoder_pass(x, s, loaded_bytes) if first_stage and not s["skip_mm_profiling"] else None
        if encoder is not None:
            peak = max(peak + encoder.kept_bytes + encoder.input_bytes, encoder.peak_bytes)
        return x.zeros + peak

    def compile_benchmark_bytes(self, x: Inputs, s: dict[str, Any]) -> float:
        """The embedding kernel's benchmark in a cold compile, on the first stage (`vllm_compile`); none where it
        does not apply: a measured pool, enforce_eager, a warm compile cache, embeddings outside the compiled graph
        (a multimodal model with its encoders)."""
        a, o = x.a, x.options
        if (self.measured(o) or o["enforce_eager"] or not o["cold_compile"]
                or (a.encoders and not s["language_model_only"])):
            return 0.0
        return embedding_benchmark_bytes(a, x.sc.tp, s["max_num_batched_tokens"], x.act_bytes)

    def mla_profile_context_bytes(self, x: Inputs, s: dict[str, Any]) -> float:
        """What an MLA layer allocates in the profile run, which has no attention metadata, to stand for the largest
        up-projected context (layers/attention/mla_attention.py `MLAAttention.forward_impl`: "simulate to worse case
        output size for `self.kv_b_proj(kv_c_normed)` in `_compute_prefill_context`"): the chunked-prefill
        workspace's tokens x the rank's heads x (nope + v) in the model's dtype, beside the layer's own tensors."""
        a = x.a
        if not mla_attention(a) or a.compress_ratios:
            return 0.0
        tokens = vllm_extensible.mla_context_tokens(s["max_model_len"], s["max_num_seqs"], self.hybrid_block(x)[0])
        width = max(a.layer_num_heads(i) // x.sc.tp * (a.layer_nope_dim(i) + a.v_head_dim) for i in range(a.num_layers))
        return float(tokens * width * x.act_bytes)

    def mla_context_step_bytes(self, x: Inputs, s: dict[str, Any]) -> float:
        """The MLA context-prefill sizing step on one rank (`vllm_extensible`): a workspace of context tokens
        up-projected by one layer, K-nope and V of its heads on the rank beside K (nope and rope). DeepSeek sparse
        attention reads its latent through the indexer's selection instead: none."""
        a = x.a
        if not mla_attention(a) or deepseek_sparse(a):
            return 0.0
        tokens = vllm_extensible.mla_context_tokens(s["max_model_len"], s["max_num_seqs"], self.hybrid_block(x)[0])
        widths = [a.layer_num_heads(i) // x.sc.tp * (2 * a.layer_nope_dim(i) + a.v_head_dim + a.qk_rope_head_dim)
                  for i in range(a.num_layers) if a.layer_caches_kv(i)]
        return float(tokens * max(widths, default=0) * x.act_bytes)

    @staticmethod
    def sampler_step_bytes(x: Inputs, s: dict[str, Any]) -> float:
        """The sampler step of the profile run (`_dummy_sampler_run`): a row of logits for each of
        min(max_num_seqs, max_num_batched_tokens) dummy requests, as the sampler `s` names holds them (`vllm_sampler`)."""
        gpu = x.sc.gpu_spec
        return sampler_bytes(s["sampler"], dummy_requests(s), x.a.output_rows, gpu.sm_count if gpu else None,
                             s["model_runner"])

    def stage_runtime_bytes(self, x: Inputs, layers: range, last_stage: bool) -> float:
        """Buffers allocated when the model is loaded, which the profile counts as consumed memory: DeepSeek sparse
        attention's top-k index buffers on every stage (`vllm_dsa`); on the V2 model runner its sampler state on the
        last (`vllm_sampler.v2_state_bytes`), its buffer for the previous stage's tensors on every stage after the
        first (`vllm_pipeline`), LongCat-Flash-Lite's inputs_embeds buffer on the first (`vllm_ngram`) and the experts'
        workspace (`moe_workspace`); V1 makes the receive buffer and the workspace in the profile run
        (`activations`)."""
        s = self.settings(x.a, x.sc, x.options)
        if buffers_in(s) != OVERHEAD:
            return float(self.index_buffers(x, s, layers))
        tokens = s["max_num_batched_tokens"]
        first = vllm_ngram.input_buffer_bytes(x.a, tokens, x.act_bytes) if layers.start == 0 else 0.0
        receive = receive_buffer_bytes(x.a, tokens, x.act_bytes) if layers.start > 0 else 0
        return float(self.index_buffers(x, s, layers) + (self.sampler_state(x, s) if last_stage else 0) + receive
                     + self.moe_workspace(x, s)[0] + first)

    @staticmethod
    def index_buffers(x: Inputs, s: dict[str, Any], layers: range) -> int:
        """DeepSeek sparse attention's top-k index buffers on a rank holding `layers` (`vllm_dsa`)."""
        return index_buffer_bytes(x.a, layers, s["max_num_batched_tokens"], s["max_num_seqs"],
                                  1 + s["num_speculative_tokens"], x.act_bytes)

    @staticmethod
    def sampler_state(x: Inputs, s: dict[str, Any]) -> int:
        """The V2 model runner's sampler state (`vllm_sampler.v2_state_bytes`); none with the V1 runner."""
        if s["model_runner"] != "v2":
            return 0
        return int(v2_state_bytes(s["max_num_seqs"], x.a.output_rows, 1 + s["num_speculative_tokens"]))

    @staticmethod
    def dispatch_value_bytes(x: Inputs) -> float:
        """Bytes a value of the MoE input the DP ranks gather: FP8 experts on a GPU with FP8 arithmetic take their
        input quantized before the dispatch (prepare_finalize/naive_dp_ep.py `_quantize_and_setup_dispatch`): one
        byte and an fp32 scale a 128-value block (block scales) or a token (per-tensor or per-channel weights,
        dynamic per-token activations); otherwise the model dtype. Expert kernels that quantize their input themselves
        (`expects_unquantized_inputs`: FlashInfer's CUTLASS, AITER) take it in 16 bits; memviz does not tell the
        backends apart."""
        storages = {s for t, s, _ in tensor_bytes(x.a, x.wf) if t.role is Role.EXPERT}
        cap = x.sc.compute_capability
        if len(storages) != 1 or (fp8 := next(iter(storages))) not in FP8_BLOCK_SCALES or (
                cap is not None and cap < FP8_NATIVE_CAPABILITY):
            return float(x.act_bytes)
        width = x.a.moe_hidden_size or x.a.hidden_size
        return 1 + 4 * (-(-width // 128) if FP8_BLOCK_SCALES[fp8] else 1) / width

    def encoder_pass(self, x: Inputs, s: dict[str, Any], loaded_bytes: float = 0.0) -> EncoderPass | None:
        """The encoder pass `profile_run` makes before the language model's (vllm 0.33 gpu_model_runner.py):
        `encoder_items` items of the profiled modality's largest size in one batch, their outputs kept in the
        encoder cache through the language model's pass. Sized for the towers `sized_tower` gives (Qwen2-VL
        to Qwen3.5, Gemma 3) and Gemma 4's (`vllm_gemma4_vision`, in chunks of what the memory `loaded_bytes`
        leaves free allows); None for others, under --language-model-only, and when the limits leave no input."""
        if self.encoder_place(x) != "device":
            return None
        if (g := gemma4_tower(x.a)) is not None:
            return self._gemma4_pass(x, s, g, loaded_bytes)
        v = sized_tower(x.a)
        item = profiled_item(v, s) if v is not None else None
        if item is None:
            return None
        modality, tokens = item
        items = encoder_items(tokens, s, per_prompt_limit(s, modality))
        # V1 moves the batch to the GPU before the pass and holds it to the end of `profile_run`
        # (`batched_dummy_mm_inputs`, 0.19-0.24 gpu_model_runner.py): patches x a patch's values; V2's
        # `execute_mm_encoder` frees it
        pixel = pixel_bytes(s, x.act_bytes)
        pixels = items * tokens * v.patches / v.tokens * v.pixels * pixel if s["model_runner"] == "v1" else 0.0
        return EncoderPass(modality, items, tokens, v.peak_bytes(items * tokens, x.act_bytes, x.sc.tp, pixel),
                           v.output_bytes(items * tokens, x.act_bytes), pixels)

    def _gemma4_pass(self, x: Inputs, s: dict[str, Any], g: VisionShape, loaded_bytes: float) -> EncoderPass | None:
        """Gemma 4's pass (`vllm_gemma4_vision`), the memory free as it starts the CUDA total less the context and
        NCCL, what the rank loaded and the buffers made with it (`load_buffer_bytes`, `stage_runtime_bytes`); one chunk
        where no GPU is named."""
        item = profiled_modality(g, per_prompt_limit(s, "image"), per_prompt_limit(s, "video"), s["mm_max_soft_tokens"])
        if item is None:
            return None
        modality, tokens = item
        items = encoder_items(tokens, s, per_prompt_limit(s, modality))
        gpu = x.sc.gpu_spec
        made = self.load_buffer_bytes(x) + self.stage_runtime_bytes(x, self.stages(x)[0], x.sc.pp == 1)
        memory = None if gpu is None else (
            gpu.cuda_total_bytes - outside_budget_bytes(x.sc, x.options) - loaded_bytes - made, float(gpu.cuda_total_bytes))
        p = vision_pass(g, modality, items, x.act_bytes, pixel_bytes(s, x.act_bytes), memory, tokens)
        return EncoderPass(modality, items, tokens, p.peak_bytes, p.kept_bytes,
                           p.input_bytes if s["model_runner"] == "v1" else 0.0, p.chunk)

    @staticmethod
    def rotary_table_bytes(x: Inputs) -> float:
        """The rotary tables every rank holds (`vllm_rotary`). vLLM's "Model loading took" includes them
        (Llama-3.1-8B: 14.9889 GiB = the weights' 14.9575 GiB + 32 MiB; Gemma-3-4B: 8.58 GiB, 0.56 GiB of it two
        tables, the full layers' for 8x the positions); memviz keeps the weights to the checkpoint's bytes and counts
        them as runtime."""
        return rotary_table_bytes(x.a, x.act_bytes)

    def per_layer_embedding_bytes(self, x: Inputs) -> float:
        """The buffer Gemma 3n's and Gemma 4's multimodal classes allocate at load for a batch's per-layer embeddings
        (gemma3n_mm.py / gemma4_mm.py `__init__`: "Pre-allocate PLE buffer for CUDA graph compatibility"):
        max_num_batched_tokens x layers x hidden_size_per_layer_input in the model's dtype, on every rank, with
        --language-model-only too; "Model loading took" includes it. The text-only classes (Gemma3nForCausalLM,
        Gemma4ForCausalLM) have none."""
        a = x.a
        if not (a.per_layer_input_size and a.encoders):
            return 0.0
        tokens = self.settings(a, x.sc, x.options)["max_num_batched_tokens"]
        return float(tokens * a.num_layers * a.per_layer_input_size * x.act_bytes)

    def deepstack_buffer_bytes(self, x: Inputs) -> float:
        """The buffers Qwen3-VL's class allocates at load for a batch's deepstack features (qwen3_vl.py
        `Qwen3VLForConditionalGeneration.__init__`: one max_num_batched_tokens x hidden_size tensor in the model's
        dtype per deepstack level), where its tower is loaded; "Model loading took" includes them."""
        v = sized_tower(x.a)
        if v is None or not v.deepstack or self.encoder_place(x) != "device":
            return 0.0
        tokens = self.settings(x.a, x.sc, x.options)["max_num_batched_tokens"]
        return float(v.deepstack * tokens * x.a.hidden_size * x.act_bytes)

    def load_buffer_bytes(self, x: Inputs) -> float:
        """What every rank allocates while the model loads beside its weights, which "Model loading took" includes
        and memviz counts as runtime: the rotary tables and the batch buffers (`BATCH_BUFFERS`)."""
        return self.rotary_table_bytes(x) + self.per_layer_embedding_bytes(x) + self.deepstack_buffer_bytes(x)

    def runtime_bytes(self, x: Inputs) -> float:
        return (self.non_torch_bytes(x) + self.cudagraph_bytes(x) + self.load_buffer_bytes(x)
                + self.attention_workspace_bytes(x))

    def attention_workspaces(self, x: Inputs) -> tuple[float, float]:
        """(the metadata builders', the TRT-LLM kernels' or FLASHINFER_MLA's) workspaces on one rank: FlashInfer's where
        it runs the attention (`vllm_flashinfer`), the TurboQuant builder's with a TurboQuant cache
        (`turboquant_workspace`, counted with the builders')."""
        s = self.settings(x.a, x.sc, x.options)
        cap = x.sc.compute_capability
        if runs_flashinfer_mla(x.a, cap, x.act_bytes):
            return 0.0, float(MLA_WORKSPACE_BYTES)
        mm_prefix = x.a.model_type in MM_PREFIX_TYPES and bool(x.a.encoders) and not s["language_model_only"]
        turboquant = self.turboquant_workspace(x, s)
        if cap is None or not runs_flashinfer(x.a, cap, x.act_bytes, s["attention_backend_run"], mm_prefix):
            return turboquant, 0.0
        return (builder_workspace_bytes(x.a, x.sc.tp, s["max_num_batched_tokens"]) + turboquant,
                kernels_workspace_bytes(cap))

    def turboquant_workspace(self, x: Inputs, s: dict[str, Any]) -> float:
        """What the TurboQuant builder grows the WorkspaceManager's buffer by beyond the experts' workspace it may
        already hold (`vllm_turboquant.workspace_bytes`); 0 for other caches."""
        if not vllm_turboquant.is_turboquant(x.sc.kv_format):
            return 0.0
        need = vllm_turboquant.workspace_bytes(x.a, x.sc.tp, s["max_num_seqs"], s["max_num_batched_tokens"],
                                               s["max_model_len"], self.hybrid_block(x)[0], x.act_bytes,
                                               s["enable_chunked_prefill"])
        return max(0.0, need - self.moe_workspace(x, s)[0])

    def attention_workspace_split(self, x: Inputs) -> tuple[float, float]:
        """The attention workspaces, FlashInfer's and TurboQuant's builder's (within the budget, after the pool): both
        within it where the pool is measured after capture; else the kernels' where the CUDA-graph estimate's capture
        makes it (`profile_cudagraph_memory`, which a pool of kv_cache_memory_bytes skips) and the builders' after the
        pool."""
        builder, kernels = self.attention_workspaces(x)
        if self.measured(x.options):
            return builder + kernels, 0.0
        o = x.options
        if o["estimate_cudagraphs"] and not o["enforce_eager"] and not o["kv_cache_memory_bytes"]:
            return kernels, builder
        return 0.0, builder + kernels

    def attention_workspace_bytes(self, x: Inputs) -> float:
        return self.attention_workspace_split(x)[0]

    def after_pool_bytes(self, x: Inputs) -> float:
        """What vLLM allocates after it sized a profile-based pool, beyond gpu_memory_utilization's share: CUDA graphs
        captured after it and the FlashInfer workspaces not made before."""
        return self.graphs_after_pool_bytes(x) + self.attention_workspace_split(x)[1]

    @staticmethod
    def non_torch_bytes(x: Inputs) -> int:
        """Non-torch memory the budget counts: a constant, and a tensor-parallel rank's first all-reduces on Hopper
        HGX boards (`HOPPER_TP_NON_TORCH_BYTES`)."""
        gpu = x.sc.gpu_spec
        hopper_tp = x.sc.tp > 1 and gpu is not None and gpu.key.split("@")[0] in HOPPER_NVSWITCH_GPUS
        return NON_TORCH_BYTES + (HOPPER_TP_NON_TORCH_BYTES if hopper_tp else 0)

    @staticmethod
    def outside_budget_bytes(x: Inputs) -> float:
        return outside_budget_bytes(x.sc, x.options)

    def encoder_place(self, x: Inputs) -> str:
        """Beside the language model, unless `--language-model-only`, under which `_mark_tower_model`
        (model_executor/models/interfaces.py) skips the towers."""
        return "" if x.options["language_model_only"] else "device"

    def encoder_bytes(self, x: Inputs) -> float:
        """On each rank of the first stage: the towers' linear layers are split over the TP ranks
        (`MultiModalConfig.mm_encoder_tp_mode` "weights", the default; SiglipAttention, Qwen3_VisionBlock, ... use
        QKVParallelLinear / RowParallelLinear), but for the `REPLICATED_TOWERS`, whole on every rank."""
        if self.encoder_place(x) != "device" or x.wf.name == STORED:
            return super().encoder_bytes(x) / x.sc.tp
        return sum(encoder_bytes(e, x.wf.name) / (1 if e.family in REPLICATED_TOWERS else x.sc.tp)
                   for e in x.a.encoders)

    def weight_extra(self, x: Inputs, layers: range) -> float:
        """What the kernels' weight layouts add on one rank of the stage `layers`: MXFP4 expert padding for the MoE
        backend, FP8 scales widened for Marlin on GPUs without FP8, AWQ / GPTQ tensors kept or dropped
        (`vllm_int4.held_bytes`), routers held in float32 (`vllm_router`), dots3's padded MLPs, a quantized MLA
        kv_b_proj's dequantized copy and the indexer's projections held in the model's dtype."""
        experts, others = vllm_int4.held_bytes(x.a, x.sc.weight_format, x.sc.compute_capability, layers)
        int4 = experts * self.expert_share(x) + others / x.sc.tp
        return (self._mxfp4_padding(x, layers) + self._marlin_fp8_scales(x, layers) + int4
                + vllm_router.upcast_bytes(x.a, x.wf, layers)
                + self._dots3_mlp_padding(x, layers) + self.dequantized_kv_b_bytes(x, layers)
                + self.indexer_upcast_bytes(x, layers) + self.eplb_bytes(x, layers) + self.draft_bytes(x, layers)
                + self.lora_bytes(x, layers))

    def lora_bytes(self, x: Inputs, layers: range) -> float:
        """The LoRA adapters' slots one rank of the stage `layers` holds from load (`vllm_lora`): max_loras slots of
        max_lora_rank in lora_dtype; none without enable_lora."""
        s = self.settings(x.a, x.sc, x.options)
        if not s["enable_lora"]:
            return 0.0
        values = vllm_lora.slot_values(x.a, layers, s["max_lora_rank"], x.sc.tp, self.moe_parallel(x)[1],
                                       self.local_experts(x), s["fully_sharded_loras"], layers.start == 0,
                                       layers.stop == x.a.num_layers, vllm_lora.parse_targets(s["lora_target_modules"]))
        value_bytes = x.act_bytes if s["lora_dtype"] == "auto" else 2
        return values * s["max_loras"] * value_bytes

    def local_experts(self, x: Inputs) -> float:
        """The experts of a MoE layer the busiest rank holds, whole or a slice each (`expert_share`)."""
        return x.a.num_experts * self.expert_share(x) * self.moe_parallel(x)[1]

    def draft_layers(self, x: Inputs, layers: range) -> int:
        """The drafter's layers the stage `layers` holds: the last stage's, with speculative decoding on (MTP layers,
        `vllm_mtp`; an EAGLE-3 drafter's one, `vllm_eagle3`)."""
        if not (x.options["num_speculative_tokens"] and x.a.num_layers - 1 in layers):
            return 0
        return 1 if x.options["speculative_method"] == "eagle3" else vllm_mtp.draft_layers(x.a)

    def draft_bytes(self, x: Inputs, layers: range) -> float:
        """One rank's share of the drafter: an EAGLE-3 drafter's weights (`vllm_eagle3`), or the MTP model's
        (`vllm_mtp`): its decoder layers as the model's last layer is held on this rank (in bf16 with option
        `mtp_16bit`), its fusion projection and norms."""
        n = self.draft_layers(x, layers)
        if not n:
            return 0.0
        if x.options["speculative_method"] == "eagle3":
            return vllm_eagle3.draft_bytes(x.a, x.options, x.sc.tp, x.act_bytes)
        tt = tensor_table(x.a, get_weight_format("bf16") if x.options["mtp_16bit"] else x.wf)
        share = self.device_tensor_bytes(x, tt) * self.tp_shares(x, tt)
        last = float(share[tt.layer == x.a.num_layers - 1].sum())
        return n * last + vllm_mtp.head_bytes(x.a, x.sc.tp, x.act_bytes)

    def kv_bytes(self, x: Inputs, layers: range) -> np.ndarray:
        """As `Engine.kv_bytes`, with the MTP layers' caches on the last stage, each as the model's last
        full-attention layer's."""
        kv = super().kv_bytes(x, layers)
        n = self.draft_layers(x, layers)
        if n:
            full = vllm_mtp.last_full_layer(x.a)
            kv = kv + n * super().kv_bytes(x, range(full, full + 1))
        return kv

    def eplb_bytes(self, x: Inputs, layers: range) -> float:
        """EPLB's state for the stage's MoE layers and its receive buffer for one layer's experts on this GPU
        (`vllm_eplb`)."""
        if not vllm_eplb.balances(x.a, x.options):
            return 0.0
        moe = [i for i in layers if x.a.moe_layers[i]]
        per_layer: dict[int, float] = {}
        for t, _, nbytes in tensor_bytes(x.a, x.wf):
            if t.role is Role.EXPERT and t.layer in moe:
                per_layer[t.layer] = per_layer.get(t.layer, 0.0) + nbytes
        buffer = max(per_layer.values(), default=0.0) * self.expert_share(x)
        return vllm_eplb.state_bytes(x.a, len(moe), x.options) + buffer

    def tp_shares(self, x: Inputs, tt: TensorTable) -> np.ndarray:
        """1 / tp of the roles tensor parallelism divides, less what vLLM holds whole on every rank
        (`REPLICATED_KINDS`); with fewer KV heads than ranks, one KV head's K and V projections on each rank
        (layers/linear.py `QKVParallelLinear`: num_kv_heads 1, num_kv_head_replicas tp / heads); the MoE experts'
        share of the busiest GPU (`expert_share`)."""
        tp = x.sc.tp
        kinds = np.array(tt.kinds, dtype=object)
        shares = np.where(tt.split & ~np.isin(kinds, list(REPLICATED_KINDS)), 1.0 / tp, 1.0)
        per_layer = np.array([x.a.layer_kv_heads(i) for i in range(x.a.num_layers)] + [tp])  # [-1]: outside layers
        kv_heads = per_layer[tt.layer]
        replicated_kv = np.isin(kinds, list(KV_PROJECTION_KINDS)) & (kv_heads < tp)
        shares = np.where(replicated_kv, 1.0 / np.maximum(kv_heads, 1), shares)
        return np.where(tt.expert, self.expert_share(x), shares)

    def replicas(self, options: dict[str, Any]) -> int:
        return options["data_parallel_size"]

    def split_labels(self, options: dict[str, Any]) -> tuple[str, ...]:
        dp, redundant = options["data_parallel_size"], options["num_redundant_experts"]
        labels = [f"DP{dp}"] if dp > 1 else []
        labels += ["EP"] if options["enable_expert_parallel"] else []
        labels += [f"EPLB R{redundant}" if redundant else "EPLB"] if options["enable_eplb"] else []
        return tuple(labels)

    @staticmethod
    def moe_parallel(x: Inputs) -> tuple[int, int]:
        """(expert-parallel size, tensor-parallel size) of the MoE layers (fused_moe/config.py
        `FusedMoEParallelConfig.make`): their TP spans the tp x dp GPUs (`flatten_tp_across_dp_and_pcp`); with
        --enable-expert-parallel and more than one GPU, that span is the EP size and each expert is whole (TP 1)."""
        span = x.sc.tp * x.options["data_parallel_size"]
        return (span, 1) if x.options["enable_expert_parallel"] and span > 1 else (1, span)

    def moe_workspace(self, x: Inputs, s: dict[str, Any]) -> tuple[float, str]:
        """(bytes, kind) of the experts' workspace the profile run leaves allocated (`vllm_moe_workspace`): what the
        experts' class vLLM's oracles pick takes from the WorkspaceManager, for max_num_batched_tokens x the DP ranks'
        tokens (the all-gather dispatch), each expert's intermediate as the GPU holds it (Marlin's MXFP4 padding
        included); none before 0.14."""
        a = x.a
        if not a.is_moe or not x.options["persistent_moe_workspace"]:
            return 0.0, NONE
        inter, hidden = -(-a.moe_intermediate_size // self.moe_parallel(x)[1]), a.moe_hidden_size or a.hidden_size
        backend = self._mxfp4_backend(x)
        if backend is not None:
            _, inter_to, hidden_to = backend
            inter, hidden = -(-inter // inter_to) * inter_to, -(-hidden // hidden_to) * hidden_to
        experts = [(n, storage) for t, storage, n in tensor_bytes(a, x.wf) if t.role is Role.EXPERT]
        kind = moe_kernel_workspace(max(experts)[1] if experts else None, x.sc.compute_capability,
                                    self.moe_parallel(x)[0] > 1, backend[0] if backend else None)
        tokens = s["max_num_batched_tokens"] * x.options["data_parallel_size"]
        return moe_workspace_bytes(a, tokens, inter, hidden, x.act_bytes, kind), kind

    def expert_share(self, x: Inputs) -> float:
        """The fraction of every MoE layer's experts the busiest GPU holds: 1 / the MoE TP size, or under expert
        parallelism whole experts, E // ep and one more on the first E % ep ranks (expert_map_manager.py
        `determine_expert_map`, linear placement), E counting EPLB's redundant copies (`vllm_eplb`)."""
        ep, moe_tp = self.moe_parallel(x)
        experts = x.a.num_experts
        physical = vllm_eplb.physical_experts(x.a, x.options)
        return -(-physical // ep) / experts if ep > 1 and experts else 1.0 / moe_tp

    @staticmethod
    def indexer_upcast_bytes(x: Inputs, layers: range) -> float:
        """Bytes tensors vLLM builds unquantized gain on one rank when the checkpoint (or the format) quantizes
        them, numel x the model dtype's bytes less what it stores, the rank's share: the lightning indexer's wk and
        weights_proj, fused whole on every rank (`UNQUANTIZED_KINDS`), and Mistral Large 4's kv_a_proj_with_mqa
        (whole) and kv_b_proj (split) (`MISTRAL_UNQUANTIZED_KINDS`)."""
        kinds = UNQUANTIZED_KINDS | (MISTRAL_UNQUANTIZED_KINDS if x.a.model_type == "mistral_large4_text" else set())
        return float(sum((t.numel * x.act_bytes - nbytes) * (1 if t.kind in REPLICATED_KINDS else 1 / x.sc.tp)
                         for t, storage, nbytes in tensor_bytes(x.a, x.wf)
                         if t.layer in layers and t.kind in kinds and storage.upper() not in UNQUANTIZED_STORAGES))

    @staticmethod
    def dequantized_kv_b_bytes(x: Inputs, layers: range) -> float:
        """vLLM 0.33 `MLAAttention.process_weights_after_loading` (model_executor/layers/attention/mla_attention.py)
        splits kv_b_proj into the decode path's W_UK_T and W_UV with `split_kv_b_proj`, whose
        `get_and_maybe_dequant_weights` (quantization/utils/quant_utils.py) returns an unquantized weight itself but
        dequantizes a quantized one (FP8, AWQ / GPTQ, NVFP4, ...) into a new tensor in the model's dtype; W_UK_T and
        W_UV keep it alive beside the quantized kv_b_proj, which the prefill path still uses: kv_lora_rank x heads x
        (nope + v) elements per MLA layer whose kv_b_proj is quantized, the heads split over TP ranks. DeepSeek-V3's
        FP8 checkpoint: 2.05 GB in all, 256 MB a rank at TP 8."""
        a = x.a
        if not a.is_mla or a.model_type == "mistral_large4_text":  # its kv_b_proj is loaded unquantized
            return 0.0
        quantized = {t.layer for t, storage, _ in tensor_bytes(a, x.wf) if t.layer in layers and "kv_b_proj" in
                     t.name and storage.upper() not in UNQUANTIZED_STORAGES}
        elements = sum(a.layer_kv_lora(i) * a.layer_num_heads(i) * (a.layer_nope_dim(i) + a.v_head_dim)
                       for i in quantized)
        return elements * x.act_bytes / x.sc.tp

    @staticmethod
    def _dots3_mlp_padding(x: Inputs, layers: range) -> float:
        """dots3 with 128 x 128 FP8 blocks (vllm/models/dots3_note/nvidia/model.py `_padded_mlp_size`,
        `_pad_dense_mlp_weight`): the dense MLP's and the shared expert's width padded with zeros to whole blocks on
        every TP rank, a multiple of 128 x tp (1,536 to 2,048 at TP 8); one rank of the stage `layers`."""
        if x.a.model_type != "dots3_note_text":
            return 0.0
        step, extra = 128 * x.sc.tp, 0.0
        for t, storage, nbytes in tensor_bytes(x.a, x.wf):
            if (not FP8_BLOCK_SCALES.get(storage) or t.role is not Role.MLP or t.kind not in ("gate", "up", "down")
                    or t.layer not in layers):
                continue
            width = t.shape[1] if t.kind == "down" else t.shape[0]
            extra += nbytes * (-(-width // step) * step / width - 1)
        return extra / x.sc.tp

    def _marlin_fp8_scales(self, x: Inputs, layers: range) -> float:
        """On a GPU without FP8 arithmetic (compute capability below 8.9: `current_platform.supports_fp8`) vLLM runs
        FP8 weights on Marlin as W8A16 (kernels/linear/scaled_mm/marlin.py; fused_moe/oracle/fp8.py, whose TRITON
        backend needs supports_fp8, falls to MARLIN), and `prepare_fp8_layer_for_marlin` /
        `prepare_fp8_moe_layer_for_marlin` (quantization/utils/marlin_utils_fp8.py) replace the fp32 scales by
        scales in the model's 16-bit dtype: a 128 x 128 block's scale repeated over its 128 output rows, (K / 128)
        x N per matrix; a per-tensor or per-channel scale one per output row. The FP8 values keep their bytes
        (repacked; dimensions that are multiples of 128 need no Marlin padding). About 1/64 of the FP8 bytes for
        block scales: a published Qwen3-30B-A3B-FP8 load on an A800 took 29.50 GiB for a 29.04 GiB checkpoint."""
        cap = x.sc.compute_capability
        if cap is None or not MARLIN_MIN_CAPABILITY <= cap < FP8_NATIVE_CAPABILITY:
            return 0.0
        extra, expert_share = 0.0, self.expert_share(x)
        for t, storage, nbytes in tensor_bytes(x.a, x.wf):
            if storage not in FP8_BLOCK_SCALES or not t.is_matrix or t.layer is None or t.layer not in layers:
                continue
            *stack, n, k = t.shape
            matrices = prod(stack)
            groups = -(-k // 128) if FP8_BLOCK_SCALES[storage] else 1
            share = expert_share if t.role is Role.EXPERT else 1 / x.sc.tp
            extra += (matrices * groups * n * 2 - (nbytes - matrices * n * k)) * share
        return extra

    def _mxfp4_padding(self, x: Inputs, layers: range) -> float:
        """Padding of MXFP4 expert matrices for the MoE backend (one rank of the stage `layers`), and the Triton
        kernels' swizzled scales on Hopper (`_hopper_scale_padding`)."""
        backend = self._mxfp4_backend(x)
        if backend is None:
            return 0.0
        name, align_i, align_h = backend
        inter = x.a.moe_intermediate_size // self.moe_parallel(x)[1]
        h = x.a.hidden_size
        grow = (-(-inter // align_i) * align_i / inter) * (-(-h // align_h) * align_h / h)
        matrices = [(t.layer, nbytes) for t, storage, nbytes in tensor_bytes(x.a, x.wf)
                    if t.role is Role.EXPERT and storage == "mxfp4" and t.is_matrix and t.layer in layers]
        padding = sum(nbytes for _, nbytes in matrices) * self.expert_share(x) * (grow - 1)
        if name == "TRITON":
            padding += len({layer for layer, _ in matrices}) * self._hopper_scale_padding(x, -(-inter // align_i) * align_i)
        return padding

    def _hopper_scale_padding(self, x: Inputs, inter: int) -> float:
        """Bytes one MoE layer's swizzled scales add on a rank on Hopper (triton_kernels `HopperMXScaleLayout.
        swizzle_data`, through vLLM 0.34 `_swizzle_mxfp4` at num_warps 8): every expert's scale rows, one byte per 32
        inputs, padded to a multiple of 2 x 8 x 2 x 8 = `HOPPER_SCALE_ROWS`; gate_up's 2 x `inter` rows (the rank's
        intermediate as the kernels round it) and down's hidden rows. 0.34 keeps them in the params' storage
        (`store_params_in_triton`); 0.19 kept the loaded scales beside them. The value layout's tiles (16 rows, 32
        bytes: `HopperMXValueLayout`) pad nothing at widths rounded to 64."""
        h = x.a.hidden_size
        rows = [(2 * inter, h // MX_BLOCK), (h, inter // MX_BLOCK)]
        per_expert = sum((-(-n // HOPPER_SCALE_ROWS) * HOPPER_SCALE_ROWS - n) * cols for n, cols in rows)
        return self.local_experts(x) * per_expert

    @staticmethod
    def _mxfp4_backend(x: Inputs) -> tuple[str, int, int] | None:
        if x.sc.device != "cuda" or not x.sc.gpu or not x.a.num_experts:
            return None
        if not any(s == "mxfp4" for t, s, _ in tensor_bytes(x.a, x.wf) if t.role is Role.EXPERT):
            return None
        return mxfp4_moe_backend(get_gpu(x.sc.gpu), x.a.model_type == "gpt_oss")

    def cudagraph_bytes(self, x: Inputs) -> float:
        """The CUDA graphs inside the budget (`vllm_cudagraphs`): with the extensible KV cache the capture itself,
        measured before the pool is sized; without it the estimate taken from the budget (none with estimate_cudagraphs
        off); none with enforce_eager."""
        if x.options["enforce_eager"]:
            return 0.0
        if self.measured(x.options) or x.options["estimate_cudagraphs"]:
            return self._graphs(x)
        return 0.0

    def graphs_after_pool_bytes(self, x: Inputs) -> float:
        """Before v0.20 (estimate_cudagraphs off) vLLM captures its graphs after sizing the pool
        (`gpu_model_runner.py` `capture_model`), so they take memory beyond gpu_memory_utilization's share: the
        capture itself."""
        if x.options["enforce_eager"] or x.options["estimate_cudagraphs"] or self.measured(x.options):
            return 0.0
        return self._graphs(x)

    def captures(self, x: Inputs) -> Captures:
        """The graphs vLLM captures for the scenario: its sizes in both modes (FULL decode graphs for whole
        requests) and whether FlashAttention 3's split buffers come with them."""
        s = self.settings(x.a, x.sc, x.options)
        cap = x.sc.compute_capability
        q = 1 + s["num_speculative_tokens"]
        sizes = capture_sizes(s["max_num_seqs"], s["max_num_batched_tokens"], cap is not None and cap[0] == 10, q)
        full = [n for n in sizes if n % q == 0 and n <= s["max_num_seqs"] * q]
        cases = 2 if x.options["enable_lora"] else 1  # without and with adapters (`vllm_lora`)
        return Captures(cases * len(sizes), cases * len(full), sizes[-1], max(full, default=0),
                        fa3_split_kv(x.a, cap, x.act_bytes, s["attention_backend_run"],
                                     KV_CACHE_DTYPES.get(x.sc.kv_format, "auto") != "auto")
                        and not vllm_turboquant.is_turboquant(x.sc.kv_format), x.act_bytes)

    def _graphs(self, x: Inputs) -> float:
        return cudagraph_estimate(x.a, x.sc.tp, x.sc.pp, self.captures(x))

    @staticmethod
    def measured(options: dict[str, Any]) -> bool:
        """Whether the pool is sized from measured memory (`vllm_extensible`): vLLM 0.34's extensible KV cache, which
        kv_cache_memory_bytes turns off (`CacheConfig.enable_extensible_kv_cache`)."""
        return bool(options["extensible_kv_cache"] and not options["kv_cache_memory_bytes"])

    def utilization(self, sc: Any) -> float:
        """gpu_memory_utilization, or vLLM's default for the sizing (`CacheConfig.resolved_gpu_memory_utilization`)."""
        if sc.gpu_memory_utilization is not None:
            return float(sc.gpu_memory_utilization)
        measured = self.measured(self.resolve(dict(sc.options)))
        return vllm_extensible.UTILIZATION if measured else vllm_extensible.PROFILED_UTILIZATION

    def usable_bytes(self, gpu, sc) -> float:
        """The memory vLLM requests (`request_memory`): gpu_memory_utilization x the CUDA total, rounded up."""
        return float(ceil(self.utilization(sc) * gpu.cuda_total_bytes))

    def kv_pool(self, x: Inputs, gpu, non_kv: np.ndarray, peak: np.ndarray | None = None) -> np.ndarray:
        """Whole blocks (`kv_cache_utils.get_num_blocks`) of what the budget leaves, or of kv_cache_memory_bytes
        (`determine_available_memory` returns it after the profile run, whatever the rest takes); with the extensible
        KV cache what the measured memory leaves beside the transient `peak` and its margin, its blocks mapped in
        granules (`vllm_extensible`)."""
        if x.options["kv_cache_memory_bytes"]:
            return np.where(self.fixed_pool_allocatable(x, gpu, non_kv), self.fixed_pool_bytes(x), 0.0)
        if self.measured(x.options):
            budget = self.measured_budget_bytes(gpu, x.sc, x.options, np.zeros_like(non_kv) if peak is None else peak)
            pages = self.groups(x).segment_pages
            return vllm_extensible.blocks_within(np.maximum(budget - non_kv, 0.0), pages) * sum(pages)
        block = self.block_bytes(x)
        free = self.usable_bytes(gpu, x.sc) - non_kv
        return np.maximum(np.floor(free / block), 0) * block

    def stage_pools(self, x: Inputs, pools: list[np.ndarray | None]) -> list[np.ndarray | None]:
        """Every rank keeps the smallest rank's block count (v1/core/kv_cache_planning.py: "Change the num_blocks of
        each rank to the smallest among all ranks", and `finalize_extensible_kv_cache`'s minimum); the stages'
        blocks are of one size here (`groups`: the largest stage's), so the smallest pool."""
        if any(p is None for p in pools):
            return pools
        smallest = np.minimum.reduce(pools)
        return [smallest] * len(pools)

    @staticmethod
    def _check_attention_backend(a: Architecture, sc: Any, backend: str) -> None:
        """What vLLM refuses (`AttentionBackend.validate_configuration`): FlashAttention and FlashInfer take 16-bit
        activations only (`supported_dtypes`); MLA layers run MLA backends of other names."""
        if backend == "auto":
            return
        if mla_attention(a):
            raise InputError(f"vLLM runs MLA layers with MLA backends (FLASH_ATTN_MLA, FLASHMLA, ...), not {backend}; "
                             "memviz models them with attention_backend auto")
        if backend in ("FLASH_ATTN", "FLASHINFER") and sc.weight_format == "fp32":
            raise InputError(f"vLLM's {backend} backend takes float16 and bfloat16 activations only; the scenario "
                             "computes in float32")

    @staticmethod
    def _check_kv_dtype(a: Architecture, sc: Any, backend: str) -> None:
        """What vLLM refuses of a quantized cache dtype (`KV_DTYPE_BACKENDS`): MLA layers, whose backends take none
        of them; another backend named; NVFP4 where FlashInfer cannot read it (`FlashInferBackend.supports_combination`:
        64-wide heads and sinks on compute capability 8, 9 and 12; `supports_compute_capability`: not below 8.0)."""
        if vllm_turboquant.is_turboquant(sc.kv_format):
            vllm_turboquant.check(a, backend, compute_bytes(sc.weight_format))
        need = KV_DTYPE_BACKENDS.get(sc.kv_format)
        if need is None:
            return
        name = KV_CACHE_DTYPES[sc.kv_format]
        if mla_attention(a):
            raise InputError(f"vLLM's MLA backends take no {name} cache (auto, fp8 and the DeepSeek layouts)")
        if backend not in ("auto", need):
            raise InputError(f"vLLM's {backend} backend takes no {name} cache; {need} does (attention_backend auto)")
        cc = sc.compute_capability
        if name == "nvfp4" and cc is not None:
            heads = {a.layer_head_dim(i) for i in range(a.num_layers) if a.layer_caches_kv(i)}
            if cc < (8, 0):
                raise InputError("vLLM's NVFP4 cache runs on FlashInfer, which needs compute capability 8.0 or more")
            if cc[0] in (8, 9, 12) and (64 in heads or a.attention_sinks):
                why = "64-wide heads" if 64 in heads else "attention sinks"
                raise InputError(f"vLLM's FlashInfer cannot read an NVFP4 cache with {why} on compute capability "
                                 f"{cc[0]}.{cc[1]} (its fa2 prefill); it can on 10.x")

    def measured_budget_bytes(self, gpu, sc: Any, options: dict[str, Any], peak: np.ndarray) -> np.ndarray:
        """What a measured pool and the rest may take together (`vllm_extensible.budget_bytes`), beside a transient
        `peak`: the request, and the memory free at start-up less the margin."""
        free = gpu.cuda_total_bytes - outside_budget_bytes(sc, options)
        return vllm_extensible.budget_bytes(self.usable_bytes(gpu, sc), free, peak)

    def overhead_formula(self, facts: dict[str, Any]) -> str:
        state, index = facts.get("sampler_state_bytes"), facts.get("sparse_index_buffer_bytes")
        ngram = facts.get("ngram_buffer_bytes")
        consumed = facts.get("runner_buffers_in") == OVERHEAD
        receive = facts.get("pp_receive_buffer_bytes") if consumed else None
        experts = facts.get("moe_workspace_bytes") if consumed else None
        workspaces = facts.get("attention_workspace_in_budget_bytes")
        graphs = "its CUDA graphs as captured" if facts["kv_sizing"] == "measured" else "its CUDA-graph estimate"
        return (f"; vllm: {facts['non_torch_bytes'] / MiB:.0f} MiB non-torch + {graphs} "
                f"({facts['cudagraph_bytes'] / GiB:.2f} GiB: FlashAttention 3's split buffers where it runs, the "
                "largest capture's feed-forward working set and the graphs of every capture size) + the rotary tables"
                + "".join(f" + the {item} ({facts[key] / GiB:.2f} GiB)" for key, item, _ in BATCH_BUFFERS if facts.get(key))
                + (f" + the V2 model runner's sampler state ({state / GiB:.2f} GiB)" if state else "")
                + (f" + the n-gram inputs' buffer on the first stage ({ngram / GiB:.2f} GiB)" if ngram else "")
                + (f" + sparse attention's top-k index buffers ({index / GiB:.2f} GiB)" if index else "")
                + (f" + on stages after the first, the buffer the previous stage's tensors arrive in ({receive / GiB:.2f} "
                   "GiB)" if receive else "")
                + (f" + the MoE experts' workspace ({experts / GiB:.2f} GiB)" if experts else "")
                + (f" + the {facts['attention_workspace_owners']} attention workspaces ({workspaces / GiB:.2f} GiB)"
                   if workspaces else ""))

    def kv_pool_formula(self, x: Inputs) -> str:
        fixed = x.options["kv_cache_memory_bytes"]
        if fixed:
            return (f"; vllm allocates kv_cache_memory_bytes ({fixed:,d}) in whole blocks after its profile run, "
                    "whatever the rest takes")
        util = self.utilization(x.sc)
        if self.measured(x.options):
            return (f"; vllm's extensible KV cache takes what the memory measured after warm-up and CUDA-graph capture "
                    f"leaves within gpu_memory_utilization ({util:g}) x the GPU's CUDA total, less the transient peak and "
                    "max(1 GiB, 0.75 x that peak), in whole blocks mapped in 2 MiB granules")
        return (f"; vllm reserves gpu_memory_utilization ({util:g}) x the GPU's CUDA total and the KV "
                "pool takes the rest in whole blocks")

    def fixed_pool_bytes(self, x: Inputs) -> float:
        """kv_cache_memory_bytes in whole blocks."""
        block = self.block_bytes(x)
        return x.options["kv_cache_memory_bytes"] // block * block

    def fixed_pool_allocatable(self, x: Inputs, gpu: GPU, non_kv: np.ndarray) -> np.ndarray:
        """Whether the pool of kv_cache_memory_bytes, the rest and what vLLM allocates after it (`after_pool_bytes`)
        fit in what CUDA leaves after its context; where they do not vLLM runs out of memory and holds no pool."""
        committed = non_kv + self.fixed_pool_bytes(x) + self.after_pool_bytes(x)
        return committed <= gpu.cuda_total_bytes - TORCH_CUDA_BASELINE_BYTES

    def commit_cap_bytes(self, gpu, sc: Any, peak: float) -> float:
        """A measured pool and the rest lie within `measured_budget_bytes`; a pool of kv_cache_memory_bytes is
        committed whatever it asks (beyond the GPU, a refusal)."""
        options = self.resolve(dict(sc.options))
        if not self.measured(options):
            return float("inf")
        return float(self.measured_budget_bytes(gpu, sc, options, np.asarray(peak)))

    def commits_budget(self, sc: Any) -> bool:
        """A pool of kv_cache_memory_bytes, or one sized from measured memory: either way vLLM commits the pool
        beside the rest, and sequences fit when they fit the pool."""
        options = self.resolve(dict(sc.options))
        return bool(options["kv_cache_memory_bytes"]) or self.measured(options)

    def block_bytes(self, x: Inputs) -> float:
        """Bytes of one step of `num_blocks` over all of this rank's layers (per pipeline stage: the largest)."""
        return float(self.groups(x).unit_bytes)

    def groups(self, x: Inputs) -> KVGroups:
        """The KV cache groups of the largest pipeline stage (`vllm_kv`)."""
        stage_layers = range(max(map(len, self.stages(x))))
        block, page, blocks = self.hybrid_block(x)
        n = self.draft_layers(x, stage_layers)
        draft = (vllm_mtp.last_full_layer(x.a),) * n if n else ()
        return kv_groups(x.a, x.kvf, self.kv_layout(x), stage_layers, block, page, blocks, draft)

    def facts(self, x: Inputs, gpu, pool_bytes: float | None, non_kv_bytes: float | None = None,
              loaded_bytes: float = 0.0) -> dict[str, Any]:
        s = self.settings(x.a, x.sc, x.options)
        caps = self.captures(x)
        (inside, after), graphs_after = self.attention_workspace_split(x), self.graphs_after_pool_bytes(x)
        tables = rotary_tables(x.a, x.act_bytes)
        out: dict[str, Any] = {
            "max_model_len": s["max_model_len"], "max_num_seqs": s["max_num_seqs"],
            "max_num_batched_tokens": s["max_num_batched_tokens"], "block_size": self.hybrid_block(x)[0],
            "non_torch_bytes": self.non_torch_bytes(x), "cudagraph_bytes": int(self.cudagraph_bytes(x)),
            "cudagraph_captures": asdict(caps), "cudagraph_split_kv_bytes": int(captured_split_kv_bytes(x.a, x.sc.tp, caps)),
            "outside_budget_bytes": int(self.outside_budget_bytes(x)),
            "graphs_after_pool_bytes": int(graphs_after),
            "after_pool_bytes": int(graphs_after + after),
            "attention_workspace_bytes": int(inside + after),
            "attention_workspace_in_budget_bytes": int(inside),
            **self._workspace_words(x, s),
            "rotary_table_bytes": int(self.rotary_table_bytes(x)),
            "per_layer_embedding_bytes": int(self.per_layer_embedding_bytes(x)),
            "deepstack_buffer_bytes": int(self.deepstack_buffer_bytes(x)),

            "rotary_tables": [[rows, width] for rows, width, _ in tables],
            "kv_block_bytes": int(self.block_bytes(x)),
            "kv_sizing": ("kv_cache_memory_bytes" if x.options["kv_cache_memory_bytes"] else
                          "measured" if self.measured(x.options) else "profiled"),
        }
        limit = x.a.max_position_embeddings
        if limit and s["max_model_len"] > limit:
            out["refusal"] = (f"vLLM refuses max_model_len {s['max_model_len']:,d}: the model has {limit:,d} positions "
                              "(rope scaling aside)")
        if x.sc.sequences > s["max_num_seqs"]:
            out["queued_sequences"] = x.sc.sequences - s["max_num_seqs"]
        out["profile_sampler"] = {"sampler": s["sampler"], "requests": dummy_requests(s),
                                  "bytes": int(self.sampler_step_bytes(x, s)),
                                  "label": sampler_label(s["sampler"], s["model_runner"])}
        out["model_runner"] = s["model_runner"]
        last = range(x.a.num_layers - 1, x.a.num_layers)
        if n := self.draft_layers(x, last):
            out["drafter"] = {"method": x.options["speculative_method"], "layers": n,
                              "num_speculative_tokens": s["num_speculative_tokens"],
                              "weight_bytes": int(self.draft_bytes(x, last)),
                              "state_layers": x.a.state_layers}  # each keeps a state page more a drafted token
        if state := self.sampler_state(x, s):
            out["sampler_state_bytes"] = state
        if ngram := vllm_ngram.input_buffer_bytes(x.a, s["max_num_batched_tokens"], x.act_bytes):
            out["ngram_buffer_bytes"] = int(ngram)
            out["ngram_peak_bytes"] = int(vllm_ngram.input_peak_bytes(x.a, s["max_num_batched_tokens"], x.act_bytes))
        index = self.index_buffers(x, s, self.stages(x)[0])
        if index:
            out["sparse_index_buffer_bytes"] = index  # on a rank of the first stage
        # beside the weights in "Model loading took" on a rank of the first stage (`log_check.logged_weights`)
        out["model_load_extra_bytes"] = int(self.load_buffer_bytes(x) + index)
        if bench := self.compile_benchmark_bytes(x, s):  # a floor of the first stage's profile peak
            out["compile_benchmark_bytes"] = int(bench)
        out["runner_buffers_in"] = buffers_in(s)  # where the two below are counted
        if workspace := self.moe_workspace(x, s)[0]:
            out["moe_workspace_bytes"] = int(workspace)
        if x.sc.pp > 1:  # on every stage after the first
            out["pp_receive_buffer_bytes"] = int(receive_buffer_bytes(x.a, s["max_num_batched_tokens"], x.act_bytes))
        backend = self._mxfp4_backend(x)
        if backend is not None:
            out["mxfp4_moe_backend"] = backend[0]
        if s["enable_lora"]:
            out["lora_slot_bytes"] = int(self.lora_bytes(x, self.stages(x)[0]))
            out["lora_slots"] = [s["max_loras"], s["max_lora_rank"]]
        encoder = self.encoder_pass(x, s, loaded_bytes)
        if encoder is not None:
            out["encoder_profile"] = {"modality": encoder.modality, "items": encoder.items,
                                      "tokens_per_item": encoder.tokens_per_item, "peak_bytes": int(encoder.peak_bytes),
                                      "input_bytes": int(encoder.input_bytes)}
            if s["skip_mm_profiling"]:  # computed, not reserved (`MultiModalConfig.skip_mm_profiling`)
                out["encoder_profile"]["skipped"] = True
            if encoder.chunk:  # frames of a video, or images, a call of the tower takes
                out["encoder_profile"].update(chunk=encoder.chunk,
                                              chunk_unit="frames" if encoder.modality == "video" else "images")
        if gpu is None or pool_bytes is None:
            return out
        total, requested = gpu.cuda_total_bytes, self.usable_bytes(gpu, x.sc)
        fixed = x.options["kv_cache_memory_bytes"]
        free = total - TORCH_CUDA_BASELINE_BYTES  # NCCL's share varies tenfold with the links: not grounds to refuse
        util = self.utilization(x.sc)
        if self.measured(x.options):  # the budget only caps the pool: no start-up check (`request_memory`)
            if non_kv_bytes is not None:
                startup_free = total - out["outside_budget_bytes"]
                out["kv_left_free_bytes"] = int(startup_free - non_kv_bytes - pool_bytes)
        elif free < requested and "refusal" not in out:
            out["refusal"] = (f"vLLM refuses to start: free memory on {gpu.label} ({free / GiB:.2f}/{total / GiB:.2f} "
                              f"GiB) on startup is less than gpu_memory_utilization {util:g} "
                              f"asks for ({requested / GiB:.2f} GiB), the CUDA context taken; lower it")
        elif total - out["outside_budget_bytes"] < requested:
            out["startup_risk"] = (f"the CUDA context and NCCL buffers (about {out['outside_budget_bytes'] / GiB:.2f} GiB, "
                                   f"NCCL varying with the links) may leave less free than gpu_memory_utilization "
                                   f"{util:g} asks for; vLLM then refuses to start")
        elif not fixed and total - out["outside_budget_bytes"] - out["after_pool_bytes"] < requested:
            out["startup_risk"] = (f"what vLLM allocates after sizing the pool (about {out['after_pool_bytes'] / GiB:.2f} GiB: "
                                   f"{self._after_pool_parts(out)}) does not fit beside gpu_memory_utilization {util:g} "
                                   "and the CUDA context: it may run out of memory; lower gpu_memory_utilization"
                                   + (" or use enforce_eager" if out["graphs_after_pool_bytes"] else ""))
        if fixed:
            requested = self._fixed_pool_facts(x, out, gpu, pool_bytes, non_kv_bytes or 0.0)
        elif non_kv_bytes is not None and not self.measured(x.options):
            graphs = out["cudagraph_bytes"] or out["graphs_after_pool_bytes"]
            out["suggested_kv_cache_memory_bytes"] = int(requested - non_kv_bytes - graphs - SUGGESTION_MARGIN_BYTES)
        block, groups = out["kv_block_bytes"], self.groups(x)
        blocks = int(pool_bytes // block) if pool_bytes > 0 else 0
        need = self.request_bytes(x, s, s["max_model_len"])
        in_flight = self._in_flight_tokens(x, s)
        per_request = groups.request_blocks(s["max_model_len"],
                                            lambda block: local_blocks(x.a, in_flight, s["max_model_len"], block))
        out.update({
            "budget_bytes": int(requested), "kv_pool_bytes": int(pool_bytes), "kv_blocks": blocks,
            "kv_pool_tokens": int(blocks / per_request * s["max_model_len"]), "one_request_kv_bytes": need,
            "max_concurrency": blocks / per_request, "kv_request_blocks": per_request,
            "kv_pool_tokens_before_0_20_1": groups.block_tokens_printed(blocks),
            "kv_groups": len(groups.kinds), "kv_group_block_tokens": min(groups.block_tokens),
            "gpu_memory_utilization": util,
        })
        if blocks * block < need and "refusal" not in out:
            longest = self.longest_request(x, s, blocks * block)
            out["refusal"] = (f"vLLM refuses to start: one request of max_model_len {s['max_model_len']:,d} tokens needs "
                              f"{need / GiB:.2f} GiB of KV cache, more than the {max(pool_bytes, 0) / GiB:.2f} GiB left "
                              f"for it on {gpu.label}; the largest max_model_len that fits is {longest:,d}")
        return out

    @staticmethod
    def _after_pool_parts(out: dict[str, Any]) -> str:
        """What makes up `after_pool_bytes`, in words."""
        parts = ["CUDA graphs captured after the pool, estimate_cudagraphs off"] if out["graphs_after_pool_bytes"] else []
        if out["after_pool_bytes"] > out["graphs_after_pool_bytes"]:
            parts.append(f"the {out['attention_workspace_owners']} attention workspaces")
        return " and ".join(parts)

    def _workspace_words(self, x: Inputs, s: dict[str, Any]) -> dict[str, str]:
        """Whose attention workspaces there are ("FlashInfer", "TurboQuant" or "FlashInfer and TurboQuant") and what
        they hold, for the CLI and the Breakdown."""
        turboquant = self.turboquant_workspace(x, s)
        builder, kernels = self.attention_workspaces(x)
        flashinfer = builder + kernels > turboquant
        parts = {name: text for name, text, on in (("FlashInfer", describe_workspaces(x.a, kernels), flashinfer),
                                                   ("TurboQuant", vllm_turboquant.DESCRIPTION, turboquant > 0)) if on}
        words = "; ".join(f"{name}'s: {text}" for name, text in parts.items()) if len(parts) > 1 \
            else next(iter(parts.values()), "")
        return {"attention_workspace_owners": " and ".join(parts) or "FlashInfer", "attention_workspace_parts": words}

    def _fixed_pool_facts(self, x: Inputs, out: dict[str, Any], gpu: GPU, pool_bytes: float,
                          non_kv_bytes: float) -> float:
        """kv_cache_memory_bytes: vLLM 0.33 allocates that pool after its profile run whatever the rest takes
        (`determine_available_memory` returns it; gpu_memory_utilization still sets the free memory `request_memory`
        asks for at start-up) and captures its CUDA graphs after it. Beyond what CUDA leaves after its context it
        runs out of memory, at start-up or once a batch reaches the profile's peak (a refusal; `kv_pool` is then
        empty; 0.33 does not check it, vllm-project/vllm PR #56698 proposes to), beyond what NCCL may also take it
        risks to.
        Returns the pool and the rest on the busiest GPU, the budget its sequences are judged against
        (`fit.capacity_bytes`)."""
        wanted = self.fixed_pool_bytes(x)
        committed = non_kv_bytes + wanted + out["after_pool_bytes"]
        free = gpu.cuda_total_bytes - TORCH_CUDA_BASELINE_BYTES
        out["kv_cache_memory_bytes"] = int(x.options["kv_cache_memory_bytes"])
        if not self.fixed_pool_allocatable(x, gpu, np.asarray(non_kv_bytes)):
            largest = max(free - committed + wanted, 0)
            out.setdefault("refusal", f"vLLM would run out of memory: its KV pool of {wanted / GiB:.2f} GiB "
                           f"(kv_cache_memory_bytes) beside {(committed - wanted) / GiB:.2f} GiB of weights, profile "
                           f"peak and runtime takes {committed / GiB:.2f} GiB, more than the {free / GiB:.2f} GiB "
                           f"{gpu.label} leaves after the CUDA context; a pool of at most {largest / GiB:.2f} GiB fits")
        elif committed > gpu.cuda_total_bytes - out["outside_budget_bytes"]:
            out.setdefault("startup_risk", f"the NCCL buffers (about {out['outside_budget_bytes'] / GiB:.2f} GiB with the "
                           f"CUDA context, varying with the links) may leave less than the {committed / GiB:.2f} GiB the "
                           "pool of kv_cache_memory_bytes and the rest take; vLLM then runs out of memory")
        return non_kv_bytes + pool_bytes

    def request_bytes(self, x: Inputs, s: dict[str, Any], model_len: int) -> int:
        """KV bytes one request of `model_len` tokens may hold on this rank (`kv_cache_utils.py`
        `get_max_concurrency_for_kv_cache_config`, `check_enough_kv_cache_memory`): every full-attention layer
        whole blocks of `model_len` tokens; a sliding or chunked layer those of its window or chunk and the tokens
        in flight (`vllm_kv.local_blocks`). A drafter's layers on the stage count as the full-attention layers they
        cache as."""
        n = self.hybrid_block(x)[0]
        sliding = local_blocks(x.a, self._in_flight_tokens(x, s), model_len, n) * n
        stage_layers = range(max(map(len, self.stages(x))))
        states = sum(1 for i in stage_layers if x.a.layer_has_state(i)) * self.linear_state_held_bytes(x)
        layout = self.kv_layout(x)
        kv = kv_cache_bytes(x.a, x.kvf, model_len, layout, stage_layers, sliding_tokens=sliding)
        if drafted := self.draft_layers(x, stage_layers):
            full = vllm_mtp.last_full_layer(x.a)
            kv += drafted * kv_cache_bytes(x.a, x.kvf, model_len, layout, range(full, full + 1))
        return int(kv) + states

    @staticmethod
    def _in_flight_tokens(x: Inputs, s: dict[str, Any]) -> int:
        """Tokens scheduled but not yet settled (`config/vllm.py` `max_in_flight_tokens`): max_num_batched_tokens
        x concurrent batches (two with asynchronous scheduling, pp + 1 with pipeline stages). Releases before 0.26
        admitted one batch (vLLM 0.25.0 v1/kv_cache_interface.py `max_admission_blocks_per_request` took
        max_num_batched_tokens; 0.26.0 `VllmConfig.max_in_flight_tokens`): option `in_flight_admission`."""
        batches = x.sc.pp + 1 if x.options["in_flight_admission"] else 1
        return s["max_num_batched_tokens"] * batches

    def longest_request(self, x: Inputs, s: dict[str, Any], pool_bytes: float) -> int:
        """The largest max_model_len whose request fits `pool_bytes` (what vLLM's refusal suggests), by bisection."""
        lo, hi = 0, s["max_model_len"]
        while lo < hi:
            mid = (lo + hi + 1) // 2
            lo, hi = (mid, hi) if self.request_bytes(x, s, mid) <= pool_bytes else (lo, mid - 1)
        return lo

    def launch_command(self, a: Architecture, sc: Any, model: str) -> str:
        s = self.settings(a, sc, sc.engine_options)
        env = [] if s["estimate_cudagraphs"] else ["VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=0"]
        if not s["chunked_local_hybrid_kv"] and a.model_type in CHUNKED_LOCAL_TYPES:
            env.append("VLLM_ALLOW_CHUNKED_LOCAL_ATTN_WITH_HYBRID_KV_CACHE=0")
        if s["model_runner"] == "v1":
            env.append("VLLM_USE_V2_MODEL_RUNNER=0")
        flashinfer = s["sampler"].startswith("flashinfer")
        if flashinfer != (default_sampler(sc.gpu_spec) == "flashinfer"):
            env.append(f"VLLM_USE_FLASHINFER_SAMPLER={int(flashinfer)}")
        ref, on_load = self.checkpoint(a, sc, model)
        args = [*env, "vllm", "serve", ref, "--max-model-len", str(s["max_model_len"])]
        if sc.gpu_memory_utilization is not None:
            args += ["--gpu-memory-utilization", f"{sc.gpu_memory_utilization:g}"]
        args += ["--max-num-seqs", str(s["max_num_seqs"]), "--max-num-batched-tokens", str(s["max_num_batched_tokens"])]
        if s["attention_backend"] != "auto":
            args += ["--attention-backend", s["attention_backend"]]
        if not s["extensible_kv_cache"] and not s["kv_cache_memory_bytes"] and s["model_runner"] != "v1":
            args.append("--no-enable-extensible-kv-cache")  # the V1 runner's releases (0.33 and earlier) lack it
        if sc.tp > 1:
            args += ["--tensor-parallel-size", str(sc.tp)]
        if sc.pp > 1:
            args += ["--pipeline-parallel-size", str(sc.pp)]
        if s["data_parallel_size"] > 1:
            args += ["--data-parallel-size", str(s["data_parallel_size"])]
        if s["enable_expert_parallel"]:
            args += ["--enable-expert-parallel"]
        if s["enable_eplb"]:
            args += ["--enable-eplb"]
        eplb = {"num_redundant_experts": s["num_redundant_experts"]} if s["num_redundant_experts"] else {}
        eplb |= {"window_size": s["eplb_window_size"]} if s["eplb_window_size"] != WINDOW_STEPS else {}
        if eplb:
            args += ["--eplb-config", shlex.quote(json.dumps(eplb))]
        if KV_CACHE_DTYPES.get(sc.kv_format, "auto") != "auto":
            args += ["--kv-cache-dtype", KV_CACHE_DTYPES[sc.kv_format]]
        elif sc.kv_format in EXPLICIT_16_BIT and (fp8_cache_for_auto(a, sc) or vllm_dtype.names_16_bit_cache(sc)):
            args += ["--kv-cache-dtype", EXPLICIT_16_BIT[sc.kv_format]]
        args += vllm_dtype.dtype_args(sc)
        if on_load:  # a stored checkpoint names its method in its config; vLLM reads it from there
            args += ["--quantization", QUANTIZE_ON_LOAD[sc.weight_format]]
        if s["block_size"] != DEFAULT_BLOCK_TOKENS:
            args += ["--block-size", str(s["block_size"])]
        if s["num_speculative_tokens"]:
            method = sc.engine_options["speculative_method"]
            drafter = {"model": sc.engine_options["draft_model"] or "<EAGLE-3 drafter>"} if method == "eagle3" else {}
            spec = {"method": method, **drafter, "num_speculative_tokens": s["num_speculative_tokens"]}
            args += ["--speculative-config", shlex.quote(json.dumps(spec))]
        if s["enforce_eager"]:
            args.append("--enforce-eager")
        if not s["enable_chunked_prefill"]:
            args.append("--no-enable-chunked-prefill")
        if s["cpu_offload_gb"]:
            args += ["--cpu-offload-gb", f"{s['cpu_offload_gb']:g}"]
        if s["kv_cache_memory_bytes"]:
            args += ["--kv-cache-memory-bytes", str(s["kv_cache_memory_bytes"])]
        args += self._lora_args(s)
        if s["language_model_only"] and a.encoders:
            args.append("--language-model-only")
        if a.model_type in MISTRAL_FORMAT_ONLY:
            args += ["--tokenizer-mode", "mistral", "--config-format", "mistral", "--load-format", "mistral"]
        return " ".join(args + self._multimodal_args(a, s))

    @staticmethod
    def _lora_args(s: dict[str, Any]) -> list[str]:
        """--enable-lora with the slots and rank it takes (defaults spelled out) and the other LoRA settings given."""
        if not s["enable_lora"]:
            return []
        args = ["--enable-lora", "--max-loras", str(s["max_loras"]), "--max-lora-rank", str(s["max_lora_rank"])]
        if s["fully_sharded_loras"]:
            args.append("--fully-sharded-loras")
        if s["lora_dtype"] != "auto":
            args += ["--lora-dtype", s["lora_dtype"]]
        if targets := sorted(vllm_lora.parse_targets(s["lora_target_modules"])):
            args += ["--lora-target-modules", *targets]
        return args

    @staticmethod
    def _multimodal_args(a: Architecture, s: dict[str, Any]) -> list[str]:
        """The processor kwargs and per-prompt limits set, as JSON arguments quoted for a POSIX shell."""
        if not a.encoders or s["language_model_only"]:
            return []
        args = []
        kwargs = {key: s[f"mm_{key}"] for key in ("max_pixels", "max_soft_tokens") if s[f"mm_{key}"] is not None}
        if kwargs:
            args += ["--mm-processor-kwargs", shlex.quote(json.dumps(kwargs))]
        limits = {m: s[f"limit_{m}"] for m in ("image", "video") if s[f"limit_{m}"] is not None}
        if limits:
            args += ["--limit-mm-per-prompt", shlex.quote(json.dumps(limits))]
        if not s["mm_device_do_normalize"]:
            args.append("--no-mm-device-do-normalize")
        if s["skip_mm_profiling"]:
            args.append("--skip-mm-profiling")
        return args


"""Hugging Face transformers: `generate()` with a DynamicCache, PyTorch eager modules.

Follows transformers 5.x (`src/transformers/cache_utils.py`, `generation/utils.py`,
`integrations/`), checked by `memviz probe` against real runs:

- the whole prompt is one forward (no chunking) and `generate` keeps only the last
  position's logits (`logits_to_keep=1`); `--logits-all` models a plain forward;
- `DynamicCache.update` concatenates, so a decode step briefly holds the largest
  (full-attention) layer's cache twice;
- `DynamicSlidingWindowLayer` keeps its window as a view of the prompt-long tensor
  built at prefill, so until the first decode step every sliding layer holds the
  whole prompt's K/V (the probe sees it as prefill transient);
- MLA models cache the compressed latent (kv_lora_rank + rope per token and layer:
  `DeepseekV2Attention` / `DeepseekV3Attention`, "Cache read / write is performed
  while the latent KV is still compressed", 5.17 and 5.24; measured on an H200:
  DeepSeek-V2-Lite, 4 x 4,111 tokens, 487.78 MiB) and expand it to per-head K/V in
  every forward (`expand_kv`, counted with the activations);
- accelerate offload (`device_map` with CPU layers) streams each offloaded layer's
  weights to the GPU when it runs, while the cache stays on the GPU.
- weights transformers dequantizes while loading take the model's 16-bit dtype: FP8
  checkpoints (`quant_method` "fp8", formats fp8 / fp8-block) on the CPU and on GPUs
  below compute capability 8.9 (`quantizer_finegrained_fp8.py`, `Fp8Dequantize`:
  scales dropped; a real CPU load of a block-FP8 Qwen3 checkpoint held 2,886,912
  bytes for a 1,707,296-byte file, all of it bf16), MXFP4 experts without the
  `kernels` package.
  Where the GPU has FP8 (8.9+) the decoder's linear layers become `FP8Linear` holding
  the file's float8 weights and scales, and the default skip list (`get_keys_to_not_convert`:
  tied keys, the last module, the output embeddings) keeps the LM head a bf16 Linear
  that a tied model shares with its embedding: the checkpoint's bytes, no separate
  output copy (that path loaded on this CPU with CUDA reported at capability 9.0:
  tests/core/engines/test_transformers_fp8.py).

Runtime constants (provenance "constant", editable per scenario; stored runs
calibrate them per machine):

- CUDA: `base.TORCH_CUDA_BASELINE_BYTES`, 686 MiB of non-torch device memory (CUDA
  context, cuBLAS workspace, loaded kernels), the same in all 15 real runs on an
  H200 (transformers 5.17).
- PyTorch's caching allocator reserves more than it hands out: at the peak,
  reserved − allocated was 9–32 % of KV + activations in 13 of those 15 runs
  (median 26 %; two short runs reached 77 % and 280 % of a few hundred MiB), so
  the estimate adds 26 %.
- CPU: 425 MiB of RSS, the interpreter plus the torch and transformers imports and
  the modules loaded while building a model, measured by `memviz probe` in a
  fresh virtual environment (torch 2.13 CPU, transformers 5.24, 2-vCPU Linux; the
  same venv measured 353-436 MiB within one day). Loading through bitsandbytes
  imports it and accelerate on top: +63 MiB (median overhead of 16 bitsandbytes
  runs, 415 MiB, against 32 plain runs, 352 MiB; docs/accuracy-cpu.md). No
  allocator reserve on the CPU.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from memviz.core.activations import inference_workspace
from memviz.core.arch import FULL, SLIDING, Architecture
from memviz.core.engines import bitnet_linear, gptq_kernels, transformers_cache
from memviz.core.engines.base import TORCH_CUDA_BASELINE_BYTES, Engine, Inputs, Option, Placement, compute_bytes
from memviz.core.errors import InputError
from memviz.core.formats import (
    BITSANDBYTES,
    QUANTIZED_ROLES,
    STORED,
    KVFormat,
    Storage,
    WeightFormat,
    get_kv_format,
    get_weight_format,
    tensor_bytes,
)
from memviz.core.gpus import FP8_NATIVE_CAPABILITY
from memviz.core.inventory import Role
from memviz.core.kv import KVLayout, cross_attention_bytes, kv_cache_bytes
from memviz.core.towers import AUDIO
from memviz.core.units import MiB

#: bitsandbytes quantizes a 16-bit checkpoint while loading, as the probe loads it (`memviz/probe/runner.py`)
BITSANDBYTES_CONFIG = {
    "llm-int8": "load_in_8bit=True",
    "bnb-nf4": 'load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_compute_dtype="bfloat16"',
    "bnb-nf4-dq": 'load_in_4bit=True, bnb_4bit_quant_type="nf4", bnb_4bit_use_double_quant=True, '
                  'bnb_4bit_compute_dtype="bfloat16"',
    "bnb-fp4": 'load_in_4bit=True, bnb_4bit_quant_type="fp4", bnb_4bit_compute_dtype="bfloat16"',
}
#: FP8 storages `FineGrainedFP8HfQuantizer` loads (quant_method "fp8": per-tensor or 128 x 128 block scales)
FINEGRAINED_FP8 = frozenset({"fp8", "fp8-block"})
FP8_FORMATS = FINEGRAINED_FP8 | {"fp8-block-mxfp4-moe"}  # the weight formats holding those storages
COMPRESSED_TENSORS = "compressed-tensors"  # the quant_method of llm-compressor's checkpoints
#: bytes a value of the tensors transformers 5.24 keeps wide whatever the model's dtype, by model type: the modules
#: each class names in `_keep_in_fp32_modules_strict` (the routers' `gate.weight`, their `e_score_correction_bias`,
#: AFMoE's and LFM2-MoE's expert biases, sinks), which a load in bf16 or fp16 leaves float32. DeepSeek-V4
#: (modeling_deepseek_v4.py) also makes every RMSNorm and both hyper-connections float32, creates the compressors'
#: position biases in float32 and the hash routers' tid2eid in int64; HY-V4 (modeling_hy_v4.py) keeps its
#: hyper-connections, the indexer's head weights and key norm and the LM head float32; HunYuanMoEV1Gate builds its
#: router `wg` with dtype=torch.float32, and OlmoHybridGatedDeltaNet its A_log from a float32 tensor, which the
#: model's dtype does not change.
_ROUTER = {"router": 4, "router_bias": 4}
WIDE_KINDS = {
    **dict.fromkeys(("deepseek_v3", "glm4_moe", "glm4_moe_lite", "ernie4_5_moe", "deepseek_v32", "glm_moe_dsa",
                     "nemotron_h", "solar_open", "exaone_moe", "hy_v3", "mimo_v2_flash", "axk1", "axk2", "beam",
                     "dots1", "dots3_note_text", "minicpm5_moe"),
                    _ROUTER),
    "deepseek_v2": {"router": 4},
    "kolibri1": {"router_bias": 4},
    "kolibri1_1": {"router_bias": 4},  # Kolibri1_1PreTrainedModel is Kolibri1's
    # ErgoPreTrainedModel._keep_in_fp32_modules_strict (transformers 5.25): the token embedding, every norm (the
    # experts' included), the residual gates, the router and its score bias; its head stays in the model's dtype
    "ergo": {**_ROUTER, "token_embd": 4, "norm": 4, "residual_gate": 4, "exps_norm": 4},
    "hunyuan_v1_moe": {"router": 4},
    "olmo_hybrid": {"ssm_a": 4},
    # KimiLinearPreTrainedModel._keep_in_fp32_modules_strict (transformers 5.25): the router, its score bias and the
    # delta attention's dt_bias
    "kimi_linear": {**_ROUTER, "ssm_dt_bias": 4},
    "afmoe": {"router_bias": 4},
    "lfm2_moe": {"router_bias": 4},  # Lfm2MoeSparseMoeBlock.expert_bias, a float32 buffer
    "flint": {"router": 4, "sinks": 4},
    "muse_spark_text": {**_ROUTER, "residual_gate": 4},  # MuseSparkPreTrainedModel: the router, its bias, both gates
    "mistral_large4_text": {"router": 4, "rope_alpha": 4},  # MistralLarge4PreTrainedModel: rotary_emb, the router
    "deepseek_v4": {"norm": 4, "hc_fn": 4, "hc_base": 4, "hc_scale": 4, "comp_ape": 4, "indexer_comp_ape": 4,
                    "sinks": 4, "router_bias": 4, "tid2eid": 8},
    "hy_v4": {**_ROUTER, "hc_fn": 4, "hc_base": 4, "hc_scale": 4, "indexer_proj": 4, "indexer_k_norm": 4,
              "indexer_k_norm_bias": 4, "sinks": 4, "output": 4},
}
#: the modules a class names in `_keep_in_fp32_modules`, which only an fp16 load keeps float32 (modeling_utils.py:
#: "`_keep_in_fp32_modules` will upcast to fp32 only if the requested dtype is fp16")
FP16_WIDE_KINDS = {
    "gpt_oss": {"norm": 4}, "afmoe": {"norm": 4}, "deepseek_v32": {"indexer_proj": 4}, "glm_moe_dsa": {"indexer_proj": 4},
    "axk2": {"indexer_proj": 4}, "longcat_flash": {"router": 4},  # LongcatFlashPreTrainedModel: classifier.weight
    "deepseek_v4": {"comp_kv": 4, "comp_gate": 4, "indexer_comp_kv": 4, "indexer_comp_gate": 4, "indexer_proj": 4},
}
#: model types whose transformers 5.24 class has no SDPA path (`_supports_sdpa` unset: Gemma2ForCausalLM,
#: GptOssForCausalLM, GPTNeoForCausalLM, BloomForCausalLM, MiMoV2FlashForCausalLM, FlintForCausalLM,
#: DeepseekV4ForCausalLM, VaultGemmaForCausalLM, MptForCausalLM; HYV4ForCausalLM, GraniteSWAForCausalLM and
#: GraniteMoeSWAForCausalLM set it False): without attn_implementation
#: transformers runs them eager, scores materialised (5.17 still ran Gemma-2 with SDPA: the H200 runs in
#: tests/data/probe record it, and a scenario naming sdpa is estimated so)
EAGER_ONLY = frozenset({"gemma2", "gpt_oss", "gpt_neo", "bloom", "mimo_v2_flash", "flint", "deepseek_v4", "hy_v4",
                        "vaultgemma", "mpt", "granite_swa", "granitemoe_swa",
                        "mamba", "falcon_mamba", "mamba2"})  # Mamba(2)PreTrainedModel: no attention to dispatch
_ATTENTION = frozenset({Role.ATTENTION})
_MLP = frozenset({Role.MLP, Role.EXPERT})
RUNTIME_BYTES_CPU = 425 * MiB
BITSANDBYTES_RUNTIME_BYTES_CPU = 63 * MiB
ALLOCATOR_FRACTION_CUDA = 0.26


class Transformers(Engine):
    name = "transformers"
    label = "Hugging Face transformers generate() with DynamicCache"
    version = "transformers 5.x"
    source = "huggingface/transformers src/transformers/cache_utils.py, generation/utils.py (5.x)"
    options = (
        Option("trust_remote_code", bool, False, "run code shipped with the model (launch command only)"),
        Option("mxfp4_kernels", bool, False, "the `kernels` package is installed: MXFP4 experts stay packed "
               "(without it transformers dequantizes them to bf16)"),
        Option("mamba_kernels", bool, False, "mamba_ssm is installed: Mamba and Mamba2 layers (Falcon-Mamba, "
               "Jamba, Granite-4.0-H) run its fused scans (without it transformers' PyTorch reference scans hold "
               "float32 discretisations of the prompt, or chunk x chunk matrices per head)"),
        Option("quant_kernel", str, "auto", "the gptqmodel kernel an AWQ / GPTQ checkpoint runs on (auto: gptqmodel's "
               "pick by compute capability; backend= of AwqConfig / GPTQConfig)", choices=gptq_kernels.KERNELS),
        Option("act_order", bool, None, "the GPTQ checkpoint was quantized with desc_act (default: its "
               "quantization_config's, else false)"),
        Option("images", int, 1, "images per sequence whose vision tokens Llama 3.2 Vision's cross-attention layers "
               "cache (0: text only); no effect on other models", minimum=0),
    )
    supports_offload = True
    quantizes_on_load = frozenset(BITSANDBYTES_CONFIG)
    latent_mla = True

    def linear_state_bytes(self, x: Inputs) -> int:
        """One recurrent layer's state for one sequence (huggingface/transformers 5.24
        src/transformers/cache_utils.py `LinearAttentionLayer`, filled by models/qwen3_5/modeling_qwen3_5.py
        `Qwen3_5GatedDeltaNet.forward` and 5.25 models/mamba/modeling_mamba.py `mamba_scan_forward`; measured by
        tests/core/engines/test_gated_deltanet.py and test_mamba.py): the convolution's last `linear_conv_kernel`
        inputs of its channels (q, k and v; Mamba's x) in the model's dtype, and the recurrent state (value heads x k
        x v; Mamba's d_inner x d_state) in float32 (the delta rule and the discretisation run in fp32), whatever the
        context."""
        return x.a.linear_conv_dim * x.a.linear_conv_kernel * x.act_bytes + x.a.linear_state_values * 4

    def default_attention(self, a: Architecture) -> str:
        """sdpa, or eager for the classes without an SDPA path (`EAGER_ONLY`), as transformers picks when not told."""
        return "eager" if a.model_type in EAGER_ONLY else self.attention_default

    def kv_layout(self, x: Inputs) -> KVLayout:
        """DeepSeek-V4's window-only layers cache in a DynamicSlidingWindowLayer: its K=V vector stored twice."""
        return replace(super().kv_layout(x), k_is_v_twice=True)

    def kv_bytes(self, x: Inputs, layers: range) -> np.ndarray:
        """The caches, DeepSeek-V4's compressor buffers (`compressor_buffer_bytes`) and the cross-attention layers'
        image K/V (`cross_attention_bytes`, option images) for every sequence."""
        cross = x.options["images"] * cross_attention_bytes(x.a, x.kvf, self.kv_layout(x), layers) * x.sequences
        return super().kv_bytes(x, layers) + self.compressor_buffers(x, layers, False) + cross \
            + self.quantized_cache_extra(x, layers)

    def quantized_cache_extra(self, x: Inputs, layers: range) -> np.ndarray | float:
        """What a QuantizedCache keeps beyond its quantized values: quanto's unquantized tokens
        (`transformers_cache.residual_tokens`) beyond their quantized share, for every sequence; fp8's two fp32 scales
        a layer."""
        name = transformers_cache.backend(x.kvf.name)
        if name == "fp8":
            return float(transformers_cache.FP8_SCALE_BYTES * sum(1 for i in layers if x.a.layer_caches_kv(i)))
        if name != "quanto":
            return 0.0
        layout, native = self.kv_layout(x), self.native_kv(x)
        tokens = np.asarray(x.sc.sequence_tokens) if x.seqs_given else x.context
        extra = kv_cache_bytes(x.a, native, 1, layout, layers) - kv_cache_bytes(x.a, x.kvf, 1, layout, layers)
        held = transformers_cache.residual_tokens(tokens) * extra
        return np.sum(held) if x.seqs_given else x.batch * held

    def kv_storage(self, kvf: KVFormat, weight_format: str) -> KVFormat:
        """optimum-quanto keeps a group's scale and shift in the states' dtype: 8 bytes a group for an fp32 model (a
        real CPU run of Llama-3.2-1B in fp32 held 10,240 bytes a quantized token, 40 a head vector of 64)."""
        if transformers_cache.backend(kvf.name) == "quanto" and weight_format == "fp32":
            return replace(kvf, group_bytes=2 * 4)
        return kvf

    def kv_formula(self, x: Inputs) -> str:
        name = transformers_cache.backend(x.kvf.name)
        if name is None:
            return ""
        residual = (f" + up to {transformers_cache.RESIDUAL_TOKENS} newest tokens a sequence in the compute dtype "
                    "(its residual)") if name == "quanto" else ""
        return f"; transformers QuantizedCache, backend {name}{residual}"

    @staticmethod
    def native_kv(x: Inputs) -> KVFormat:
        """The compute dtype's own cache format, which DynamicCache keeps and QuantizedCache dequantizes to."""
        return get_kv_format("fp32" if x.act_bytes == 4 else "bf16")

    def facts(self, x: Inputs, gpu: Any, pool_bytes: float | None, non_kv_bytes: float | None = None,
              loaded_bytes: float = 0.0) -> dict[str, Any]:
        """An AWQ / GPTQ checkpoint's kernel and the scratch it holds; a cross-attention model's image cache: bytes
        per image and sequence, the images each sequence holds."""
        out: dict[str, Any] = {}
        quant = self.quant_kernel(x)
        if quant:
            out.update(quant_kernel=gptq_kernels.LABELS[quant.kernel], quant_act_order=quant.act_order,
                       quant_scratch_bytes=gptq_kernels.scratch_bytes(quant.method, quant.kernel, quant.modules))
        if not x.a.cross_attention_tokens:
            return out
        return {**out, "cross_attention_bytes_per_image": int(cross_attention_bytes(x.a, x.kvf, self.kv_layout(x))),
                "cross_attention_images": x.options["images"], "cross_attention_tokens": x.a.cross_attention_tokens}

    @staticmethod
    def compressor_buffers(x: Inputs, layers: range, prefill: bool) -> np.ndarray | int:
        """`compressor_buffer_bytes` of every sequence (0 but for DeepSeek-V4)."""
        if not x.a.compress_ratios:
            return 0
        if x.seqs_given:
            return sum(compressor_buffer_bytes(x.a, t, x.act_bytes, layers, prefill) for t in x.sc.sequence_tokens)
        return x.batch * compressor_buffer_bytes(x.a, x.context, x.act_bytes, layers, prefill)

    def accepts_weights(self, weight_format: str) -> bool:
        """Not a GGUF mix: transformers 5.25 dequantizes a GGUF file's tensors while loading it
        (src/transformers/modeling_gguf_pytorch_utils.py `load_gguf_checkpoint`: gguf's `dequantize` of each tensor)."""
        return get_weight_format(weight_format).gguf_mix is None

    def check(self, a: Architecture, sc: Any, options: dict[str, Any]) -> None:
        """The AWQ / GPTQ kernel chosen can run here (`gptq_kernels.select`); huggingface/transformers 5.24
        `src/transformers/quantizers/quantizer_fbgemm_fp8.py` `FbgemmFp8HfQuantizer.validate_environment`
        (per-channel FP8, quant_method fbgemm_fp8) refuses to load without a GPU and on GPUs below compute
        capability 9.0 (a real CPU load raises: test_transformers_fp8.py)."""
        super().check(a, sc, options)
        transformers_cache.check(a, sc.kv_format, compute_bytes(sc.weight_format))
        if not a.attends and sc.attention not in (None, "eager"):  # PreTrainedModel._sdpa_can_dispatch raises
            raise InputError(f"{a.model_type} has no attention layers: transformers loads it without an attention "
                             f"implementation (eager), and refuses {sc.attention}")
        if not self.accepts_weights(sc.weight_format):
            raise InputError(f"transformers dequantizes a GGUF file's tensors while loading it (gguf_file): a "
                             f"{sc.weight_format} file runs in the dtype it loads in; choose bf16 weights, or llama.cpp")
        method = gptq_kernels.method_of(a, sc.weight_format)
        if method:
            _quant_kernel(a, sc, method, options["quant_kernel"])
        if sc.weight_format != "fp8-channel" or self.decompressed_format(a, sc) is not None:
            return  # compressed-tensors' per-channel FP8 loads anywhere (a real CPU load: compressed_tensors.json)
        cap = sc.compute_capability
        if sc.device == "cpu" or (cap is not None and cap < (9, 0)):
            where = "on the CPU" if sc.device == "cpu" else f"on a GPU of compute capability {cap[0]}.{cap[1]}"
            raise InputError(f"transformers does not load per-channel FP8 (fbgemm_fp8) {where}: it needs compute "
                             "capability 9.0 or more (H100); choose fp8-block / fp8, or vLLM")

    def placement(self, x: Inputs) -> Placement:
        every = frozenset(range(x.a.num_layers))
        # accelerate runs offloaded layers on the GPU, so their cache stays there too
        kv = frozenset() if x.sc.kv_offload and x.sc.device == "cuda" else every
        return replace(super().placement(x), kv_gpu_layers=kv)

    def kv_transient(self, x: Inputs, layers: range) -> np.ndarray:
        if SLIDING not in x.a.layer_types:
            return x.zeros
        layout = self.kv_layout(x)
        if x.seqs_given:
            seqs = list(x.sc.sequence_tokens)
            held = kv_cache_bytes(x.a, x.kvf, seqs, layout, layers, sliding_tokens=np.asarray(seqs))
        else:
            held = x.batch * kv_cache_bytes(x.a, x.kvf, x.context, layout, layers, sliding_tokens=x.context)
        held = np.asarray(held) + self.linear_states(x, layers) - Engine.kv_bytes(self, x, layers)
        return held + self.compressor_buffers(x, layers, True) - self.compressor_buffers(x, layers, False)

    def activations(self, x: Inputs, last_stage: bool, streamed_layer_bytes: float,
                    first_stage: bool = True, loaded_bytes: float = 0.0) -> np.ndarray:
        a, sc = x.a, x.sc
        act_bytes = x.act_bytes
        chunk = sc.prefill_chunk_tokens
        if chunk:
            step, b, rows = np.minimum(x.longest * x.batch, chunk), np.ones_like(x.batch), x.batch
        else:
            step, b = x.longest, x.batch
            rows = x.batch * x.longest if sc.logits_all_tokens else x.batch
        ws = inference_workspace(a, step, x.longest, b, x.attention, act_bytes, rows if last_stage else 0,
                                 act_bytes + 4, sc.tp, eager_modules=True, mamba_kernels=x.options["mamba_kernels"],
                                 routing_weight_bytes=WIDE_KINDS.get(a.model_type, {}).get("router"))
        scratch = 0
        quant = self.quant_kernel(x)
        if quant:
            tokens, mods = step * b, quant.modules
            ws = replace(ws, attention=ws.attention + gptq_kernels.call_bytes(quant.kernel, mods, _ATTENTION, tokens,
                                                                              quant.act_order, act_bytes),
                         mlp=ws.mlp + gptq_kernels.call_bytes(quant.kernel, mods, _MLP, tokens, quant.act_order,
                                                              act_bytes))
            scratch = gptq_kernels.scratch_bytes(quant.method, quant.kernel, mods)
        ws = replace(ws, attention=ws.attention + bitnet_linear.unpack_bytes(a, sc.weight_format, _ATTENTION, act_bytes),
                     mlp=ws.mlp + bitnet_linear.unpack_bytes(a, sc.weight_format, _MLP, act_bytes))
        return np.maximum(ws.peak + streamed_layer_bytes, self.decode_update_bytes(x)) + scratch

    def decode_update_bytes(self, x: Inputs) -> np.ndarray:
        """What a decode step's cache update holds beyond the cache, in the largest (full-attention) layer:
        DynamicCache's concatenation, or QuantizedCache's dequantized and returned K and V
        (`transformers_cache.update_bytes_per_k_value` for each value of the layer's K)."""
        biggest = next((i for i, kind in enumerate(x.a.layer_types) if kind == FULL), 0)
        layer = range(biggest, biggest + 1)
        if transformers_cache.backend(x.kvf.name) is None:
            return self.kv_bytes(x, layer)
        k_values = Engine.kv_bytes(self, replace(x, kvf=self.native_kv(x)), layer) / (2 * x.act_bytes)
        return transformers_cache.update_bytes_per_k_value(x.kvf.name, x.act_bytes) * k_values

    @staticmethod
    def quant_kernel(x: Inputs) -> gptq_kernels.Checkpoint | None:
        """An AWQ / GPTQ checkpoint as its gptqmodel kernel runs it, else None."""
        a, fmt = x.a, x.sc.weight_format
        method = gptq_kernels.method_of(a, fmt)
        if method is None:
            return None
        bits, asym = gptq_kernels.bits_of(a, fmt), gptq_kernels.asymmetric(a, fmt)
        kernel = _quant_kernel(a, x.sc, method, x.options["quant_kernel"])
        act_order = method == "gptq" and (a.native_act_order if x.options["act_order"] is None
                                          else x.options["act_order"])
        mods = gptq_kernels.modules(a, method, stored=fmt == STORED, bits=bits)
        return gptq_kernels.Checkpoint(method, kernel, mods, act_order, bits, asym)

    def dequantized_storages(self, sc: Any, options: dict[str, Any]) -> frozenset[str]:
        """FP8 without FP8 arithmetic (`dequantizes_fp8`); MXFP4 experts unless the `kernels` package is there
        (`quantizer_mxfp4.py` `Mxfp4HfQuantizer.validate_environment`: it also needs Triton >= 3.4 or a GPU of
        compute capability 7.5, and use_kernels on the CPU; option `mxfp4_kernels`)."""
        mxfp4 = frozenset() if options["mxfp4_kernels"] else frozenset({"mxfp4"})
        return mxfp4 | (FINEGRAINED_FP8 if self.dequantizes_fp8(sc) else frozenset())

    @staticmethod
    def decompressed_format(a: Architecture, sc: Any) -> WeightFormat | None:
        """A compressed-tensors checkpoint run as stored (its own format, or its imported files): transformers 5.24
        loads it compressed (`CompressedTensorsHfQuantizer`, dequantize=False by default) and compressed-tensors
        decompresses each module on its first forward into 16-bit weights beside 16-bit scales
        (`Storage.decompressed_nbytes`): a W4A16 model of 5,211,360 bytes loaded holds 14,255,328 bytes of
        parameters after one forward, and per-channel FP8 / INT8, NVFP4 and MXFP4 alike (compressed-tensors 0.20.1,
        this project's CPU; tests/data/probe/compressed_tensors.json). The checkpoint's format, else None."""
        if a.native_quantizer != COMPRESSED_TENSORS or sc.weight_format not in (a.native_format, STORED):
            return None
        return get_weight_format(a.native_format)

    def weight_extra(self, x: Inputs, layers: range) -> float:
        """Weights dequantized while loading, or decompressed at the first forward, replace their packed bytes by 2
        per value (the bf16 model dtype); the tensors transformers keeps wide take their own width (`WIDE_KINDS`); an
        AWQ / GPTQ format's modules hold what their gptqmodel kernel keeps (`gptq_kernels.held_bytes`)."""
        native = self.decompressed_format(x.a, x.sc)
        if native is not None and x.sc.weight_format == STORED:
            return _imported_decompressed_extra(x, native, layers)
        decompressed = _packed_storages(native)
        storages = self.dequantized_storages(x.sc, x.options)
        wide = WIDE_KINDS.get(x.a.model_type, {})
        if x.sc.weight_format == "fp16":
            wide = {**wide, **FP16_WIDE_KINDS.get(x.a.model_type, {})}
        extra = 0.0
        quant = self.quant_kernel(x)
        if quant:
            mods = tuple(m for m in quant.modules if _in(m.layer, layers))
            extra += gptq_kernels.held_bytes(quant.method, quant.kernel, mods, quant.act_order, quant.bits, quant.asym)
        for t, storage, nbytes in tensor_bytes(x.a, x.wf):
            if not _in(t.layer, layers):
                continue
            if storage in decompressed:
                extra += decompressed[storage].decompressed_nbytes(t.shape) - nbytes
            elif storage in storages:
                extra += t.numel * 2 - nbytes
            elif t.kind in wide:
                extra += t.numel * wide[t.kind] - nbytes
            else:
                extra += bitnet_linear.held_extra(x.a, t, storage, nbytes)
        return extra

    @staticmethod
    def dequantizes_fp8(sc: Any) -> bool:
        """huggingface/transformers 5.24 `src/transformers/quantizers/quantizer_finegrained_fp8.py`
        `FineGrainedFP8HfQuantizer.validate_environment` sets `dequantize` for a pre-quantized FP8 checkpoint without
        a GPU, or on a GPU below compute capability 8.9 (5.0 onwards; 4.x raised instead); `integrations/
        finegrained_fp8.py` `Fp8Dequantize` then writes each matrix in the model's dtype. An unnamed GPU is taken to
        have FP8."""
        cap = sc.compute_capability
        return sc.device == "cpu" or (cap is not None and cap < FP8_NATIVE_CAPABILITY)

    def encoder_bytes(self, x: Inputs) -> float:
        """The encoders' bytes as the engine holds them, and 2 more for each element their class keeps float32 in
        the dtype the model loads in (`Encoder.float32_parameters`): from_pretrained applies `_keep_in_fp32_modules`
        (BLIP-2's Q-Former) to a float16 load only and `_keep_in_fp32_modules_strict` (Apertus 1.5's tokenizers,
        `Encoder.float32_strict`) to a bfloat16 one too (transformers 5.24 modeling_utils.py `_get_dtype_plan`)."""
        held, dtype = super().encoder_bytes(x), load_dtype(x.a, x.sc)
        if not held or x.wf.name == STORED or dtype == "float32":
            return held
        return held + 2.0 * sum(e.float32_parameters for e in x.a.encoders if dtype == "float16" or e.float32_strict)

    def runtime_bytes(self, x: Inputs) -> float:
        if x.sc.device == "cuda":
            return TORCH_CUDA_BASELINE_BYTES
        extra = BITSANDBYTES_RUNTIME_BYTES_CPU if x.wf.name in BITSANDBYTES else 0
        return RUNTIME_BYTES_CPU + extra

    def allocator_fraction(self, x: Inputs) -> float:
        return ALLOCATOR_FRACTION_CUDA if x.sc.device == "cuda" else 0.0

    def launch_command(self, a: Architecture, sc: Any, model: str) -> str:
        opts = sc.engine_options
        attn = sc.attention or self.default_attention(a)
        impl = {"flash": "flash_attention_2"}.get(attn, attn)
        method = gptq_kernels.method_of(a, sc.weight_format)
        dtype = load_dtype(a, sc)
        device_map = '"cpu"' if sc.device == "cpu" else '"auto"' if sc.pp * sc.tp > 1 or sc.gpu_layers is not None \
            else '"cuda"'  # one GPU holds it all, as estimated ("auto" would spill what does not fit to the CPU)
        ref, on_load = self.checkpoint(a, sc, model)
        config = "BitsAndBytesConfig" if on_load else ""
        quant = f"    quantization_config=BitsAndBytesConfig({BITSANDBYTES_CONFIG[sc.weight_format]})," if on_load else ""
        auto_round = gptq_kernels.autoround(a, sc.weight_format)
        if method and opts["quant_kernel"] != "auto":
            config = "AutoRoundConfig" if auto_round else {"awq": "AwqConfig", "gptq": "GPTQConfig"}[method]
            bits = f"bits={gptq_kernels.bits_of(a, sc.weight_format)}, " if config == "GPTQConfig" else ""
            backend = gptq_kernels.AUTOROUND_BACKENDS[method][opts["quant_kernel"]] if auto_round \
                else opts["quant_kernel"]
            quant = f'    quantization_config={config}({bits}backend="{backend}"),'
        auto = auto_class(a)
        lines = [
            f"from transformers import {auto}" + (f", {config}" if config else ""),
            f'model = {auto}.from_pretrained("{ref}", dtype="{dtype}", device_map={device_map},',
            *([quant] if quant else []),
            f'    attn_implementation="{impl}", trust_remote_code={opts["trust_remote_code"]})',
            f"# generate() over {sc.sequences} sequence(s) of up to {sc.longest_sequence:,d} tokens",
        ]
        if cache := transformers_cache.generate_line(sc.kv_format):
            lines.append(cache)
        if a.remote_code:
            lines.insert(0, f"# no transformers class for this release's type: it loads with its own code "
                            f"({a.remote_code})" + ("" if opts["trust_remote_code"] else
                                                    ", only with -o trust_remote_code=true, which runs it"))
        if sc.gpu_layers is not None and sc.device == "cuda":
            lines.insert(0, f"# estimated with layers 0-{min(sc.gpu_layers, a.num_layers) - 1} on the GPU and the rest "
                            "in host RAM; accelerate's \"auto\" map places them by free memory")
        if self.decompressed_format(a, sc) is not None:
            lines.insert(0, "# compressed-tensors decompresses each layer to bf16 on its first forward (estimated so)")
        elif sc.weight_format in FP8_FORMATS and self.dequantizes_fp8(sc):
            lines.insert(0, "# no FP8 arithmetic here: transformers dequantizes the FP8 weights to bf16 (estimated so)")
        if method:
            kernel = _quant_kernel(a, sc, method, opts["quant_kernel"])
            packages = "auto-round gptqmodel" if auto_round else "optimum gptqmodel" if method == "gptq" else "gptqmodel"
            lines.insert(0, f"# pip install {packages}: the {method.upper()} layers run on gptqmodel's "
                            f"{gptq_kernels.LABELS[kernel]} kernel (estimated so)")
        if "mxfp4" in sc.weight_format:
            lines.insert(0, "# pip install kernels: MXFP4 experts stay packed" if opts["mxfp4_kernels"] else
                         "# without the kernels package transformers dequantizes the MXFP4 experts to bf16 (estimated so)")
        return "\n".join(lines)


def describe_cross_attention(facts: dict[str, Any]) -> str:
    """The image cache a cross-attention model's KV holds (`Transformers.facts`), in words: the CLI, the Breakdown
    and the Markdown report say it so."""
    return (f"the KV cache holds {facts['cross_attention_images']} image(s) a sequence in the cross-attention layers "
            f"({facts['cross_attention_tokens']:,d} vision tokens, {facts['cross_attention_bytes_per_image']:,d} bytes "
            "an image; option images)")


def load_dtype(a: Architecture, sc: Any) -> str:
    """The dtype the launch loads the model in: float32 for an fp32 checkpoint, float16 for AWQ / GPTQ on CUDA
    (AwqHfQuantizer.update_dtype casts bf16 to fp16 there and the GPTQ kernels want fp16), else bfloat16."""
    if sc.weight_format == "fp32":
        return "float32"
    return "float16" if gptq_kernels.method_of(a, sc.weight_format) and sc.device == "cuda" else "bfloat16"


def auto_class(a: Architecture) -> str:
    """The transformers auto class that loads what the estimate counts (transformers 5.24
    models/auto/modeling_auto.py): AutoModelForImageTextToText for a model whose vision encoders are counted (its
    `...ForConditionalGeneration`, towers included: MODEL_FOR_IMAGE_TEXT_TO_TEXT_MAPPING_NAMES), since
    AutoModelForCausalLM loads only the language model of Llama 4 and Llama 3.2 Vision and has no class for
    Qwen2.5-VL, Qwen3-VL, Mistral 3 or InternVL; AutoModelForMultimodalLM where an audio encoder is counted (its
    mapping adds Qwen2-Audio, Voxtral, GLM-ASR, Qwen3-ASR, Phi-4-multimodal, MOSS Transcribe-Diarize to those); else
    AutoModelForCausalLM. Where none of these maps the type (a Qwen-Omni thinker, GLM-Image, the Flamingos) the
    architecture names its class (`Architecture.loader`, arch.LOADER_CLASSES)."""
    if a.loader:
        return a.loader
    if any(e.modality == AUDIO for e in a.encoders):
        return "AutoModelForMultimodalLM"
    return "AutoModelForImageTextToText" if a.encoders else "AutoModelForCausalLM"


def _packed_storages(fmt: WeightFormat | None) -> dict[str, Storage]:
    """The packed storages of a compressed-tensors format by name (its matrices' and its experts')."""
    return {s.name: s for s in (fmt.matrix, fmt.experts) if s is not None} if fmt is not None else {}


def _imported_decompressed_extra(x: Inputs, native: WeightFormat, layers: range) -> float:
    """An imported compressed-tensors folder in transformers: its linear layers give way to what the checkpoint's
    format decompresses them to (`Transformers.decompressed_format`); its other tensors count as stored."""
    packed = _packed_storages(native)
    held = sum(packed[s].decompressed_nbytes(t.shape) if s in packed else n for t, s, n in tensor_bytes(x.a, native)
               if t.role in QUANTIZED_ROLES and _in(t.layer, layers))
    return held - sum(t.nbytes for t in x.a.stored if Role(t.role) in QUANTIZED_ROLES and _in(t.layer, layers))


def _quant_kernel(a: Architecture, sc: Any, method: str, choice: str) -> str:
    """The gptqmodel kernel an AWQ / GPTQ checkpoint of `method` runs on in scenario `sc` (`gptq_kernels.select`)."""
    fmt = sc.weight_format
    return gptq_kernels.select(method, sc.device, sc.compute_capability, choice, _nvidia(sc),
                               gptq_kernels.bits_of(a, fmt), gptq_kernels.asymmetric(a, fmt),
                               gptq_kernels.autoround(a, fmt))


def _nvidia(sc: Any) -> bool:
    """Whether the scenario's GPU runs CUDA kernels: an NVIDIA one, or one not named."""
    return not sc.gpu or sc.compute_capability is not None


def _in(layer: int | None, layers: range) -> bool:
    """Whether a tensor of `layer` belongs to the stage of `layers` (the embedding and head: the first stage)."""
    return layer in layers or (layer is None and 0 in layers)


def compressor_buffer_bytes(a: Architecture, tokens: Any, act_bytes: int, layers: range, prefill: bool = False) -> Any:
    """What DeepSeek-V4's compressors keep between forwards for one sequence of `tokens` in `layers` (transformers 5.24
    `DeepseekV4HCACache.store_compression_weights`, `DeepseekV4CSACache.update_overlap_state`; measured by
    tests/core/engines/test_deepseek_v4.py). The tokens since the last closed window stay as a view of the forward's
    projected kv and gate (overlap x width each, `Architecture.layer_compressors`; the model's dtype), so the storage
    behind it is the whole forward's: every prompt token until the first decode step (`prefill`), then the 1 ...
    ratio tokens of the last step's concatenation. The overlapping compressors also keep the last window's first
    half, kv in the model's dtype and gate in float32."""
    tokens, total = np.asarray(tokens), 0
    for i in layers:
        ratio = a.layer_compress(i)
        held = tokens if prefill else np.where(tokens > 0, (tokens - 1) % max(ratio, 1) + 1, 0)
        for width, overlap in a.layer_compressors(i):
            total = total + held * overlap * width * 2 * act_bytes
            if overlap == 2:
                total = total + (tokens >= ratio) * ratio * width * (act_bytes + 4)
    return total

"""llama.cpp (llama-server / libllama) as llama.cpp 0c1e570 sizes its buffers,
the revision vendored by llama-cpp-python 0.3.36.

Context (`src/llama-context.cpp`, `llama_context::llama_context`):
- n_ctx = context x parallel sequences, padded to 256 (`GGML_PAD(n_ctx, 256)`);
  without a unified cache each of the n_seq_max streams gets
  n_ctx_seq = PAD(n_ctx / n_seq_max, 256) cells and n_ctx = n_ctx_seq x n_seq_max;
- n_batch = min(n_ctx, n_batch), n_ubatch = min(n_batch, n_ubatch);
- a quantized V cache needs flash attention: `llama_init_from_model` refuses it
  with flash attention off and turns flash attention on when it is "auto".
KV (`src/llama-kv-cache-iswa.cpp`): full layers keep n_ctx cells; sliding layers
PAD(min(n_ctx, n_swa x (unified ? n_seq_max : 1) + n_ubatch), 256), or n_ctx with
`swa_full`. The cache of a layer follows its weights (`-ngl`) unless
`--no-kv-offload` keeps every layer's cache in host memory. MLA models cache the
latent (`llama-model.cpp`, deepseek2).
Compute buffer (`llama_context::sched_reserve`: the worst-case graph of n_ubatch
tokens against every cell, one output row per token; `ggml/src/ggml-alloc.c`
reuses a tensor's memory once its last consumer ran and computes SOFT_MAX in
place): the largest of
- output: logits n_ubatch x vocab plus two n_ubatch x hidden rows, f32;
- feed-forward: gate, up and their GLU (3 x n_ubatch x I; routed experts
  n_ubatch x top-k rows, a shared expert after them, the larger of the two) plus
  4 x n_ubatch x hidden, with the attention masks (a model with sliding layers has
  two graph inputs: the full and the SWA mask);
- MLA attention (deepseek2): the absorbed query, heads x (2 kv_lora_rank + nope +
  3 rope) per token, plus 3 x n_ubatch x hidden, the mask, and the score matrix
  without flash attention;
- attention without flash attention: one f32 score matrix
  n_kv x n_ubatch x heads per stream (no copy for GQA, softmax in place), the f32
  mask n_kv x n_ubatch, 5 x n_ubatch x hidden of projections and the micro-batch's K and V
  (2 x n_ubatch x the KV width);
with flash attention the mask is f16 and no score matrix exists. The row-set constants
(x n_ubatch x hidden) are what ggml-alloc reported for real model shapes: on a CPU run 4,
5 and 2 (this build on this project's CPU), on a GPU 3, 3.5 and 1, where the token
embedding's rows stay in the host buffer (published CUDA logs, tests/data/published);
the rest is tensor shapes. Beside a GPU the host compute buffer holds those rows and
the masks, f32 (`CUDA_Host compute buffer`). Weights left in host memory (`-ngl`, `--n-cpu-moe`, `-ot`)
are copied into the GPU's compute buffer by the ops the GPU runs for them (op offload, `_offload_copies`).
Output buffer (`llama_context::output_reserve`): vocab x max(1, n_seq_max) f32
logits in host memory. Placement: `-ngl N` offloads the last N repeating layers
(`i_gpu_start = n_layer - ngl`) and the output layer when N > n_layer; the token
embedding stays in host memory (a tied embedding is loaded twice, host input and
GPU output). `--n-cpu-moe N` keeps the routed experts of the first N layers in
host memory. Weights of a CPU run: `llamacpp_cpu` (mapped file, AMX / REPACK copies). With the option `fit`
(llama-server's default `--fit`, on for Ollama) the placement of a scenario that does not fit its GPU is the one
`llamacpp_fit` finds as common/fit.cpp does. With `--mmproj`, libmtmd's own compute buffers for the vision
tower's warm-up image (`llamacpp_mtmd`) sit beside the first GPU's, and its graph inputs in host memory.

Runtime constant: 250 MiB per GPU (CUDA context and cuBLAS workspace: gguf-parser's
`--platform-footprint` default), 150 MiB on a CPU-only run (process, libraries).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import asdict, replace
from functools import lru_cache
from typing import Any

import numpy as np

from memviz.core.arch import CROSS, FULL, KIMI_DELTA, LINEAR, MAMBA, MAMBA2, MAMBA2_ONLY_TYPES, SHORTCONV, SLIDING, Architecture
from memviz.core.engines.base import Engine, Inputs, Option, Placement, encoders_bytes
from memviz.core.engines.llamacpp_cpu import CPU_FEATURES, WeightTensor, cpu_weight_buffers, extra_buffer
from memviz.core.engines.llamacpp_fit import FitPlacement, fit_placement
from memviz.core.engines.llamacpp_fit import applies as fit_applies
from memviz.core.engines.llamacpp_mtmd import MtmdBuffers, mtmd_buffers
from memviz.core.engines.llamacpp_rotation import rotation
from memviz.core.engines.llamacpp_split import N_COPIES, layer_devices, split_points
from memviz.core.errors import InputError
from memviz.core.formats import (
    GGML_TYPES,
    KV_FORMATS,
    LLAMACPP_CACHE_TYPES,
    STORED,
    KVFormat,
    WeightFormat,
    get_weight_format,
    tensor_bytes,
)
from memviz.core.gguf_names import gguf_name, kv_b_split
from memviz.core.inventory import Role, Tensor
from memviz.core.kv import KVLayout, kv_cache_bytes, per_token_layer_bytes
from memviz.core.tensor_table import TensorTable, tensor_table
from memviz.core.tensor_table import on_gpu as tensor_on_gpu
from memviz.core.units import MiB

CONTEXT_PAD = 256
GGUF_ALIGNMENT = 32  # gguf.h GGUF_DEFAULT_ALIGNMENT
CUDA_ALIGNMENT = 128  # ggml-cuda.cu `ggml_backend_cuda_buffer_type_get_alignment`
MATRIX_ROW_PADDING = 512  # ggml-cuda/common.cuh: a quantized matrix's last row is padded to a multiple of this
RUNTIME_BYTES_CUDA = 250 * MiB
RUNTIME_BYTES_CPU = 150 * MiB
CACHE_TYPES = LLAMACPP_CACHE_TYPES
QUANTIZED_KV = frozenset(k for k in CACHE_TYPES if KV_FORMATS[k].group)  # ggml block types
#: n_ubatch x hidden f32 row sets that ggml-alloc keeps alive beside the feed-forward's three n x I tensors (an MLP
#: wider than two hidden widths; narrower ones: `LlamaCpp._ffn_hidden_rows`), beside
#: the score matrix without flash attention, and beside the logits: on a CPU run (measured with 0c1e570 on this
#: project's CPU, docs/engines.md) and on a GPU, where the token embedding's rows live in the host buffer
#: (published CUDA logs, tests/data/published; the feed-forward's GPU figure is the CPU one less those rows)
FFN_UNITS_HIDDEN = {"cpu": 4.0, "gpu": 3.0}
#: ... and beside the score matrix the micro-batch's K and V rows, f32 (`LlamaCpp._kv_rows`): 2 x the KV width more,
#: measured at hidden 4,096 over 4-32 KV heads of 128 (-0.0 % each; a quarter of the hidden width was folded into
#: these units before, -3.8 % at Llama-2-7B's 32 KV heads)
ATTN_UNITS_HIDDEN = {"cpu": 5.0, "gpu": 3.5}
OUTPUT_UNITS_HIDDEN = {"cpu": 2.0, "gpu": 1.0}
#: Gemma 3n's graph (src/models/gemma3n.cpp) in f32 rows a token, fitted to 44 ggml-alloc reserves of 20 shapes on this
#: project's CPU (hidden 512-2,048, MLP 1,024-16,384, 22-35 layers; E2B's and E4B's widths within 3 %, 41 of 44 within
#: 10 %, all within 15 %: tests/data/llamacpp/gemma3n_buffers.json, docs/engines.md): projecting the per-layer inputs
#: keeps four copies of all layers' (n_layer x 256 a token) and two hidden rows; a layer's feed-forward keeps them once,
#: its gate and up and the activation sparsity's temporaries (three MLP widths) and AltUp's four streams with their
#: predictions and corrections (ten hidden rows); where the MLP is narrow (at most twice hidden) stacking AltUp's
#: streams keeps twenty hidden rows beside the per-layer inputs
ALTUP_START_UNITS = {"per_layer": 4.0, "hidden": 2.0}
ALTUP_FFN_UNITS = {"mlp": 3.0, "hidden": 10.0}
ALTUP_WIDE_HIDDEN = 20.0
#: the same beside an MLA model's attention (deepseek2.cpp), flash attention or not: 3 on this project's CPU
#: (`benchmarks/llamacpp_mla_sweep.py`); the GPU figure, one row set less as above, is not measured
MLA_UNITS_HIDDEN = {"cpu": 3.0, "gpu": 2.0}
# a gated delta-net or Mamba2 layer's stage (`_deltanet_stage`, `_mamba2_stage`): hidden rows measured on this
# project's CPU; the GPU figure assumes the token embedding's rows stay in the host buffer as for the other stages
# (not measured on a GPU)
DELTANET_UNITS_HIDDEN = {"cpu": 3.0, "gpu": 2.0}
#: Gemma 3n's layers that cache K/V in llama.cpp, fixed (ggml-org/llama.cpp 0c1e570 src/models/gemma3n.cpp
#: `load_arch_hparams`: n_layer_kv_from_start = 20, as in E2B's 30 - 10 and E4B's 35 - 15)
GEMMA3N_KV_LAYERS = 20
#: Gemma 3n's shapes llama.cpp 0c1e570 does not read from the file but fixes (src/llama-hparams.h: n_altup 4,
#: laurel_rank 64, n_embd_altup 256; conversion/gemma.py `Gemma3NModel` asserts 4 AltUp inputs): a file of another
#: shape fails at its tensors' shapes
GEMMA3N_FIXED = {"altup_inputs": 4, "laurel_rank": 64, "per_layer_input_size": 256}
#: a layer's K projection as a GGUF file (separate or fused) and a transformers checkpoint name it
_K_PROJECTIONS = ("attn_k.weight", "attn_qkv.weight", "self_attn.k_proj.weight")
#: model types llama.cpp 0c1e570 builds no model for (src/llama-model.cpp `llama_model_mapping` throws "unsupported
#: model architecture"; conversion/__init__.py `TEXT_MODEL_MAP` names none of their transformers classes)
#: model types whose llama.cpp 0c1e570 architecture keeps a sliding-window cache: those whose `load_arch_hparams`
#: sets a swa_type (src/models/gemma2.cpp, gemma3.cpp, gemma3n.cpp, gemma4.cpp, openai-moe.cpp, cohere2.cpp,
#: cohere2moe.cpp, olmo2.cpp, exaone4.cpp, exaone-moe.cpp, afmoe.cpp, laguna.cpp, llama4.cpp, mimo2.cpp,
#: muse-glimmer.cpp, granite-swa.cpp, mellum.cpp, deepseek4.cpp, dots3note.cpp). The others run a config's window
#: as full attention: Mistral and Mixtral convert to llama, which has none; Qwen2 / Qwen3, Starcoder2 and PhiMoE
#: load none; Phi-3 reads it and sets swa_type NONE (phi3.cpp: "TODO: fix conversion scripts").
SWA_TYPES = frozenset({"gemma2", "gemma3_text", "gemma3n_text", "gemma4_text", "gpt_oss", "cohere2", "cohere2_moe",
                       "olmo3", "exaone4", "exaone_moe", "afmoe", "laguna", "llama4_text", "mimo_v2_flash",
                       "muse_glimmer_text", "granite_swa", "granitemoe_swa", "mellum", "deepseek_v4",
                       "dots3_note_text"})
NO_ARCHITECTURE = frozenset({"opt", "gptj", "codegen", "gpt_neo", "persimmon", "flint", "nanochat", "axk1",
                             "kolibri1", "beam", "flex_olmo", "hyperclovax", "lfm3",
                             "olmo_hybrid", "cosmos3_edge_text", "aria_text",
                             "molmo2_text", "helium", "vaultgemma", "cwm", "muse_spark_text",
                             "mistral_large4_text", "axk2", "diffllama", "modernbert-decoder",
                             "emu3_text_model", "minicpm5_moe", "ergo", "kolibri1_1", "voxtral_realtime_text",
                             "longcat_flash"})
#: a Kimi delta attention layer's stage (`_kda_stage`): hidden rows, rows of heads x head width and values a head
#: a token, fitted on this project's CPU over seven shapes (benchmarks/llamacpp_kimi_linear_sweep.py); the GPU's
#: hidden rows one fewer, as for the other stages (not measured on a GPU)
KDA_UNITS_HIDDEN = {"cpu": 3.0, "gpu": 2.0}
KDA_UNITS_WIDTH = 7.0
KDA_UNITS_HEAD = 5.0
#: the same stage in the graph of n_seq_max sequences, its states beside: a hidden row and half a width fewer a token
KDA_EVERY_UNITS_WIDTH = 6.5
#: hidden rows beside a MiniMax-M3 sparse layer's mask (`_msa_stage`): fitted on this project's CPU; the GPU figure
#: one row less, as for the other stages (not measured on a GPU)
MSA_UNITS_HIDDEN = {"cpu": 3.0, "gpu": 2.0}
#: Falcon-H1's Mamba2 stage keeps two hidden rows more than Granite-4.0-H's: the attention's output, computed first
#: and added after the mixer (ggml-org/llama.cpp 0c1e570 src/models/falcon-h1.cpp `llama_model_falcon_h1::graph`),
#: and one the allocator keeps. Fitted on this project's CPU
#: over five shapes (hidden 1,024-2,048, mixer width 1,536-3,072, d_state 128-256, 1-2 groups) within 2.4 % with
#: flash attention (tests/probe/test_llamacpp_live.py)
PARALLEL_MAMBA_UNITS = 2.0
#: an LFM2 short convolution's own rows a token beside them (`_shortconv_stage`): in_proj's B, C and x and B x x;
#: the concatenation, the convolution's output and C times it reuse freed rows (ggml-alloc). Fitted on this
#: project's CPU over three shapes (hidden 1,024-2,048, 3-4 taps) within 1 % (tests/probe/test_llamacpp_live.py)
SHORTCONV_UNITS = 4.0
#: a Mamba block's mixer-wide rows a token beside the hidden rows (`_mamba_stage`): in_proj's x and z, the convolved
#: x, dt and the scan's output; fitted on this project's CPU (benchmarks/llamacpp_mamba_sweep.py)
MAMBA_UNITS_INNER = 5.0
#: the output stage of a graph of Mamba or Mamba2 blocks only (src/models/mamba.cpp) keeps one hidden row more than
#: `OUTPUT_UNITS_HIDDEN`: measured on this project's CPU at Mamba-130M's and Falcon-Mamba-7B's widths and vocabularies
#: (-1.5 / -5.3 % without it) and on a Mamba2 shape of a 65,536-token vocabulary; not measured on a GPU
MAMBA_OUTPUT_UNITS = 1.0


_MATMUL_ROLES = frozenset({Role.ATTENTION, Role.MLP, Role.EXPERT, Role.ROUTER, Role.LM_HEAD})
#: graph stages of the weights an offloaded op copies to the GPU (the output matmul of a tied model reads the
#: token embedding)
_ATTN_ROLES = frozenset({Role.ATTENTION})
_FFN_ROLES = frozenset({Role.MLP, Role.EXPERT, Role.ROUTER})
_OUTPUT_ROLES = frozenset({Role.LM_HEAD, Role.EMBEDDING})
OP_OFFLOAD_MIN_BATCH = 32  # ggml-cuda.cu: GGML_OP_OFFLOAD_MIN_BATCH's default


def _one_per_kind(a: Architecture, layers: list[int]) -> list[int]:
    """The first of `layers` of each attention kind (full, sliding): one layer's KV stands for its kind."""
    return list({a.layer_types[i]: i for i in reversed(layers)}.values())


def dsv4_state_bytes(a: Architecture, i: int) -> int:
    """DeepSeek-V4's compressor state in layer i for one sequence (ggml-org/llama.cpp 0c1e570
    src/llama-kv-cache-dsv4.cpp `llama_dsv4_comp_state`, n_rs_seq = 0): kv and score planes of F32, state_size rows
    of n_embd_state: 2 x ratio rows of 2 x head_dim with the overlapping windows of compressed sparse attention
    (and the same at indexer_head_dim for its indexer), ratio rows of head_dim for heavily compressed attention."""
    return sum(2 * 4 * overlap * a.layer_compress(i) * overlap * width for width, overlap in a.layer_compressors(i))


def latent_cache(a: Architecture) -> bool:
    """llama.cpp caches an MLA model's latent (K only, kv_lora_rank + rope per token and layer) when its GGUF holds
    attn_k_b / attn_v_b (key_length_mla in the metadata, converted since PR #12801); a legacy file with the unsplit
    attn_kv_b runs the per-head path and caches K (nope + rope) and V per head (ggml-org/llama.cpp 0c1e570
    src/llama-hparams.cpp `is_mla`, src/models/deepseek2.cpp, src/llama-kv-cache.cpp). MiniCPM3 always runs the
    per-head path (src/models/minicpm3.cpp: attn_kv_b's K and V per head into `build_attn`): `kv_b_split`."""
    return kv_b_split(a)


def cuda_alloc_bytes(storage: str, shape: tuple[int, ...], nbytes: int) -> int:
    """What a tensor takes in a CUDA buffer (ggml-org/llama.cpp 0c1e570 ggml/src/ggml-cuda/ggml-cuda.cu
    `ggml_backend_cuda_buffer_type_get_alloc_size`, laid out by ggml-alloc.c `ggml_backend_alloc_ctx_tensors_from_buft`
    at the buffer's alignment): a quantized matrix whose row length (ne0, the shape's last entry) is not a multiple
    of 512 gets one partial row more, then every tensor is padded to 128 bytes. Checked by a published CUDA load
    whose expert matrices have rows of 768 (Qwen3-Coder-30B-A3B, tests/data/published)."""
    block, block_bytes = GGML_TYPES.get(storage.upper(), (1, 0))
    if block > 1 and shape and shape[-1] % MATRIX_ROW_PADDING:
        nbytes += (MATRIX_ROW_PADDING - shape[-1] % MATRIX_ROW_PADDING) // block * block_bytes
    return -(-nbytes // CUDA_ALIGNMENT) * CUDA_ALIGNMENT


@lru_cache(maxsize=64)
def _cuda_extra(a: Architecture, wf: WeightFormat) -> np.ndarray:
    """Per tensor of `tensor_table(a, wf)` (the same rows, in the same order): the bytes a CUDA buffer adds."""
    return np.array([cuda_alloc_bytes(storage, t.shape, nbytes) - nbytes for t, storage, nbytes in tensor_bytes(a, wf)],
                    dtype=np.float64)


def pad(x: Any, multiple: int) -> Any:
    return -(-np.asarray(x) // multiple) * multiple


#: buffer types an override can name, exactly as ggml names them (llama.cpp looks the name up case-sensitively):
#: the host's, or an accelerator's (which keeps the tensor where -ngl puts it)
_HOST_BUFFERS = ("CPU",)
_DEVICE_BUFFER = re.compile(r"(CUDA|ROCm|Metal|Vulkan|SYCL|CANN|MUSA|RPC)\S*")


def tensor_overrides(spec: str) -> tuple[tuple[re.Pattern, bool], ...]:
    """llama.cpp 0c1e570's `-ot PATTERN=BUFFER[,...]` (common/arg.cpp `parse_tensor_buffer_overrides`) as (pattern,
    to host) pairs; the first pattern that `std::regex_search`es a tensor's GGUF name decides
    (src/llama-model-loader.cpp `create_tensor`: the overrides loop)."""
    out = []
    for part in (p for p in re.split(r"[,;]", spec) if p.strip()):  # ';' also separates (the app splits on ',')
        pattern, sep, buffer = part.partition("=")
        if not sep or not pattern or not buffer:
            raise InputError(f"override_tensor: {part!r} is not PATTERN=BUFFER (e.g. 'exps=CPU')")
        if buffer not in _HOST_BUFFERS and not _DEVICE_BUFFER.fullmatch(buffer):
            raise InputError(f"override_tensor: unknown buffer type {buffer!r} (CPU, or a device such as CUDA0)")
        try:
            out.append((re.compile(pattern), buffer in _HOST_BUFFERS))
        except re.error as exc:
            raise InputError(f"override_tensor: {pattern!r} is not a regular expression ({exc})") from None
    return tuple(out)


@lru_cache(maxsize=256)
def host_tensors(a: Architecture, wf: WeightFormat, spec: str) -> frozenset[str]:
    """Inventory names of the tensors `-ot` sends to host memory."""
    rules = tensor_overrides(spec)
    if not rules:
        return frozenset()
    out = set()
    for t, _, _ in tensor_bytes(a, wf):
        name = gguf_name(t, a)
        to_host = next((host for pattern, host in rules if pattern.search(name)), False)
        if to_host:
            out.add(t.name)
    return frozenset(out)


@lru_cache(maxsize=64)
def weight_tensors(a: Architecture, wf: WeightFormat) -> tuple[WeightTensor, ...]:
    """Every weight as llama.cpp's CPU backend sees it (type, shape, file offset), in `tensor_table`'s order."""
    rows = tensor_bytes(a, wf)
    offsets = {t.name: t.offset for t in a.stored} if wf.name == STORED else _quantizer_offsets(a, wf, rows)
    # ggml's extra buffers take 2-D matrix products and 3-D expert products (MUL_MAT_ID), not MLA's
    # per-head 3-D attn_k_b / attn_v_b (repack.cpp `supports_op`)
    return tuple(WeightTensor(t.name, storage.upper(), tuple(reversed(t.shape)), nbytes, offsets.get(t.name),
                              _matmul(t) and (len(t.shape) == 2 or t.role is Role.EXPERT))
                 for t, storage, nbytes in rows)


def _matmul(t: Tensor) -> bool:
    """Whether llama.cpp reads `t` by a matrix product of its own shape (ggml-org/llama.cpp 0c1e570 src/llama-arch.cpp
    LLM_TENSOR_INFOS; checked by the DeepSeek-V4 runs of tests/probe/test_llamacpp_live.py):
    DeepSeek-V4's hyper-connection projections are MUL_MAT weights, its attn_output_a is loaded as 3-D (one
    matrix a group: src/models/deepseek4.cpp, TENSOR_ALLOW_RESHAPE), which the extra buffers do not take."""
    if t.kind == "hc_fn" or t.name.endswith(("hc_attn_fn.weight", "hc_ffn_fn.weight", "output_hc_fn.weight")):
        return True  # (a GGUF file's own tensors go by their names)
    return t.is_matrix and t.role in _MATMUL_ROLES and not (t.kind == "o_a" or t.name.endswith("attn_output_a.weight"))


def _quantizer_offsets(a: Architecture, wf: WeightFormat, rows) -> dict[str, int]:
    """Where each tensor lies in a file of a quantized mix: llama.cpp's quantizer writes them in its loader's
    order, by layer (the others first) then by name (ggml-org/llama.cpp 0c1e570 src/llama-model-loader.h
    `weight_name_comparer`, src/llama-quant.cpp `llama_model_quantize_impl`), each padded to
    GGUF_DEFAULT_ALIGNMENT (32 bytes); checked by the published Pythia CPU load (tests/data/published) and the
    DeepSeek-V2 load in tests/data/llamacpp. Float files keep the converter's order: none given."""
    if wf.gguf_mix is None or wf.name.upper() in ("F16", "BF16", "F32"):
        return {}
    ordered = sorted(rows, key=lambda r: (-1 if r[0].layer is None else r[0].layer, gguf_name(r[0], a)))
    offsets, at = {}, 0
    for t, _, nbytes in ordered:
        offsets[t.name] = at
        at += -(-nbytes // GGUF_ALIGNMENT) * GGUF_ALIGNMENT
    return offsets


class LlamaCpp(Engine):
    name = "llamacpp"
    label = "llama.cpp / llama-server with a GGUF file"
    version = "llama.cpp 0c1e570 (llama-cpp-python 0.3.36)"
    source = ("ggml-org/llama.cpp 0c1e570: src/llama-context.cpp (n_ctx padding, sched_reserve, output_reserve), "
              "src/llama-kv-cache-iswa.cpp, ggml/src/ggml-alloc.c")
    options = (
        Option("n_ubatch", int, None, "physical batch (-ub); default the scenario's prefill chunk, else 512", minimum=1),
        Option("n_batch", int, 2048, "logical batch (-b)", minimum=1),
        Option("flash_attn", str, "auto", "flash attention (-fa)", choices=("auto", "on", "off")),
        Option("kv_unified", bool, False, "one KV buffer shared by all sequences (-kvu; off when -np is given)"),
        Option("swa_full", bool, False, "full-size cache for sliding-window layers (--swa-full)"),
        Option("n_cpu_moe", int, 0, "layers whose routed experts stay in host memory (--n-cpu-moe)", minimum=0),
        Option("override_tensor", str, "", "tensors by GGUF-name pattern to a buffer, e.g. 'exps=CPU' "
               "(-ot PATTERN=BUFFER[,...], ';' also separates; CPU keeps them in host memory)"),
        Option("mmap", bool, True, "map the GGUF file instead of reading it into memory (off: --no-mmap)"),
        Option("repack", bool, True, "CPU weights packed for AMX / AVX / ARM kernels (off: --no-repack)"),
        Option("fit", bool, False, "place layers and MoE experts as llama-server's --fit does when they do not all "
               "fit the GPU, leaving it 1 GiB free (llama-server's default; off here, where -ngl states the placement)"),
        Option("host_buffer", bool, True, "beside a GPU, weights kept in host memory use the GPU's host buffer "
               "type ahead of the CPU's packed ones, so none is packed (off: --no-host)"),
        Option("cpu", str, "avx2", "CPU features deciding which weights are packed on a CPU run",
               choices=CPU_FEATURES),
        Option("attn_rotation", bool, True, "Hadamard rotation of q, k and v beside a quantized KV cache, its "
               "matrices graph inputs (off: LLAMA_ATTN_ROT_DISABLE=1)"),
        Option("op_offload", bool, True, "a GPU runs the micro-batch's ops on weights kept in host memory, copying "
               "each weight in (off: --no-op-offload)"),
        Option("tensor_split", str, "", "with several GPUs (pp), each one's share of the layers, e.g. '3,1' (-ts); "
               "empty: equal shares, as llama.cpp splits by the free memory of identical GPUs"),
        Option("mmproj", bool, False, "a multimodal model's encoders loaded from their mmproj file (--mmproj), on "
               "the GPU (--mmproj-offload, the default)"),
        Option("image_max_tokens", int, 0, "largest image libmtmd takes, in merged tokens (--image-max-tokens; 0: "
               "the projector's own); sizes the buffer an image that large grows to, not the warm-up's", minimum=0),
    )
    attention_default = "flash"
    supports_offload = True
    default_kv_format = "fp16"  # common/common.h cache_type_k / cache_type_v: GGML_TYPE_F16

    # --- resolved settings --------------------------------------------------------------
    def flash(self, sc: Any, options: dict[str, Any]) -> bool:
        """Flash attention as llama.cpp resolves it: "auto" turns it on (every ggml backend has the op)."""
        return not (options["flash_attn"] == "off" or sc.attention == "eager")

    @staticmethod
    def micro_batch(sc: Any, options: dict[str, Any]) -> int:
        """n_ubatch asked for: the option, else the scenario's prefill chunk, else llama.cpp's 512."""
        return options["n_ubatch"] or sc.prefill_chunk_tokens or 512

    def batches(self, x: Inputs) -> tuple[int, int]:
        """(n_batch, n_ubatch) the engine asks llama.cpp for, before llama.cpp clamps them to n_ctx."""
        return x.options["n_batch"], self.micro_batch(x.sc, x.options)

    def accepts_weights(self, weight_format: str) -> bool:
        """A GGUF file's types (ggml-org/llama.cpp 0c1e570 src/llama-model-loader.cpp reads GGUF only): a GGUF mix,
        a float file (F32 / BF16 / F16), or an imported file's own tensors."""
        return weight_format in ("fp32", "bf16", "fp16", STORED) or get_weight_format(weight_format).gguf_mix is not None

    def check(self, a: Architecture, sc: Any, options: dict[str, Any]) -> None:
        super().check(a, sc, options)
        if CROSS in a.layer_types:
            raise InputError("llama.cpp 0c1e570 cannot run Llama 3.2 Vision (mllama): it has no architecture with "
                             "cross-attention layers (src/llama-arch.cpp), and Ollama runs it on its own engine, which "
                             "memviz does not model; estimate it with transformers")
        if a.linear_mixer == MAMBA or a.model_type in MAMBA2_ONLY_TYPES:
            _check_mamba(a)
        if a.linear_mixer == KIMI_DELTA and a.state_layers and a.linear_v_heads != a.num_heads:
            raise InputError("llama.cpp's kimi-linear gives the delta attention the model's head count "
                             "(src/models/kimi-linear.cpp: n_head x kda.head_dim): this config has "
                             f"{a.linear_v_heads} delta heads beside {a.num_heads} attention heads")
        if a.model_type in NO_ARCHITECTURE:
            raise InputError(f"llama.cpp 0c1e570 cannot run {a.model_type} models: it has no such architecture "
                             "(src/llama-model.cpp llama_model_mapping) and its converter none of their classes; "
                             "estimate them with transformers or vLLM")
        if a.altup_inputs:
            self._check_gemma3n(a)
        if a.model_type == "bitnet" and not a.tie_word_embeddings:  # src/models/bitnet.cpp: tok_embd is the output
            raise InputError("llama.cpp's bitnet architecture has no output layer (src/models/bitnet.cpp projects with "
                             "tok_embd; gguf-py's MODEL_TENSORS[BITNET] names no output, so an untied lm_head does not "
                             "convert); this config does not tie its embeddings")
        if a.model_type == "mellum" and not all(a.moe_layers):  # src/models/mellum.cpp `load_arch_tensors`
            raise InputError("llama.cpp's Mellum builds experts in every layer (ffn_gate_inp and the expert tensors "
                             "are required); this config has dense layers (mlp_layer_types)")
        if a.model_type == "bailing_moe" and not all(a.moe_layers):  # src/models/bailingmoe.cpp `load_arch_tensors`
            raise InputError("llama.cpp's bailingmoe builds experts in every layer (ffn_gate_inp and the expert "
                             "tensors are required); this config has dense layers (first_k_dense_replace)")
        if a.model_type == "bailing_moe_v2" and a.num_heads * a.head_dim != a.hidden_size:
            raise InputError("llama.cpp's bailingmoe2 sizes attn_qkv as {n_embd, n_embd + 2 n_embd_gqa} "
                             "(src/models/bailingmoe2.cpp `load_arch_tensors`): a model whose heads x head_dim "
                             f"({a.num_heads} x {a.head_dim}) differs from its hidden size ({a.hidden_size}) does not load")
        if not self.accepts_weights(sc.weight_format):
            raise InputError(f"{self.label.split(' ')[0].rstrip(',')} runs GGUF files, whose types are llama.cpp's (Q4_K_M, Q8_0, "
                             f"F16, ...: convert_hf_to_gguf.py, llama-quantize); {sc.weight_format} is not one")
        if sc.kv_format not in CACHE_TYPES:
            raise InputError(f"llama.cpp has no cache type {sc.kv_format!r}; it takes {', '.join(CACHE_TYPES.values())}")
        if sc.kv_format in QUANTIZED_KV and not self.flash(sc, options):
            raise InputError(f"llama.cpp refuses a quantized V cache ({sc.kv_format}) without flash attention")
        if sc.kv_format in QUANTIZED_KV:
            self._check_cache_blocks(a, KV_FORMATS[sc.kv_format])
        if set(a.compress_ratios) - {0, 4, 128}:
            raise InputError("llama.cpp caches DeepSeek-V4's compressed layers at ratios 4 and 128 only "
                             f"(llama-kv-cache-dsv4.cpp), not {sorted(set(a.compress_ratios) - {0, 4, 128})}")
        if options["n_cpu_moe"] and not a.is_moe:
            raise InputError("n_cpu_moe needs a mixture-of-experts model")
        tensor_overrides(options["override_tensor"])
        if options["tensor_split"] and sc.pp == 1:
            raise InputError("tensor_split shares layers among several GPUs: set pp to their number")
        if options["image_max_tokens"] and not options["mmproj"]:
            raise InputError("image_max_tokens is libmtmd's (--image-max-tokens): it needs the mmproj loaded (mmproj)")
        split_points(sc.pp, options["tensor_split"])

    def runs_as(self, a: Architecture, options: dict[str, Any]) -> Architecture:
        """A type whose llama.cpp architecture has no sliding-window cache (`SWA_TYPES`) runs its windows as full
        attention: every layer caches n_ctx cells."""
        if SLIDING not in a.layer_types or a.model_type in SWA_TYPES:
            return a
        return a.windows_in_full()

    @staticmethod
    def _check_cache_blocks(a: Architecture, kvf: KVFormat) -> None:
        """With flash attention, a quantized cache's blocks must divide every layer's key and value head width
        (ggml-org/llama.cpp 0c1e570 src/llama-context.cpp `llama_init_from_model`); an MLA latent cache's are
        kv_lora_rank + rope and kv_lora_rank wide."""
        latent = latent_cache(a)
        widths = {w for i in range(a.num_layers) for w in (
            (a.layer_kv_lora(i) + a.layer_rope_dim(i), a.layer_kv_lora(i)) if latent
            else (a.layer_head_dim(i), a.layer_v_head_dim(i)))}
        if odd := sorted(w for w in widths if w % kvf.group):
            raise InputError(f"llama.cpp refuses a {CACHE_TYPES[kvf.name]} cache for heads {odd[0]} wide: with flash "
                             f"attention its blocks of {kvf.group} values must divide every layer's key and value "
                             "head width (src/llama-context.cpp `llama_init_from_model`)")

    @staticmethod
    def _check_gemma3n(a: Architecture) -> None:
        """Gemma 3n as llama.cpp 0c1e570 builds it (src/models/gemma3n.cpp): the first 20 layers cache K/V, AltUp's
        streams, Laurel's rank and the per-layer width are fixed, and every layer's MLP is layer 0's width
        (`n_ff()`), whatever the file says."""
        if a.num_layers - a.kv_shared_layers != GEMMA3N_KV_LAYERS:
            raise InputError(f"llama.cpp 0c1e570 runs Gemma 3n with its first {GEMMA3N_KV_LAYERS} layers caching K/V "
                             "and the rest reusing them, whatever the file says (src/models/gemma3n.cpp "
                             f"n_layer_kv_from_start); this model has {a.num_layers - a.kv_shared_layers} such layers")
        for field, fixed in GEMMA3N_FIXED.items():
            if getattr(a, field) != fixed:
                raise InputError(f"llama.cpp 0c1e570 fixes Gemma 3n's {field} at {fixed} (src/llama-hparams.h); "
                                 f"this model has {getattr(a, field)}")
        if a.layer_intermediate:
            raise InputError("llama.cpp 0c1e570 builds every Gemma 3n MLP at layer 0's width (src/models/gemma3n.cpp "
                             f"n_ff()); this model's widths vary from {min(a.layer_intermediate)} to "
                             f"{max(a.layer_intermediate)}")
        with_k = {t.layer for t in a.stored if t.name.endswith(_K_PROJECTIONS)}
        if a.stored and with_k and len(with_k) < a.num_layers:
            raise InputError("llama.cpp 0c1e570 loads K and V projections in every Gemma 3n layer "
                             "(src/models/gemma3n.cpp `load_arch_tensors`); this file has none in "
                             f"{a.num_layers - len(with_k)} of its {a.num_layers} layers, as a checkpoint saved by "
                             "transformers 5 leaves out the layers that reuse K/V: convert the released checkpoint")

    def cells(self, x: Inputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(n_ctx cells of a full layer, cells of a sliding layer, n_ubatch), all devices together."""
        o, seqs = x.options, x.sequences
        n_ctx = pad(x.total_tokens, CONTEXT_PAD)
        if not o["kv_unified"]:
            n_ctx = pad(-(-n_ctx // seqs), CONTEXT_PAD) * seqs
        asked_batch, asked_ubatch = self.batches(x)
        n_batch = np.minimum(n_ctx, asked_batch)
        n_ubatch = np.minimum(n_batch, asked_ubatch)
        if o["swa_full"] or SLIDING not in x.a.layer_types:
            return n_ctx, n_ctx, n_ubatch
        window = x.a.sliding_window * (seqs if o["kv_unified"] else 1) + n_ubatch
        swa = pad(np.minimum(n_ctx, window), CONTEXT_PAD)
        if not o["kv_unified"]:
            swa = pad(np.minimum(n_ctx // seqs, x.a.sliding_window + n_ubatch), CONTEXT_PAD) * seqs
        return n_ctx, swa, n_ubatch

    # --- the model of the engine --------------------------------------------------------
    @staticmethod
    def fitted(a: Architecture, sc: Any, options: dict[str, Any]) -> FitPlacement | None:
        """The placement llama-server's --fit gives the scenario (`llamacpp_fit`), or None where it changes nothing."""
        return fit_placement(a, sc) if fit_applies(sc, options) else None

    def stages(self, x: Inputs) -> list[range]:
        """Several GPUs (pp): the layers each holds as llama.cpp splits them (`llamacpp_split`)."""
        if x.sc.pp == 1 or x.sc.device == "cpu":
            return super().stages(x)
        return layer_devices(x.a.num_layers, x.sc.pp, x.sc.gpu_layers, x.options["tensor_split"])

    def options_on(self, sc: Any, pp: int) -> dict[str, Any]:
        """`tensor_split` names the shares of the scenario's own number of GPUs: dropped on another."""
        return {k: v for k, v in sc.options if k != "tensor_split" or pp == sc.pp}

    def pipeline_parallel(self, x: Inputs) -> bool:
        """`llama_context`'s pipeline parallelism: several GPUs holding every layer and the output, the KV cache
        on them, no tensor override (--n-cpu-moe is one)."""
        o, sc = x.options, x.sc
        if sc.device != "cuda" or sc.pp == 1 or o["n_cpu_moe"] or o["override_tensor"]:
            return False
        p = self.placement(x)
        return p.output_on_gpu and len(p.kv_gpu_layers) == x.a.num_layers

    def placement(self, x: Inputs) -> Placement:
        a, sc = x.a, x.sc
        every = frozenset(range(a.num_layers))
        fit = self.fitted(a, sc, x.options)
        gpu_layers = sc.gpu_layers if fit is None else fit.gpu_layers
        o = x.options if fit is None else {**x.options, **fit.options(a)}
        experts = frozenset(range(min(o["n_cpu_moe"], a.num_layers)))
        if sc.device == "cpu":
            return Placement(every, every, True, True)
        host = host_tensors(a, x.wf, o["override_tensor"])
        ngl = a.num_layers + 1 if gpu_layers is None else min(gpu_layers, a.num_layers + 1)
        layers = frozenset(range(a.num_layers - min(ngl, a.num_layers), a.num_layers))
        out_on_gpu = ngl > a.num_layers
        return Placement(layers, frozenset() if sc.kv_offload else layers, False, out_on_gpu,
                         tied_output_copy=a.tie_word_embeddings and out_on_gpu, host_expert_layers=experts & layers,
                         host_tensors=host)

    def kv_layout(self, x: Inputs) -> KVLayout:
        return KVLayout(latent_mla=latent_cache(x.a), kv_heads_divisor=1,
                        v_rows_widest=not self.flash(x.sc, x.options) and not x.a.uniform_attention,
                        indexer_value=x.a.block_indexer)

    def kv_bytes(self, x: Inputs, layers: range) -> np.ndarray:
        """The attention layers' KV cells and the delta-net layers' recurrent states (`linear_state_bytes`)."""
        if x.a.compress_ratios:
            return self._dsv4_cache_bytes(x, layers)
        n_ctx, swa, _ = self.cells(x)
        kv = np.asarray(kv_cache_bytes(x.a, x.kvf, n_ctx, self.kv_layout(x), layers, sliding_tokens=swa)) + x.zeros
        return kv + self.linear_states(x, layers)

    def _dsv4_cache_bytes(self, x: Inputs, layers: range) -> np.ndarray:
        """DeepSeek-V4's cache (ggml-org/llama.cpp 0c1e570 src/llama-kv-cache-dsv4.cpp `llama_kv_cache_dsv4`): one
        stream per sequence whatever kv_unified says, each of n_ctx_seq cells (n_ctx, or n_ctx / n_seq_max when not
        unified); the window cache, an iSWA cache of K only (`dsv4_make_k_only`), GGML_PAD(min(n_ctx_seq, n_swa +
        n_ubatch), 256) cells (n_ctx_seq with --swa-full); the compressed sparse, heavily compressed and
        lightning-indexer caches, K only, GGML_PAD(max(1, ceil(n_ctx_seq / ratio)), 256) cells (`dsv4_comp_size`);
        and `dsv4_state_bytes` of compressor state per compressing layer."""
        n_ctx, _, n_ubatch = self.cells(x)
        seqs = x.sequences
        n_ctx_seq = n_ctx if x.options["kv_unified"] else n_ctx // seqs
        window = n_ctx_seq if x.options["swa_full"] else pad(np.minimum(n_ctx_seq, x.a.sliding_window + n_ubatch),
                                                              CONTEXT_PAD)
        layout = replace(self.kv_layout(x), compressed_pad=CONTEXT_PAD, v_rows_widest=False)
        cache = kv_cache_bytes(x.a, x.kvf, n_ctx_seq, layout, layers, sliding_tokens=window)
        return seqs * (np.asarray(cache) + sum(dsv4_state_bytes(x.a, i) for i in layers)) + x.zeros

    def linear_state_bytes(self, x: Inputs) -> int:
        """One delta-net layer's state for one sequence (ggml-org/llama.cpp 0c1e570 src/llama-memory-recurrent.cpp
        `llama_memory_recurrent`: r_l of n_embd_r and s_l of n_embd_s values, F32 both (src/llama-model.cpp
        `create_memory`: recurrent_type_r / _s GGML_TYPE_F32), one row per sequence (rs_size = max(1, n_seq_max));
        src/llama-hparams.cpp: n_embd_r = (d_conv - 1) x (inner + 2 x groups x state), n_embd_s = state x inner):
        the convolution's last kernel - 1 inputs over q, k and v, and the value heads' k x v states."""
        a = x.a
        return 4 * ((a.linear_conv_kernel - 1) * a.linear_conv_dim + a.linear_state_values)

    def activations(self, x: Inputs, last_stage: bool, streamed_layer_bytes: float,
                    first_stage: bool = True, loaded_bytes: float = 0.0) -> np.ndarray:
        """The compute buffer of the device holding these layers (graph reserve, f32). An op on a weight in host
        memory runs on the first GPU, the scheduler's first backend that takes it (`_offload_copies`): its copies,
        and the logits of an output layer left in host memory, land there; an output layer on the GPUs computes
        the logits on the last. The mmproj's buffer (`llamacpp_mtmd`) goes with the first stage, on libmtmd's
        device (the first GPU, or the CPU of a CPU run)."""
        mmproj = self._mmproj_compute(x, on_host=False) if first_stage else 0.0
        if x.sc.device == "cpu":
            return self._graph_peak(x, last_stage, on_host=True) + mmproj
        output_on_gpu = self.placement(x).output_on_gpu
        logits_here = (last_stage and output_on_gpu) or (first_stage and not output_on_gpu and x.options["op_offload"])
        return self._graph_peak(x, logits_here, on_host=False, copies=first_stage) + self._input_ring(x) + mmproj

    def mmproj_buffers(self, x: Inputs) -> MtmdBuffers | None:
        """libmtmd's start-up compute buffers for the loaded mmproj's vision tower, where memviz sizes them."""
        if not self.encoder_place(x):
            return None
        return mtmd_buffers(x.a.encoders, self.flash(x.sc, x.options), x.options["image_max_tokens"])

    def _mmproj_compute(self, x: Inputs, on_host: bool) -> float:
        """The mmproj's compute bytes on the GPU / CPU that runs it (`on_host` False) or in the host's buffer
        beside a GPU (True): its graph inputs, or the whole buffer where the mmproj stays in host memory."""
        b = self.mmproj_buffers(x)
        if b is None:
            return 0.0
        if x.sc.device == "cpu":
            return 0.0 if on_host else float(b.device_bytes)
        if self.encoder_place(x) == "host":
            return float(b.device_bytes) if on_host else 0.0
        return float(b.host_bytes if on_host else b.device_bytes)

    def _input_ring(self, x: Inputs) -> np.ndarray:
        """With pipeline parallelism, the three more copies of a GPU's inputs its scheduler keeps
        (`llamacpp_split`): the attention masks and the n_ubatch rows of hidden state arriving from the host or the
        previous GPU."""
        if not self.pipeline_parallel(x):
            return x.zeros
        _, masked, n = self._masks(x)
        inputs = self._mask_bytes(x, masked, n) + self._rotation(x)[1]  # both alive through every attention layer
        return (N_COPIES - 1) * (inputs + 4 * n * x.a.hidden_size) + x.zeros

    def _masks(self, x: Inputs) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(n_kv cells a graph attends per stream, cells of its masks, n_ubatch): the masks are graph inputs of
        n_kv x n_ubatch, one per cache (a model with sliding layers has two)."""
        n_ctx, swa, n = self.cells(x)
        streams = 1 if x.options["kv_unified"] else x.sequences
        n_kv = n_ctx // streams
        return n_kv, n_kv + (swa // streams if SLIDING in x.a.layer_types else 0), n

    def _mask_bytes(self, x: Inputs, masked: np.ndarray, n: np.ndarray) -> np.ndarray:
        """The masks on a GPU or a CPU run: 0c1e570 `build_attn_inp_kq_mask` makes them f16 with flash attention."""
        return (2 if self.flash(x.sc, x.options) else 4) * masked * n

    @staticmethod
    def _rotation(x: Inputs) -> tuple[bool, int]:
        """(whether the attention rotates q, k and v beside a quantized cache, the bytes of its matrices and the
        lightning indexer's): `llamacpp_rotation`, one cache type for K and V; DeepSeek-V4's caches, which rotate
        their own way, left out."""
        if x.a.compress_ratios:
            return False, 0
        return rotation(x.a, latent_cache(x.a), bool(x.kvf.group) and x.options["attn_rotation"])

    def _graph_peak(self, x: Inputs, last_stage: bool, on_host: bool, copies: bool = True) -> np.ndarray:
        """ggml-alloc's peak of the worst-case graph on the host (a CPU run, or the host's share beside GPUs) or
        on a GPU."""
        a = x.a
        n_kv, masked, n = self._masks(x)
        where = "cpu" if on_host else "gpu"
        # the graph inputs every attention layer reads, alive until the last one's: the masks and the rotation's
        # matrices; the rotation's nodes move ggml-alloc's placement on a CPU run (measured: `llamacpp_rotation`),
        # where a published CUDA load with it on prints the unmoved logits stage (Qwen3.6-27B, tests/data/published)
        rotated, rotation_bytes = self._rotation(x)
        rotated = rotated and where == "cpu"
        mask = self._mask_bytes(x, masked, n) + rotation_bytes
        h = a.hidden_size
        flash = self.flash(x.sc, x.options)
        scores = 0 if flash else 4 * n_kv * n * a.num_heads  # one f32 score matrix, softmax in place
        if latent_cache(a):
            attn = scores + mask + 4 * n * (self._mla_query_rows(a) + MLA_UNITS_HIDDEN[where] * h)
        elif flash:  # the widest layer's q, k and v (Gemma 4's full layers)
            q, kv = max((a.num_heads * a.layer_v_head_dim(i), a.layer_kv_heads(i) * a.layer_head_dim(i))
                        for i in range(a.num_layers))
            attn = 4 * n * (h + q + 2 * kv) + mask
        else:  # Gemma 4's wider full layers keep about three more query rows and two more K/V rows of the extra
            # width alive (measured on this project's CPU over head widths 64-256 and 1-2 KV heads, within 5 %)
            q_more, kv_more = self._wider_full_layers(a)
            attn = scores + mask + 4 * n * (ATTN_UNITS_HIDDEN[where] * h + self._kv_rows(a) + 3 * q_more + 2 * kv_more)
        if a.indexer_heads and a.is_mla:  # DeepSeek sparse attention (0c1e570 src/llama-graph.cpp `build_attn`, top_k): the
            # indexer cache's own mask, the cache's mask filled with -inf and its top-k rows unmasked, their sum
            attn = attn + 3 * self._mask_bytes(x, n_kv, n)
        if a.hyper_streams and not a.compress_ratios:  # HY-V4 (src/models/hy-v4.cpp): the residual's streams, F32,
            attn = attn + 4 * n * a.hyper_streams * h  # alive through the attention
        if a.is_mla and not latent_cache(a):  # a legacy file's per-head path: q and kv_b's output stay alive too
            attn = attn + 4 * n * a.num_heads * (2 * a.qk_nope_head_dim + a.qk_rope_head_dim + a.v_head_dim)
        if not a.attends:  # Mamba's blocks: no attention, no masks (src/models/mamba.cpp builds no KQ mask)
            attn = mask = x.zeros
        if a.state_layers:  # the delta-net, Mamba2 or short-convolution layers' stage beside attention's
            stage = {MAMBA2: self._mamba2_stage, SHORTCONV: self._shortconv_stage, KIMI_DELTA: self._kda_stage,
                     MAMBA: self._mamba_stage}.get(a.linear_mixer, self._deltanet_stage)
            attn = np.maximum(attn, stage(x, n, where) + mask)
        if a.block_indexer and flash:  # a unified cache of several sequences runs the attention dense
            dense = (np.asarray(x.sequences) > 1) & bool(x.options["kv_unified"])
            attn = np.maximum(attn, np.where(dense, 0, self._msa_stage(x, n_kv, n, where) + mask))
        copy_attn = copy_ffn = copy_output = x.zeros
        if not on_host and copies:
            copy_attn, copy_ffn, copy_output = self._offload_copies(x, n)
        experts = self._experts_rows(a, scores / (4 * n), copy_ffn) if a.is_moe else x.zeros
        hidden_rows = self._ffn_hidden_rows(a, where, rotated)
        ffn = 4 * (self._ffn_rows(a, n, experts) + hidden_rows * n * h) if a.has_ffn else x.zeros
        if a.altup_inputs:
            attn, ffn = self._altup_stages(a, n, attn, mask)
        elif a.per_layer_input_size:  # Gemma 4's projected per-layer inputs, made before the first layer and read by
            per_layer = 4 * n * a.num_layers * a.per_layer_input_size  # every layer (src/models/gemma4.cpp
            attn, ffn = attn + per_layer, ffn + per_layer  # `project_per_layer_inputs`): alive through both stages
        # Qwen3-VL (src/llama-graph.cpp `build_inp_embd`, src/models/qwen3vl.cpp): the input embedding and its padded
        # token rows are 1 + deepstack hidden rows wide, both held through the first layers, the input to the logits
        deep = 4 * n * a.deepstack_layers * h  # (measured: docs/llamacpp-accuracy.md, Qwen3-VL)
        attn, ffn = attn + 2 * deep, ffn + 2 * deep
        rows = OUTPUT_UNITS_HIDDEN[where] + (MAMBA_OUTPUT_UNITS if not a.attends else 0) + int(rotated)
        output = 4 * n * (a.output_rows + rows * h) + deep if last_stage else x.zeros
        attn, ffn = attn + copy_attn, ffn + copy_ffn
        output = output + (copy_output if last_stage else 0)
        # the masks are graph inputs, freed after the last layer's attention (ggml-alloc.c `ggml_gallocr_alloc_graph_impl`):
        ffn_mask = mask if a.num_layers > 1 else 0  # a single layer's feed-forward runs without them
        return np.maximum(np.maximum(ffn + ffn_mask, attn), output) + x.zeros

    @staticmethod
    def _altup_stages(a: Architecture, n: np.ndarray, attn: np.ndarray, mask: np.ndarray
                      ) -> tuple[np.ndarray, np.ndarray]:
        """Gemma 3n's (attention-side, feed-forward) peaks (ggml-org/llama.cpp 0c1e570 src/models/gemma3n.cpp
        `project_per_layer_inputs`, the AltUp stack, `gaussian_topk`, `altup_correct`): `attn` the generic attention
        stage, which counts the score matrix without flash attention; the rows are ALTUP_*'s."""
        h, per_layer = a.hidden_size, a.num_layers * a.per_layer_input_size
        start = 4 * n * (ALTUP_START_UNITS["per_layer"] * per_layer + ALTUP_START_UNITS["hidden"] * h)
        wide = 4 * n * (per_layer + ALTUP_WIDE_HIDDEN * h)
        ffn = 4 * n * (per_layer + ALTUP_FFN_UNITS["mlp"] * a.intermediate_size + ALTUP_FFN_UNITS["hidden"] * h)
        return np.maximum(np.maximum(start, wide) + mask, attn + 4 * n * per_layer), ffn

    def _offload_copies(self, x: Inputs, n: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Bytes that ops on host-resident weights add to a GPU's compute buffer, for the attention, feed-forward and
        output stages. With op offload (llama.cpp's default) the scheduler runs an op whose weight lies in a host
        buffer on the GPU when its batch is at least 32 rows (ggml-org/llama.cpp 0c1e570
        ggml/src/ggml-backend.cpp `ggml_backend_sched_backend_id_from_cur`, ggml/src/ggml-cuda/ggml-cuda.cu
        `ggml_backend_cuda_device_offload_op`, GGML_OP_OFFLOAD_MIN_BATCH): each such op starts a split whose
        inputs, the whole weight in its stored type among them, are copied into the GPU's compute buffer at the
        split's start and freed after their last use (`ggml_backend_sched_split_graph`), and a layer whose KV cache
        is in host memory has its K and V views copied beside its attention. The largest copy of each stage is
        counted beside that stage's peak, an upper bound by at most one n_ubatch x I tensor in the feed-forward
        (the weight is copied before its own matmul, not at the stage's peak). Checked by published CUDA loads with
        layers left in host memory (tests/data/published): the output stage, logits + one row set + the Q6_K output
        matrix, gives QwQ-32B's 916.08 MiB exactly."""
        zero = x.zeros
        if not x.options["op_offload"]:
            return zero, zero, zero
        placement = self.placement(x)
        tt = tensor_table(x.a, x.wf)
        tied_output_on_host = x.a.tie_word_embeddings and not placement.output_on_gpu  # its matmul reads the embedding
        host = ~tensor_on_gpu(x.a, tt, placement) & (~tt.embedding | tied_output_on_host)  # GET_ROWS stays on host
        host &= ~self._packed(x, tt)
        largest = {}
        for stage, roles in (("attn", _ATTN_ROLES), ("ffn", _FFN_ROLES), ("output", _OUTPUT_ROLES)):
            pick = host & np.array([r in roles for r in tt.roles], dtype=bool)
            largest[stage] = float(tt.nbytes[pick].max()) if pick.any() else 0.0
        kv_host = [i for i in range(x.a.num_layers) if i not in placement.kv_gpu_layers]
        kv_layer = max((self.kv_bytes(x, range(i, i + 1)) for i in _one_per_kind(x.a, kv_host)),
                       key=lambda b: float(np.max(b)), default=zero)
        offloaded = n >= OP_OFFLOAD_MIN_BATCH
        return (np.where(offloaded, largest["attn"] + kv_layer, 0.0), np.where(offloaded, largest["ffn"], 0.0),
                np.where(offloaded, largest["output"], 0.0))

    @staticmethod
    def _kv_rows(a: Architecture) -> int:
        """f32 values a token of the micro-batch's K and V alive beside the score matrix without flash attention
        (ggml-org/llama.cpp 0c1e570
        src/llama-graph.cpp `build_attn_mha`: Kcur and Vcur, KV heads x head width each), the narrowest attention
        layer's (Gemma 4's wider full layers add theirs: `_wider_full_layers`). MLA's per-head path counts its own
        (`_graph_peak`: q and kv_b's output)."""
        if a.is_mla:
            return 0
        widths = [a.layer_kv_heads(i) * a.layer_head_dim(i) for i, kind in enumerate(a.layer_types)
                  if kind in (FULL, SLIDING) and a.layer_kv_heads(i)]
        return 2 * min(widths, default=0)

    @staticmethod
    def _wider_full_layers(a: Architecture) -> tuple[int, int]:
        """How much wider the full-attention layers' query and key rows are than the sliding layers' (Gemma 4)."""
        if a.uniform_attention or SLIDING not in a.layer_types:
            return 0, 0
        full = a.layer_types.index(FULL)
        slide = a.layer_types.index(SLIDING)
        q = a.num_heads * (a.layer_head_dim(full) - a.layer_head_dim(slide))
        kv = a.layer_kv_heads(full) * a.layer_head_dim(full) - a.layer_kv_heads(slide) * a.layer_head_dim(slide)
        return max(q, 0), max(kv, 0)

    @staticmethod
    def _experts_rows(a: Architecture, score_rows: np.ndarray, copied: np.ndarray) -> np.ndarray:
        """f32 values a token of the routed experts' stage above the hidden rows FFN_UNITS_HIDDEN counts, as
        ggml-alloc places it. ggml-org/llama.cpp 0c1e570 `build_moe_ffn` (src/llama-graph.cpp) makes gate and up
        (top-k x I a token each), their GLU (a new tensor: GLU ops are not in ggml-alloc.c `ggml_op_can_inplace`),
        then the down projection's top-k x hidden output while the GLU is alive; `ggml_dyn_tallocr_alloc` puts each
        tensor in the smallest free block it fits, else on top of the heap. Without a shared expert the experts'
        normed input (one of those hidden rows) is freed after up: a GLU no wider takes its place and the down
        output then lies where gate and up were, max(2 x top-k x I, top-k x hidden). Otherwise the GLU lies on top
        (3 x top-k x I) and the down output goes in the hole gate and up left, a dense layer's gate and up (DeepSeek's
        and Ling 2.0's leading layers) or the score matrix's without flash attention (`score_rows`; flash
        attention's transients, a few hidden rows, are taken by then), or on top where wider than all:
        + top-k x hidden. A host weight copied into the stage (`_offload_copies`) leaves a hole far wider, which
        holds it. A best-fit replay of these allocations and frees gives llama.cpp's CPU compute buffer with flash
        attention to 0.05 % in three shapes (a Ling-lite shape 26.00 MiB, llama.cpp 26.01; a Qwen3-MoE shape of its
        widths 20.00, 20.01; eight experts of 128 a token 28.00, 28.01); this rule's figures:
        tests/data/llamacpp/moe_experts_buffers.json (within 0.2 % with flash attention) and docs/engines.md."""
        k, width, h = a.experts_per_token, a.moe_intermediate_size, a.hidden_size
        dense_hole = 0 if all(a.moe_layers) or LlamaCpp._delta_before_experts(a) \
            else (2 if a.mlp_gated else 1) * a.intermediate_size
        down, pair = k * h, 2 * k * width
        held_below = (copied > 0) | (down <= score_rows)
        if not a.shared_expert_intermediate_size and k * width <= h:
            return np.where(held_below, pair, max(pair, down))
        return 3 * k * width + np.where(held_below | (down <= max(pair, dense_hole)), 0, down)

    @staticmethod
    def _delta_before_experts(a: Architecture) -> bool:
        """Whether a Kimi delta layer runs its mixer right before experts (ggml-org/llama.cpp 0c1e570
        src/models/kimi-linear.cpp: the delta attention, then `build_moe_ffn` in the same layer): the delta stage's
        tensors (seven widths a token) take the dense layers' hole first (ggml/src/ggml-alloc.c
        `ggml_dyn_tallocr_alloc`, best fit), and the down projection's output lies on top (the release's widths,
        four layers: 113.51 MiB printed; with the hole counted 105.50, -7 %, without 110.03, -3 %; two layers, MLA
        before the experts: 105.51 printed, 105.50 with the hole; tests/data/llamacpp/kimi_linear_wide_buffers.json)."""
        return a.linear_mixer == KIMI_DELTA and any(moe and kind == LINEAR
                                                     for moe, kind in zip(a.moe_layers, a.layer_types, strict=True))

    @staticmethod
    def _ffn_rows(a: Architecture, n: np.ndarray, experts: np.ndarray) -> np.ndarray:
        """f32 values of the largest feed-forward stage per micro-batch: gate, up and their GLU of a dense layer
        (3 x n x I; an ungated one, n x I); in a routed layer the experts' (`_experts_rows`) with the router logits,
        and after them, not beside them, the shared expert's (ggml-org/llama.cpp 0c1e570 src/models/qwen2moe.cpp and deepseek2.cpp:
        `llm_graph_context::build_moe_ffn`, src/llama-graph.cpp, then `build_ffn` of the shared expert; a Qwen2-MoE
        shape whose shared expert is the larger peaks at 3 x n x its width, measured in
        tests/data/llamacpp/mla_moe_buffers.json); a model with both kinds of layer (DeepSeek's leading dense
        layers) reserves for the larger."""
        wide = 2 if a.double_wide_shared_mlp and a.kv_shared_layers else 1  # Gemma 4's KV-sharing layers
        # an ungated MLP (GPT-2, MPT, Falcon, ...: 0c1e570 src/llama-graph.cpp `llm_graph_context::build_ffn` without
        # a gate) keeps only up's rows, its activation written in place; measured with MPT's shape
        # (tests/probe/test_llamacpp_live.py)
        dense = (3 if a.mlp_gated else 1) * n * wide * a.intermediate_size
        if not a.is_moe:
            return dense
        routed = n * (experts + a.num_experts)
        moe = np.maximum(routed, 3 * n * a.shared_expert_intermediate_size)
        return moe if all(a.moe_layers) else np.maximum(moe, dense)

    @staticmethod
    def _ffn_hidden_rows(a: Architecture, where: str, rotated: bool = False) -> float:
        """Hidden rows a token ggml-alloc keeps beside a dense gated MLP's gate, up and GLU: FFN_UNITS_HIDDEN beside
        an MLP wider than two hidden widths, one row fewer beside one of one to two widths, two fewer beside one
        exactly as wide as a hidden row. ggml-alloc (ggml-org/llama.cpp 0c1e570 ggml/src/ggml-alloc.c
        `ggml_dyn_tallocr_alloc`) puts each tensor in the smallest freed block it fits: gate's and up's freed blocks
        hold hidden-wide tensors that sit on top of the heap beside a wider MLP. Measured on this project's CPU from 3
        to 32 layers at 1-3 hidden widths (tests/data/llamacpp/ffn_width_buffers.json: exact to the printed 0.01
        MiB); an MLP narrower than a hidden row is left at FFN_UNITS_HIDDEN (half a width: another stage decides,
        6 % above), and 1-2 layers have not settled into the pattern (within 12 %). MLA, Qwen3-VL's deepstack inputs
        and routed experts leave other holes (measured: MiniCPM3, Qwen3-VL; `_experts_rows`). On a CPU run the
        attention rotation beside a quantized cache (`rotated`, `llamacpp_rotation`) frees the row an MLP of up to two
        widths frees, beside wider MLPs and routed experts too (tests/data/llamacpp/rotation_buffers.json: Llama, Gemma 2 and
        Qwen3-MoE layers, heads 64-256 wide)."""
        units = FFN_UNITS_HIDDEN[where]
        h, mlp = a.hidden_size, a.intermediate_size
        if a.is_moe and not a.is_mla:
            return units - rotated
        if a.is_moe or a.is_mla or a.deepstack_layers or not a.mlp_gated or mlp < h:
            return units
        return units - max(rotated, mlp <= 2 * h) - (mlp == h)

    @staticmethod
    def _deltanet_stage(x: Inputs, n: np.ndarray, where: str) -> np.ndarray:
        """f32 bytes alive when a gated delta-net layer runs its fused op (ggml-org/llama.cpp 0c1e570
        src/models/qwen35.cpp `build_layer_attn_linear`, src/models/delta-net-base.cpp `build_delta_net_fused`,
        fused by default: `cparams.fused_gdn_ch`): per token the convolved q, k and v, the l2-normed q and k and
        the gate z, the op's output (about 6 key widths and 3 value widths in all) and three hidden rows; per
        sequence of the reserve (n_seq_max) the op's new state. Fitted on this project's CPU over six shapes (key
        heads 8-16, value heads 16-32, widths 64-128, hidden 1024-2048) within 3 % (tests/probe/test_llamacpp_live.py)."""
        a = x.a
        key, value = a.linear_k_heads * a.linear_k_head_dim, a.linear_v_heads * a.linear_v_head_dim
        per_token = DELTANET_UNITS_HIDDEN[where] * a.hidden_size + 6 * key + 3 * value
        return 4 * (n * per_token + x.sequences * a.linear_state_values)

    @staticmethod
    def _kda_stage(x: Inputs, n: np.ndarray, where: str) -> np.ndarray:
        """f32 bytes alive when a Kimi delta attention layer runs its fused op (ggml-org/llama.cpp 0c1e570
        src/models/kimi-linear.cpp, `build_delta_net_fused` of src/models/delta-net-base.cpp): per token the normed
        input kept for the output gate, the residual, the convolved and l2-normed q, k and v, the per-channel decay
        g1, the op's output and the gate's rows (`KDA_UNITS_*`, with what ggml-alloc leaves between them). The
        context reserves the prompt graph twice (llama_context::sched_reserve): with n_seq_max sequences, where
        `build_rs` gathers every sequence's state and convolution rows (`get_state_rows`) beside the op's new states,
        and with one ([TAG_RESERVE_DIAG_DECAY]), where it gathers the others' apart (`states_extra`) and the op
        writes one state; the buffer is the larger. Fitted on this project's CPU over seven shapes (hidden 512-2,048,
        8-32 heads of 64-128, 1-16 sequences, micro-batches of 64-1,024: benchmarks/llamacpp_kimi_linear_sweep.py)."""
        a = x.a
        width, h = a.linear_v_heads * a.linear_v_head_dim, a.hidden_size
        state, conv = a.linear_state_values, (a.linear_conv_kernel - 1) * a.linear_conv_dim
        seqs = np.asarray(x.sequences)
        one = n * (KDA_UNITS_HIDDEN[where] * h + KDA_UNITS_WIDTH * width + KDA_UNITS_HEAD * a.linear_v_heads) \
            + state + (seqs - 1) * (state + 2 * conv)
        every = n * ((KDA_UNITS_HIDDEN[where] - 1) * h + KDA_EVERY_UNITS_WIDTH * width) + seqs * (2 * state + conv)
        return 4 * np.maximum(one, every)

    @staticmethod
    def _msa_stage(x: Inputs, n_kv: np.ndarray, n: np.ndarray, where: str) -> np.ndarray:
        """f32 bytes alive when a MiniMax-M3 sparse layer builds its attention mask (ggml-org/llama.cpp 0c1e570
        src/models/minimax-m3.cpp, the batch path of `graph`): the F32 copy of the cache's mask, made once for every
        layer (`msa_mf`, n_kv x n_ubatch); per stream, the selected blocks gathered to every cell for each indexer
        head and its transposed copy (`bmc`, `bmx`: 2 x n_kv x tokens x heads), beside the query, key and value rows
        and the indexer's queries and key, the residual and the normed input. Flash attention only: without it, or
        with a unified cache of several sequences, llama.cpp runs MiniMax-M3's attention dense. Fitted on this
        project's CPU (tests/probe/test_llamacpp_live.py)."""
        a = x.a
        streams = 1 if x.options["kv_unified"] else x.sequences
        q, kv = a.num_heads * a.v_head_dim, a.num_kv_heads * a.head_dim
        rows = MSA_UNITS_HIDDEN[where] * a.hidden_size + q + 2 * kv + (a.indexer_heads + 1) * a.indexer_head_dim
        return 4 * (n * rows + n_kv * n * (1 + 2 * a.indexer_heads / streams))

    @staticmethod
    def _mamba2_stage(x: Inputs, n: np.ndarray, where: str) -> np.ndarray:
        """f32 bytes alive when a Mamba2 layer runs its scan (ggml-org/llama.cpp 0c1e570
        src/models/mamba-base.cpp `build_mamba2_layer`, Granite-4.0-H's src/models/granite-hybrid.cpp): per token
        in_proj's output, the convolution's input with the cached columns, its output, the scan's output, the gate
        and the grouped norm (about 1.5 d_inner and 3.5 convolution widths beside the hidden rows); per sequence of
        the reserve the scan's new state (d_state x d_inner). Fitted on this project's CPU over six shapes (d_inner
        1,024-3,072, d_state 64-256, 1-4 groups, 8-48 heads): within 2 % with flash attention, -5.4 ... +1.6 %
        without (the attention stage then decides some); tests/probe/test_llamacpp_live.py checks four shapes."""
        a = x.a
        inner = a.linear_v_heads * a.linear_v_head_dim
        units = DELTANET_UNITS_HIDDEN[where] + (PARALLEL_MAMBA_UNITS if a.parallel_mamba else 0)
        per_token = units * a.hidden_size + 1.5 * inner + 3.5 * a.linear_conv_dim
        return 4 * (n * per_token + x.sequences * a.linear_state_values)

    @staticmethod
    def _mamba_stage(x: Inputs, n: np.ndarray, where: str) -> np.ndarray:
        """f32 bytes alive when a Mamba block runs its scan (ggml-org/llama.cpp 0c1e570 src/models/mamba-base.cpp
        `build_mamba_layer`): per token in_proj's x and z, the convolved x (kept for the D skip), dt after dt_proj
        and the scan's output (`MAMBA_UNITS_INNER` mixer widths), x_proj's dt, B and C, and the hidden rows; per
        sequence of the reserve the scan's new state (d_state x d_inner) and the convolution's cached columns,
        gathered and concatenated (2 x (d_conv - 1) x d_inner). Fitted on this project's CPU over six shapes
        (hidden 512-4,096, d_state 16-128, dt rank 32-256, Mamba and Falcon-Mamba, micro-batches of 64-1,024, 1 and
        4 sequences: benchmarks/llamacpp_mamba_sweep.py)."""
        a = x.a
        inner = a.linear_conv_dim
        per_token = DELTANET_UNITS_HIDDEN[where] * a.hidden_size + MAMBA_UNITS_INNER * inner \
            + a.linear_dt_rank + 2 * a.linear_k_head_dim
        per_sequence = a.linear_state_values + 2 * (a.linear_conv_kernel - 1) * inner
        return 4 * (n * per_token + x.sequences * per_sequence)

    @staticmethod
    def _shortconv_stage(x: Inputs, n: np.ndarray, where: str) -> np.ndarray:
        """f32 bytes alive when an LFM2 short-convolution layer runs (ggml-org/llama.cpp 0c1e570 src/models/lfm2.cpp
        `build_shortconv_block`): per token in_proj's B, C and x and their product B x x beside the hidden rows
        (`SHORTCONV_UNITS`); per sequence of the reserve the convolution's cached columns."""
        a = x.a
        per_token = (DELTANET_UNITS_HIDDEN[where] + SHORTCONV_UNITS) * a.hidden_size
        return 4 * (n * per_token + x.sequences * (a.linear_conv_kernel - 1) * a.hidden_size)

    @staticmethod
    def _mla_query_rows(a: Architecture) -> int:
        """Per token, the f32 values alive when an MLA layer builds its absorbed query (ggml-org/llama.cpp 0c1e570
        src/models/deepseek2.cpp `llama_model_deepseek2::graph::graph`):
        q (nope + rope per head), the roped q_pe, q_nope x wk_b (kv_lora_rank per head) and their concatenation
        Qcur (kv_lora_rank + rope): heads x (2 kv_lora_rank + nope + 3 rope); measured on this project's CPU for
        six head counts, two latent ranks and three nope / rope splits (benchmarks/llamacpp_mla_sweep.py); the
        widest layer's where layers differ (dots3: src/models/dots3note.cpp, each layer its own)."""
        return max(a.layer_num_heads(i) * (2 * a.layer_kv_lora(i) + a.layer_nope_dim(i) + 3 * a.layer_rope_dim(i))
                   for i in range(a.num_layers))

    def host_compute(self, x: Inputs) -> np.ndarray:
        """The host compute buffer beside GPUs (`CUDA_Host compute buffer`). With every layer and the output on
        GPUs it holds the graph inputs filled from host memory: the token embedding's n_ubatch rows and the masks,
        f32 there whatever the attention (every published CUDA log, Jan 2025 - 2026, tests/data/published; the
        later llama.cpp that ollama/ollama vendors, llama/llama.cpp/src/llama-graph.cpp `build_kq_mask`, creates
        them GGML_TYPE_F32, where 0c1e570's `build_attn_inp_kq_mask` made them F16 for flash attention). With
        layers left in host memory the GPU still runs their ops (op offload, micro-batches of 32 tokens and more:
        `_offload_copies`), and their cache in host memory stores the micro-batch's K and V rows, copied back from
        the GPU into this buffer, both at once, where the embedding rows (freed by then) lie: masks + the larger of
        the two row sets (published CUDA loads: Qwen3-0.6B with every layer in host memory 12.01 MiB printed, 8 +
        max(2, 4); QwQ-32B with 35 of 65, 26.01 printed, 16 + max(10, 4)). Below 32 tokens, or with
        `--no-op-offload`, the host runs their part of the graph as a CPU run does. The attention rotation's
        matrices, inputs filled from host memory too (`llamacpp_rotation`), lie here as well."""
        if x.sc.device == "cpu":
            return x.zeros
        placement = self.placement(x)
        _, masked, n = self._masks(x)
        rotation_bytes = self._rotation(x)[1]
        if len(placement.gpu_layers) == x.a.num_layers and placement.output_on_gpu:
            return 4 * n * (x.a.hidden_size + masked) + rotation_bytes + x.zeros
        a = x.a
        kv_row_bytes = per_token_layer_bytes(a, KV_FORMATS["fp32"], self.kv_layout(x))  # the new K and V, f32
        stored = kv_row_bytes if len(placement.kv_gpu_layers) < a.num_layers else 0
        inputs = n * (4 * masked + max(4 * a.hidden_size, stored)) + rotation_bytes + x.zeros
        offloaded = x.options["op_offload"] & (n >= OP_OFFLOAD_MIN_BATCH)
        return np.where(offloaded, inputs, self._graph_peak(x, not placement.output_on_gpu, on_host=True))

    def cpu_buffers(self, x: Inputs) -> dict[str, int]:
        """Model buffers of the weights in host memory by llama.cpp's names (llamacpp_cpu): every weight of a CPU
        run, those left on the host beside GPUs; from the file's layout when imported."""
        return self._cpu_buffers(x)[0]

    def packs_host_weights(self, x: Inputs) -> bool:
        """Whether weights in host memory go to the CPU's packed buffer types (AMX, CPU_REPACK). Beside a GPU,
        llama.cpp 0c1e570 lists the GPU's host buffer type first (src/llama-model.cpp `make_cpu_buft_list`, which
        every host weight, `-ot ...=CPU` and `--n-cpu-moe` ones too, is chosen from by
        src/llama-model-loader.cpp `select_weight_buft`), and a mapped file takes its place: nothing is packed
        unless --no-host drops it. Builds of December 2024 listed the packed types first (ggml-org/ci's
        build-4343 V100 loads with 10 of 32 layers on the GPU print CPU_AARCH64 beside CUDA0, tests/data/published)."""
        o = x.options
        return o["repack"] and (x.sc.device == "cpu" or not o["host_buffer"])

    def _host_weights(self, x: Inputs) -> tuple[list[WeightTensor], WeightTensor | None]:
        """The weights in host memory (all of a CPU run's), and the tied embedding when it also serves as an output
        layer kept there."""
        tt = tensor_table(x.a, x.wf)
        every = weight_tensors(x.a, x.wf)
        embedding = next((w for w, is_embedding in zip(every, tt.embedding, strict=True) if is_embedding), None)
        if x.sc.device == "cpu":
            tensors, output_on_host = every, True
        else:
            placement = self.placement(x)
            tensors = [w for w, gpu in zip(every, tensor_on_gpu(x.a, tt, placement), strict=True) if not gpu]
            output_on_host = not placement.output_on_gpu
        tied = x.a.tie_word_embeddings and embedding is not None and output_on_host
        return tensors, replace(embedding, matmul=True) if tied else None

    def _packed(self, x: Inputs, tt: TensorTable) -> np.ndarray:
        """Per tensor: held in a packed CPU buffer (AMX, CPU_REPACK) when it lies in host memory. Such a buffer is
        not a host buffer (ggml-cpu/repack.cpp and amx/amx.cpp leave `is_host` unset), so the scheduler never
        offloads an op on it to a GPU (ggml-backend.cpp `ggml_backend_sched_backend_id_from_cur`)."""
        if not self.packs_host_weights(x):
            return np.zeros(len(tt.names), dtype=bool)
        tied = x.a.tie_word_embeddings
        return np.array([extra_buffer(replace(w, matmul=True) if tied and e else w, x.options["cpu"]) is not None
                         for w, e in zip(weight_tensors(x.a, x.wf), tt.embedding, strict=True)], dtype=bool)

    def _cpu_buffers(self, x: Inputs) -> tuple[dict[str, int], int]:
        """(the buffers, the bytes of the tensors themselves), from one pass over the host's tensors."""
        tensors, tied = self._host_weights(x)
        o = x.options
        buffers = cpu_weight_buffers(tensors, o["cpu"], o["mmap"], self.packs_host_weights(x), tied_output=tied)
        if x.sc.device == "cuda" and o["host_buffer"] and "CPU" in buffers:  # read in, not mapped: pinned memory
            buffers["CUDA_Host"] = buffers.pop("CPU")
        return buffers, sum(t.nbytes for t in tensors)

    def device_tensor_bytes(self, x: Inputs, tt: TensorTable) -> np.ndarray:
        """On a GPU, each tensor as a CUDA buffer holds it (`cuda_alloc_bytes`)."""
        return tt.nbytes + _cuda_extra(x.a, x.wf) if x.sc.device == "cuda" else tt.nbytes

    def encoder_place(self, x: Inputs) -> str:
        """llama.cpp's model file holds the language model; a multimodal model's encoders are a separate mmproj GGUF
        (convert_hf_to_gguf.py --mmproj: 16-bit matrices), loaded with option `mmproj` (`llama-server --mmproj`)
        through libmtmd onto the GPU (common/common.h `mmproj_use_gpu`, true unless --no-mmproj-offload;
        tools/server/server-context.cpp `mparams.use_gpu`), or into host memory where `mmproj_on_host`."""
        if not (x.options["mmproj"] and x.a.encoders):
            return ""
        return "host" if self.mmproj_on_host(x) else "device"

    def mmproj_on_host(self, x: Inputs) -> bool:
        """Whether the mmproj stays in host memory beside the GPU: never by llama-server's default."""
        return False

    def weight_extra(self, x: Inputs, layers: range) -> float:
        """The repacked copies of a CPU run, counted with the first stage."""
        if x.sc.device != "cpu" or layers.start != 0:
            return 0.0
        return self._buffers_beyond_tensors(x)

    def host_weight_extra(self, x: Inputs) -> float:
        """Beside GPUs, the host's model buffers beyond its tensors' bytes: the mapped file range spans the GPU's
        tensors lying between two host ones (`--n-cpu-moe` maps each such layer whole), and --no-host packs copies."""
        if x.sc.device == "cpu":
            return 0.0
        mmproj = encoders_bytes(x) if self.encoder_place(x) == "host" else 0.0
        return self._buffers_beyond_tensors(x) + mmproj

    def _buffers_beyond_tensors(self, x: Inputs) -> float:
        buffers, own = self._cpu_buffers(x)
        return float(sum(buffers.values()) - own)

    def facts(self, x: Inputs, gpu, pool_bytes: float | None, non_kv_bytes: float | None = None,
              loaded_bytes: float = 0.0) -> dict[str, Any]:
        n_ctx, swa, n_ubatch = self.cells(x)
        out: dict[str, Any] = {"n_ctx": int(np.max(n_ctx)), "n_ubatch": int(np.max(n_ubatch)),
                               "flash_attn": self.flash(x.sc, x.options)}
        if SLIDING in x.a.layer_types:
            out["swa_cells"] = int(np.max(swa))
        out["cpu_model_buffers"] = self.cpu_buffers(x)
        fit = self.fitted(x.a, x.sc, x.options)
        if fit is not None:
            out["fit"] = fit.describe(x.a)
        if x.sc.device != "cpu":
            copied = max(float(np.max(c)) for c in self._offload_copies(x, n_ubatch))
            if copied:
                out["offload_copy_bytes"] = int(copied)
        out["output_buffer_bytes"] = int(np.max(self.output_buffer(x)))
        out["host_compute_bytes"] = int(np.max(self.host_compute(x)))
        mmproj = self.mmproj_buffers(x)
        if mmproj is not None:
            where = "host" if x.sc.device == "cpu" else self.encoder_place(x)
            out["mmproj_compute"] = {**asdict(mmproj), "where": where, "flash_attn": out["flash_attn"]}
        return out

    def runtime_bytes(self, x: Inputs) -> float:
        return RUNTIME_BYTES_CUDA if x.sc.device == "cuda" else RUNTIME_BYTES_CPU

    def output_buffer(self, x: Inputs) -> np.ndarray:
        """`llama_context::output_reserve`: f32 logits of one row per sequence, in host memory."""
        return 4.0 * x.a.output_rows * np.maximum(x.sequences, 1) + x.zeros

    def host_buffers(self, x: Inputs) -> np.ndarray:
        return self.output_buffer(x) + self.host_compute(x) + self._mmproj_compute(x, on_host=True)

    def launch_command(self, a: Architecture, sc: Any, model: str) -> str:
        o = sc.engine_options
        if not model.lower().endswith(".gguf"):  # a repository or folder: the GGUF file converted to this mix
            model = f"{model.rstrip('/').split('/')[-1]}-{sc.weight_format}.gguf"
        env = ["LLAMA_ATTN_ROT_DISABLE=1"] if not o["attn_rotation"] and sc.kv_format in QUANTIZED_KV else []
        args = [*env, "llama-server", "-m", model, "-c", str(sc.longest_sequence * sc.sequences), "-np", str(sc.sequences)]
        if sc.device == "cpu":
            args += ["-ngl", "0"]
        elif not fit_applies(sc, o):  # with --fit on (llama-server's default) and no -ngl, llama-server places them
            args += ["-ngl", "999" if sc.gpu_layers is None else str(sc.gpu_layers)]
        args += ["-fa", "on" if self.flash(sc, o) else "off"]
        if sc.kv_format != "fp16":
            args += ["-ctk", CACHE_TYPES[sc.kv_format], "-ctv", CACHE_TYPES[sc.kv_format]]
        if sc.kv_offload:
            args.append("--no-kv-offload")
        if o["kv_unified"]:
            args.append("-kvu")
        if o["swa_full"]:
            args.append("--swa-full")
        if o["n_cpu_moe"]:
            args += ["--n-cpu-moe", str(o["n_cpu_moe"])]
        if o["override_tensor"]:
            args += ["-ot", shlex.quote(o["override_tensor"].replace(";", ","))]
        if not o["mmap"]:
            args.append("--no-mmap")
        if not o["repack"]:
            args.append("--no-repack")
        if not o["host_buffer"] and sc.device == "cuda":
            args.append("--no-host")
        if not o["op_offload"]:
            args.append("--no-op-offload")
        if sc.pp > 1 and sc.device == "cuda":  # the GPUs, layers split among them (--split-mode layer, the default)
            args += ["--device", ",".join(f"CUDA{i}" for i in range(sc.pp))]
            if o["tensor_split"]:
                args += ["-ts", o["tensor_split"].replace(";", ",")]
        if o["mmproj"] and a.encoders:  # the file read, else as convert_hf_to_gguf.py --mmproj names it
            args += ["--mmproj", a.encoders[0].file or f"mmproj-{model.removesuffix('.gguf').split('/')[-1]}-f16.gguf"]
            if o["image_max_tokens"]:
                args += ["--image-max-tokens", str(o["image_max_tokens"])]
        if self.micro_batch(sc, o) != 512:
            args += ["-ub", str(self.micro_batch(sc, o))]
        if o["n_batch"] != 2048:
            args += ["-b", str(o["n_batch"])]
        return " ".join(args)


def _check_mamba(a: Architecture) -> None:
    """What llama.cpp's mamba and mamba2 architectures load (ggml-org/llama.cpp 0c1e570 src/models/mamba.cpp,
    mamba2.cpp `load_arch_tensors`): Mamba's mixer twice the hidden size ("only an expansion factor of 2 is
    supported"); in_proj and out_proj without biases (a file holding them fails its tensor count); Mamba2's
    convolution with its bias (a required tensor)."""
    if a.linear_mixer == MAMBA2:
        if not a.linear_conv_bias:
            raise InputError("llama.cpp's Mamba2 requires the convolution's bias (src/models/mamba2.cpp); this config "
                             "has use_conv_bias off")
    elif a.linear_conv_dim != 2 * a.hidden_size:
        raise InputError(f"llama.cpp runs Mamba with a mixer twice the hidden size only (src/models/mamba.cpp); this "
                         f"config's is {a.linear_conv_dim:,d} wide for {a.hidden_size:,d} hidden")
    if a.linear_proj_bias:
        raise InputError("llama.cpp's Mamba loads no in_proj / out_proj bias (src/models/mamba.cpp); this config has "
                         "use_bias set")

"""FlashInfer's attention workspaces, as vLLM allocates them where FlashInfer runs the attention (vllm-project/vllm
0.34.0, read from its PyPI wheel).

vLLM picks FlashInfer for standard attention on compute capability 10 (B200, B300, GB200: platforms/cuda.py
`_get_backend_priorities` puts FLASHINFER first there, TRITON_FLASHINFER, its composite with Triton for an image
prefix, before it for multimodal prefixes), for 16-bit activations (`FlashInferBackend.supported_dtypes`) and head
sizes 64, 128, 256 and 512 (`get_supported_head_sizes`); elsewhere only when asked (`--attention-backend FLASHINFER`).
A model whose image prefix is attended both ways (Gemma 3 with its tower: `is_mm_prefix_lm`) runs
TRITON_FLASHINFER, FlashInfer for the causal part, where its heads are 256 or 512 wide, else FLASH_ATTN. Two buffers
then stay allocated (v1/attention/backends/flashinfer.py):

- the metadata builder's workspace (`FlashInferMetadataBuilder._get_workspace_buffer`): VLLM_FLASHINFER_WORKSPACE_
  BUFFER_SIZE (394 MiB), or more where the prefill's temporaries need it, max_num_batched_tokens x the rank's query
  heads x head size x 16 bytes (FLASHINFER_PREFILL_WORKSPACE_BYTES_PER_ELEM). The V2 runner allocates it when it
  builds the attention groups and hands the first builder's to every other (v1/worker/gpu/attn_utils.py
  `init_attn_backend`): one a rank, sized by the first attention layer's group;
- the TRT-LLM kernels' workspace (`_get_trtllm_workspace_buffer`, a module global of the same 394 MiB) made at their
  first call: trtllm-gen prefill and decode on compute capability 10, the XQA decode kernel on 9 and 12
  (utils/flashinfer.py `supports_trtllm_attention`, `use_trtllm_attention`: decode batches of up to 256 tokens, or an
  FP8 cache), none on 8.x.

When they are allocated decides what they take from: vLLM 0.34's extensible KV cache measures memory after its
warm-up and capture, both resident by then (`vllm_extensible`). A profile-sized pool (no extensible cache) is sized
before the real `initialize_kv_cache` builds the workspace, which so lies beyond gpu_memory_utilization's share;
the kernels' workspace is first made in the capture `profile_cudagraph_memory` measures (counted in its estimate,
kept for the real capture), or after the pool where no graphs are estimated.

MLA layers decode with FLASHINFER_MLA on compute capability 10, first in vLLM's list there where its kernel takes
the model's qk_nope_head_dim (64, 128 or 192: v1/attention/backends/mla/flashinfer_mla.py `supports_combination`),
DeepSeek sparse attention apart (its sparse backends): a module-global workspace of 128 MiB made at the first decode
(`_get_workspace_buffer`; 256 MiB with decode context parallelism's LSE, not modelled), placed as the TRT-LLM
kernels' is. Their prefill keeps no FlashInfer workspace for DeepSeek's widths (FLASH_ATTN first:
platforms/interface.py `get_mla_prefill_backend_cls`).
"""

from __future__ import annotations

from memviz.core.arch import FULL, SLIDING, Architecture
from memviz.core.engines.vllm_kv import mla_attention
from memviz.core.units import MiB

#: VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE's default (envs.py), the builder's floor and the TRT-LLM kernels' buffer
WORKSPACE_BYTES = 394 * MiB
#: FLASHINFER_PREFILL_WORKSPACE_BYTES_PER_ELEM
PREFILL_BYTES_PER_ELEMENT = 16
HEAD_SIZES = frozenset({64, 128, 256, 512})
#: TRITON_FLASHINFER's heads (v1/attention/backends/triton_flashinfer.py `head_sizes`)
MM_PREFIX_HEAD_SIZES = frozenset({256, 512})
#: the types vLLM attends an image prefix of both ways, as memviz reads them (transformers_utils/
#: model_arch_config_convertor.py `is_mm_prefix_lm`: gemma3's wrapper, its text model "gemma3_text" here), with their
#: encoders loaded
MM_PREFIX_TYPES = frozenset({"gemma3_text"})
#: FLASHINFER_MLA_WORKSPACE_BUFFER_SIZE and the qk_nope_head_dim its kernel takes
MLA_WORKSPACE_BYTES = 128 * MiB
MLA_NOPE_DIMS = frozenset({64, 128, 192})


def runs_flashinfer(a: Architecture, capability: tuple[int, int] | None, act_bytes: float, backend: str,
                    mm_prefix: bool = False) -> bool:
    """Whether FlashInfer runs the standard attention layers: asked for, or vLLM's choice on compute capability 10;
    with an image prefix attended both ways (`mm_prefix`, which FlashInfer alone does not take) only inside
    TRITON_FLASHINFER, whose heads are 256 or 512 wide (else FLASH_ATTN runs)."""
    if mla_attention(a) or capability is None or not _attention_layers(a):
        return False
    if backend == "FLASHINFER":
        return True
    heads = {a.layer_head_dim(i) for i in _attention_layers(a)}
    heads_ok = heads <= (MM_PREFIX_HEAD_SIZES if mm_prefix else HEAD_SIZES)
    return backend == "auto" and capability[0] == 10 and act_bytes == 2 and heads_ok


def runs_flashinfer_mla(a: Architecture, capability: tuple[int, int] | None, act_bytes: float) -> bool:
    """Whether FLASHINFER_MLA decodes the model's MLA layers: vLLM's first choice on compute capability 10."""
    return (mla_attention(a) and not a.indexer_heads and capability is not None and capability[0] == 10 and act_bytes == 2
            and a.qk_nope_head_dim in MLA_NOPE_DIMS)


def builder_workspace_bytes(a: Architecture, tp: int, batched_tokens: int) -> float:
    """The metadata builder's workspace on one rank: the floor, or the first attention layer's prefill footprint."""
    first = _attention_layers(a)[0]
    heads = max(a.num_heads // tp, 1)
    return float(max(WORKSPACE_BYTES, batched_tokens * heads * a.layer_head_dim(first) * PREFILL_BYTES_PER_ELEMENT))


def kernels_workspace_bytes(capability: tuple[int, int]) -> float:
    """The TRT-LLM / XQA kernels' workspace: on compute capability 9, 10 and 12 (none on 8.x)."""
    return float(WORKSPACE_BYTES) if capability[0] in (9, 10, 12) else 0.0


def describe(a: Architecture, kernels: float) -> str:
    """The workspaces in words, for the Breakdown and the CLI."""
    if mla_attention(a):
        return "FLASHINFER_MLA's decode workspace, 128 MiB"
    parts = ["the metadata builder's, the larger of 394 MiB and the prefill's query heads x head size x 16 bytes a "
             "token"]
    return "; ".join(parts + (["the TRT-LLM kernels', 394 MiB"] if kernels else []))


def _attention_layers(a: Architecture) -> list[int]:
    return [i for i, kind in enumerate(a.layer_types) if kind in (FULL, SLIDING)]

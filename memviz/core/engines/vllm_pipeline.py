"""vLLM's pipeline stages: which layers each holds and what a stage after the first keeps to receive the previous
stage's output (vllm-project/vllm 0.34.0, read from the PyPI wheel; the V1 runner's as in 0.19.0).

- The layer split: `distributed/utils.py` `get_pp_indices` without VLLM_PP_LAYER_PARTITION.
- The receive buffer: a stage after the first runs its layers on tensors the previous stage sent, copied into a
  buffer made once by the model class's `make_empty_intermediate_tensors` for max_num_batched_tokens tokens
  (`self.max_num_tokens`) in the model dtype. The V2 runner makes it when the model is loaded
  (`v1/worker/gpu/model_runner.py` `load_model`: "sized for the max capture size so they can be sliced per batch"),
  which 0.34's profile counts as consumed memory (`mem_utils.memory_profiling`: `total_consumed`); V1's
  (`v1/worker/gpu_model_runner.py` `_dummy_run`, 0.19) makes it in the profile run's forward, so its "torch peak
  memory increase" holds it. vLLM 0.19 on H100s, Llama-3.1-8B at 8,192 batched tokens (llm-d-planner's sweep,
  tests/data/published/vllm_logs.json): the last stage of a PP 4 run printed 2.01 GiB of peak against 1.89 GiB on
  one GPU, hidden_states and residual of 8,192 x 4,096 bf16 values being 0.125 GiB.
- What the buffer holds (`make_empty_intermediate_tensors` of each class): hidden_states and residual of hidden
  width for most decoders (models/utils.py `make_empty_intermediate_tensors_factory` with ["hidden_states",
  "residual"]: llama.py, qwen2.py, deepseek_v2.py, gemma3.py, qwen3_next.py, nemotron_h.py and 55 more);
  hidden_states alone for `HIDDEN_ONLY_TYPES`; Gemma 4 hidden_states and its per-layer inputs (gemma4.py
  `_make_empty_intermediate_tensors`: num_layers x hidden_size_per_layer_input a token); DeepSeek-V4 and HY-V4's
  hyper-connection streams, hc_mult x hidden (models/deepseek_v4/nvidia/model.py, models/hy_v4/nvidia/model.py).
  Not counted: the top-k index rows DeepSeek-V3.2, dots3 and HY-V4 send beside them (`pp_buffers`).
"""

from __future__ import annotations

import numpy as np

from memviz.core.arch import Architecture
from memviz.core.errors import InputError

#: model types whose vLLM class sends hidden_states alone between stages (`make_empty_intermediate_tensors` with
#: ["hidden_states"]: models/bloom.py, chatglm.py, dbrx.py, falcon.py, falcon_h1.py, gpt2.py, gpt_j.py,
#: granite.py, granitemoe.py, granitemoeshared.py, olmo_hybrid.py, opt.py, orion.py, step3p5.py; models/beam,
#: deepseek_v32, dots3_note, inkling, mistral/mistral_large4 and step5's nvidia model.py)
HIDDEN_ONLY_TYPES = frozenset({
    "bloom", "chatglm", "dbrx", "falcon", "falcon_h1", "gpt2", "gptj", "granite", "granitemoe", "granitemoeshared",
    "olmo_hybrid", "opt", "orion", "step3p5", "beam", "deepseek_v32", "dots3_note_text", "inkling",
    "mistral_large4_text", "step5"})
#: Gemma 4's classes, which send the per-layer inputs beside hidden_states
PER_LAYER_INPUT_TYPES = frozenset({"gemma4_text", "gemma4_unified_text"})


def pipeline_split(n_layers: int, pp: int, block_layers: int = 1) -> list[range]:
    """The layers of each pipeline stage as vLLM 0.34 splits them (distributed/utils.py `get_pp_indices`, no
    VLLM_PP_LAYER_PARTITION): n_layers // pp each, the remainder one each to the stages before the last, from the
    last but one backwards. vLLM splits decoder layers: where one holds `block_layers` of memviz's layers
    (LongCat-Flash's two attention sublayers, longcat_flash.py `make_layers(config.num_layers)`), whole ones."""
    blocks = n_layers // block_layers
    sizes = [blocks // pp] * pp
    for i in range(2, blocks % pp + 2):
        sizes[-i] += 1
    edges = np.cumsum([0, *sizes]) * block_layers
    return [range(int(edges[i]), int(edges[i + 1])) for i in range(pp)]


def check_shared_latent_stages(a: Architecture, pp: int) -> None:
    """vLLM 0.34's Mistral Large 4 wants each pipeline stage to hold the latents its layers read and to start with
    an indexer (vllm/models/mistral/mistral_large4/nvidia/model.py `_check_pp_stage`)."""
    for r in pipeline_split(a.num_layers, pp, a.block_layers):
        outside = next((i for i in r if a.kv_sources and a.kv_sources[i] < r.start), None)
        if outside is not None:
            raise InputError(f"vLLM's pipeline stage of layers {r.start}-{r.stop - 1} would not hold the latent layer "
                             f"{outside} reads (layer {a.kv_sources[outside]}): choose another pp")
        if len(r) and a.indexer_layers and not a.layer_indexer(r.start):
            raise InputError(f"vLLM's pipeline stage of layers {r.start}-{r.stop - 1} starts at a layer reusing an "
                             "earlier layer's top-k selection: choose another pp")


def receive_values_per_token(a: Architecture) -> int:
    """Values a token of the receive buffer holds (`make_empty_intermediate_tensors`, module docstring)."""
    if a.hyper_streams:
        return a.hyper_streams * a.hidden_size
    if a.model_type in PER_LAYER_INPUT_TYPES:
        return a.hidden_size + a.num_layers * a.per_layer_input_size
    return a.hidden_size * (1 if a.model_type in HIDDEN_ONLY_TYPES else 2)


def receive_buffer_bytes(a: Architecture, max_num_batched_tokens: int, act_bytes: float) -> float:
    """Bytes of the buffer a stage after the first receives the previous stage's tensors in."""
    return float(max_num_batched_tokens * receive_values_per_token(a) * act_bytes)

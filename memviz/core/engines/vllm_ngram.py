"""LongCat-Flash-Lite's n-gram input embedding on vLLM 0.34 (vllm/model_executor/models/longcat_flash_ngram.py).

- Weights (memviz.core.inventory `_ngram_embedding`): the tables are one `VocabParallelEmbedding` (`oe_embedder`,
  split over the tensor-parallel ranks), the projections one plain parameter (`oe_projection`, whole on every rank:
  vllm.REPLICATED_KINDS), both in the model's dtype and only on the first pipeline stage (`FlashNgramModel`).
- `LongcatNgramModelState` (the V2 model runner's; the class is MRV2-only through `get_model_state_cls`) keeps a
  persistent `inputs_embeds` buffer of max_num_batched_tokens x hidden_size in the model's dtype, made after "Model
  loading took" and before the profile run (model_runner.py `load_model` -> `init_model_state`), and a per-slot
  context of emb_neighbor_num - 1 int32 tokens (a few KiB, not counted).
- Its `prepare_inputs`, which `execute_model` calls in the profile run's dummy step too, computes
  `NgramEmbedding.embed_batched` before the forward: the token embedding [N, H], the tables' lookups
  [embedders, N, width], their projections [embedders, N, H] and the stack of both [embedders + 1, N, H] are alive
  together when `mean` makes its [N, H] result.
"""

from __future__ import annotations

from memviz.core.arch import Architecture


def input_buffer_bytes(a: Architecture, max_num_batched_tokens: int, act_bytes: float) -> float:
    """The model state's persistent inputs_embeds buffer on the first stage; 0 for other models."""
    if not a.ngram_embedders:
        return 0.0
    return float(max_num_batched_tokens * a.hidden_size * act_bytes)


def input_peak_bytes(a: Architecture, max_num_batched_tokens: int, act_bytes: float) -> float:
    """The profile step's n-gram embedding on the first stage, before the forward: N x (H x (2 x embedders + 3) +
    embedders x width) values (`embed_batched`: the token embedding, the lookups, the projections, their stack with
    the token embedding and the mean); 0 for other models."""
    n = a.ngram_embedders
    if not n:
        return 0.0
    width = a.hidden_size // n
    return float(max_num_batched_tokens * (a.hidden_size * (2 * n + 3) + n * width) * act_bytes)

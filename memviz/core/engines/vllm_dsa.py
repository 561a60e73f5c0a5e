"""DeepSeek sparse attention's top-k index buffers in vLLM 0.34, held from the model's loading on.

The model class allocates one logical buffer, max_num_batched_tokens rows of index_topk int32 indices, which the
indexers write and the sparse-MLA layers read (models/deepseek_v32/nvidia/model.py `DeepseekV32Model`, the class
GLM-5's GlmMoeDsaForCausalLM runs too; models/mistral/mistral_large4/nvidia/model.py `MistralLarge4Model`), and
hands every layer one `SparseMLAIndexGroupBuilder`. Each sparse-MLA layer registers with it
(model_executor/layers/attention/sparse_mla_attention.py `SparseMLACommonImpl.__init__`); a layer running its own
indexer, and the first layer of a stage, opens a group (v1/attention/backends/mla/index_group.py
`SparseMLAIndexGroupBuilder.register_layer`), whose decode workspace is physical indices of index_topk int32 and
one int32 valid count over min(max_num_batched_tokens, max_num_seqs x the tokens a decode step takes) + 1 rows
(`get_sparse_mla_index_group_max_rows`; v1/attention/backend.py `max_decode_query_len`: 1 + the speculative tokens,
MTP adding no drafting slot). Mistral Large 4 also keeps zero latent inputs for its KV-sharing and NoPE layers,
max_num_batched_tokens x (kv_lora_rank + qk_rope_head_dim) in the model's dtype (`zero_kv_inputs`).

HY-V4's class (models/hy_v4/nvidia/model.py `HYV4Model`, attention.py `HYV4MLAAttention`) passes its layers the
logical buffer but no builder, so each sparse layer builds one of its own, whose workspace rows are the logical
buffer's: max_num_batched_tokens + 1 rows in every layer (every layer is sparse by HYV4Config's default layer_types,
"indexed_attention"). dots3's layers build an attention twice (`Dots3NoteFullAttention` replaces DeepSeek's), which
this does not model.

vLLM counts these buffers as the model's memory (allocated during `load_model`, before the profile).
"""

from __future__ import annotations

from memviz.core.arch import Architecture

#: model types whose vLLM 0.34 class shares one index-group builder among its layers
SHARED_INDEX_GROUPS = frozenset({"deepseek_v32", "glm_moe_dsa", "mistral_large4_text"})
#: model types whose sparse layers each build their own
PER_LAYER_INDEX_GROUPS = frozenset({"hy_v4"})
INDEX_BYTES = 4  # torch.int32


def index_buffer_bytes(a: Architecture, layers: range, max_tokens: int, max_seqs: int, decode_tokens: int,
                       act_bytes: int) -> int:
    """The buffers one rank holding `layers` keeps (0 for a model of neither kind or a stage of none): the logical
    buffer, a decode workspace per group and Mistral Large 4's zero latent inputs."""
    if a.model_type not in SHARED_INDEX_GROUPS | PER_LAYER_INDEX_GROUPS or not a.indexer_topk or not len(layers):
        return 0
    if a.model_type in PER_LAYER_INDEX_GROUPS:
        groups, rows = len(layers), max_tokens + 1
    else:
        groups = sum(1 for i in layers if a.layer_indexer(i)) + (not a.layer_indexer(layers[0]))
        rows = min(max_tokens, max_seqs * decode_tokens) + 1
    total = max_tokens * a.indexer_topk * INDEX_BYTES + groups * rows * (a.indexer_topk + 1) * INDEX_BYTES
    if a.model_type == "mistral_large4_text":
        total += max_tokens * ((a.kv_lora_rank or 0) + a.qk_rope_head_dim) * act_bytes
    return total

"""vLLM's KV cache groups: how the pool is cut into blocks when layers cache differently.

vLLM 0.33 `vllm/v1/core/kv_cache_utils.py` (`get_kv_cache_groups`, `unify_kv_cache_spec_page_size`,
`_get_kv_cache_groups_uniform_page_size`, `get_kv_cache_config_from_groups`, `_report_kv_cache_config`,
`get_max_concurrency_for_kv_cache_config`):

- every layer with a cache of its own has a spec: its kind (full or sliding window) and its bytes per token on
  this rank; a page is one block of `block_size` tokens of one layer;
- one spec for every layer: one group of all layers; one kind with several sizes (`UniformTypeKVCacheSpecs`):
  one group, each layer its own page;
- several kinds (hybrid): a smaller page is made as large as the largest by more tokens per block (Gemma 4's
  full layers, half the sliding layers' bytes a token: 32 tokens a block); layers are grouped by spec into
  groups of `group_size` layers, the fewest layers of any spec (the most when the most are under 1.5 times
  the fewest), padding the last group of a spec (Gemma-3-27B: 52 sliding layers in six groups of ten);
  `group_size` pool tensors, each shared by one layer of every group (a layer region of its own each, which vLLM
  0.34's extensible cache maps in 2 MiB granules: `segment_pages`);
- `num_blocks` = pool // (page x group_size); one request needs, per group, the blocks of its spec's longest
  use (a full layer: max_model_len, a sliding one: its window and the tokens in flight, one block more);
  "Maximum concurrency" = num_blocks over the blocks of one max_model_len request;
- "GPU KV cache size": vLLM 0.20.1 and later print maximum concurrency x max_model_len (the tokens of context the
  pool holds at peak, a sliding group's blocks capped by its window: about 10x more for Gemma-4-31B than
  before; a hybrid Mamba model's state groups add nothing to it); earlier releases printed num_blocks // groups x
  the smallest block (`PRINTS_CONCURRENCY_SINCE`);
- a gated delta-net layer (Qwen3.5, `MambaSpec`) holds its state in pages of the same pool, padded to the
  attention page (the engine sizes both: `VLLM.hybrid_block`), and one request takes `state_blocks` of them per
  group whatever its length (`MambaSpec.max_memory_usage_bytes`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from math import ceil

from memviz.core.arch import LINEAR, SLIDING, Architecture
from memviz.core.formats import KVFormat
from memviz.core.kv import KVLayout, per_token_layer_bytes

#: the vLLM release that prints "GPU KV cache size" as maximum concurrency x max_model_len (`_report_kv_cache_config`:
#: 0.20.0's wheel still prints num_blocks // groups x the smallest block, 0.20.1's `int(max_concurrency *
#: max_model_len)`)
PRINTS_CONCURRENCY_SINCE = (0, 20, 1)
#: MLA models vLLM runs with plain attention over per-head K and V: MiniCPM3 (vllm 0.34
#: model_executor/models/minicpm3.py `MiniCPM3Attention`: K of nope + rope and V padded to that width, every head
#: its own KV head, into `Attention`, not `MLAAttention`)
PER_HEAD_MLA = frozenset({"minicpm3"})


#: model types whose sliding layers are chunked local attention (Llama4TextConfig attention_chunk_size:
#: model_executor/models/llama4.py `use_chunked_local_attn`, a ChunkedLocalAttentionSpec each)
CHUNKED_LOCAL_TYPES = frozenset({"llama4_text"})


def local_blocks(a: Architecture, in_flight_tokens: int, model_len: int, block_tokens: int) -> int:
    """Blocks a request takes in one local layer (vLLM 0.34 v1/kv_cache_interface.py
    `max_admission_blocks_per_request`): a sliding window its window - 1 tokens and those in flight, one block more
    (the window need not start at a block's edge; `SlidingWindowSpec`), a chunk its chunk and those in flight
    (`ChunkedLocalAttentionSpec`: frees follow the processed tokens); never beyond `model_len`."""
    window = a.sliding_window or model_len
    if a.model_type in CHUNKED_LOCAL_TYPES:
        return ceil(min(window + in_flight_tokens, model_len) / block_tokens)
    return ceil(min(window - 1 + in_flight_tokens, model_len) / block_tokens) + 1


def mla_attention(a: Architecture) -> bool:
    """Whether vLLM runs the model's attention as MLA (`MLAAttention`, a latent cache, MLA backends)."""
    return a.is_mla and a.model_type not in PER_HEAD_MLA


@dataclass(frozen=True)
class KVGroups:
    """The groups of one rank's KV pool: per group its kind and tokens per block; the bytes one block step
    takes over every group (`unit_bytes`)."""

    kinds: tuple[str, ...]
    block_tokens: tuple[int, ...]
    unit_bytes: int
    group_size: int
    page_bytes: tuple[int, ...]  # per group: one block of one of its layers (a uniform-type group: all layers)
    state_blocks: int = 1  # blocks a delta-net group's layer takes per request
    segment_pages: tuple[int, ...] = ()  # per pool tensor's layer region: its bytes a block (they sum to unit_bytes)

    def block_tokens_printed(self, num_blocks: int) -> int:
        """"GPU KV cache size" as vLLM before 0.20.1 printed it: num_blocks // groups x the smallest block."""
        return num_blocks // len(self.kinds) * min(self.block_tokens)

    def request_blocks(self, model_len: int, local: Callable[[int], int]) -> int:
        """Blocks one request of `model_len` tokens needs (`get_max_concurrency_for_kv_cache_config`);
        `local(block_tokens)`: the blocks a sliding or chunked layer keeps (`local_blocks`)."""
        usage = 0
        for kind, block, page in zip(self.kinds, self.block_tokens, self.page_bytes, strict=True):
            if kind == LINEAR:
                blocks = self.state_blocks
            elif kind == SLIDING:
                blocks = local(block)
            else:
                blocks = ceil(model_len / block)
            usage += blocks * page
        return ceil(usage * self.group_size / self.unit_bytes)


def kv_groups(a: Architecture, fmt: KVFormat, layout: KVLayout, layers: range, block_tokens: int,
              state_page: int = 0, state_blocks: int = 1, draft: tuple[int, ...] = ()) -> KVGroups:
    """vLLM's KV cache groups for `layers` (one pipeline stage) at `block_tokens` tokens a block; a delta-net
    layer's page is `state_page`, of which a request takes `state_blocks`; `draft`: the model layers whose caches
    the speculative draft's layers repeat (`vllm_mtp`)."""
    # a Falcon-H1 layer registers its attention and its Mamba2 mixer apart, a spec each (vLLM 0.33
    # model_executor/models/falcon_h1.py `FalconH1ParallelHybrid`: FalconH1AttentionDecoderLayer beside
    # FalconH1SSMDecoderLayer, whose MambaMixer2 holds the state)
    # a layer reading another's latent but running its own indexer has the indexer's spec only (Mistral Large 4)
    specs = [(a.layer_types[i], int(block_tokens * own)) for i in (*layers, *draft)
             if (own := per_token_layer_bytes(a, fmt, layout, i))]
    specs += [(LINEAR, state_page) for i in layers if a.layer_has_state(i)]
    counts = Counter(specs)
    if len(counts) == 1:
        (kind, page), n = next(iter(counts.items()))
        return KVGroups((kind,), (block_tokens,), page * n, n, (page,), state_blocks, (page,) * n)
    if len({kind for kind, _ in counts}) == 1:  # UniformTypeKVCacheSpecs: one group, a page per layer
        pages = sum(page for _, page in specs)
        return KVGroups((specs[0][0],), (block_tokens,), pages, 1, (pages,), state_blocks,
                        tuple(page for _, page in specs))
    page = max(own for _, own in counts)
    fewest, most = min(counts.values()), max(counts.values())
    group_size = most if most < 1.5 * fewest else fewest
    kinds, blocks = [], []
    for (kind, own), n in counts.items():
        # a page that does not divide the largest is padded to it (the block-stride backends); vLLM refuses others
        ratio = page // own if page % own == 0 and kind != LINEAR else 1
        kinds += [kind] * ceil(n / group_size)
        blocks += [block_tokens * ratio] * ceil(n / group_size)
    return KVGroups(tuple(kinds), tuple(blocks), page * group_size, group_size, (page,) * len(kinds), state_blocks,
                    (page,) * group_size)

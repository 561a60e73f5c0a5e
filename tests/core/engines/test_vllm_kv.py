"""vLLM's KV cache groups (memviz.core.engines.vllm_kv, vLLM kv_cache_utils.py) for the layouts of real models."""

import pytest

from memviz.core.arch import FULL, SLIDING
from memviz.core.engines.vllm_kv import KVGroups, kv_groups
from memviz.core.formats import get_kv_format
from memviz.core.kv import KVLayout
from memviz.core.presets import get_preset

BF16 = get_kv_format("bf16")
LAYOUT = KVLayout(latent_mla=True, block_tokens=16)
KiB = 1024


def groups_of(key: str) -> KVGroups:
    a = get_preset(key).architecture()
    return kv_groups(a, BF16, LAYOUT, range(a.num_layers), 16)


def test_one_spec_is_one_group_of_every_layer():
    g = groups_of("llama-3.1-8b")  # 32 layers x 8 KV heads x 128 x K, V x 2 bytes: 128 KiB a token (seed 000)
    assert (g.kinds, g.block_tokens, g.group_size) == ((FULL,), (16,), 32)
    assert g.unit_bytes == 16 * 128 * KiB


def test_gemma4_31b_full_layers_take_32_tokens_a_block_to_match_the_sliding_pages():
    """50 sliding layers of 16 KiB a token, 10 full layers of 8 KiB: pages of 256 KiB, the full layers' blocks
    32 tokens; groups of 10 layers: five sliding, one full."""
    g = groups_of("gemma-4-31b")
    assert g.kinds == (SLIDING,) * 5 + (FULL,)
    assert g.block_tokens == (16,) * 5 + (32,)
    assert (g.group_size, g.unit_bytes) == (10, 10 * 256 * KiB)


def test_gemma3_27b_pads_its_sliding_layers_to_whole_groups():
    """52 sliding and 10 full layers: groups of 10, six sliding ones holding 8 padding layers."""
    g = groups_of("gemma-3-27b")
    assert g.kinds == (SLIDING,) * 6 + (FULL,) and g.group_size == 10


def test_equal_counts_of_each_kind_make_two_groups_of_all_of_them():
    g = groups_of("gpt-oss-20b")  # 12 sliding and 12 full layers alternating
    assert (sorted(g.kinds), g.group_size) == ([FULL, SLIDING], 12)


@pytest.mark.parametrize(("pool", "before", "from_0_21"), [(50e9, 55e3, 525e3), (50 * 2**30, 55e3, 525e3)])
def test_gemma4_31b_tokens_as_vllm_0_20_and_0_21_printed_them(pool, before, from_0_21):
    """vllm-project/vllm issue #43308: Gemma-4-31B (AWQ) on an A100 80GB, "~50 GB" of KV pool, printed "~55k
    tokens" by 0.20 and "~525k tokens" by 0.21 (maximum concurrency x max_model_len); the issue rounds, so
    within 10 %: the A100's 2,048 batched tokens, two batches in flight, max_model_len 262,144."""
    g = groups_of("gemma-4-31b")
    blocks = int(pool // g.unit_bytes)
    assert g.block_tokens_printed(blocks) == pytest.approx(before, rel=0.10)
    per_request = g.request_blocks(262_144, 1024 - 1 + 2 * 2048)
    assert blocks / per_request * 262_144 == pytest.approx(from_0_21, rel=0.10)

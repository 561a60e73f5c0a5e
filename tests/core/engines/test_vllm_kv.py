"""vLLM's KV cache groups (memviz.core.engines.vllm_kv, vLLM kv_cache_utils.py) for the layouts of real models."""

import pytest

from memviz.core.arch import FULL, SLIDING, from_hf_config
from memviz.core.engines.vllm_kv import KVGroups, kv_groups, local_blocks
from memviz.core.estimate import Scenario, estimate
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
    per_request = g.request_blocks(262_144, lambda block: local_blocks(get_preset("gemma-4-31b").architecture(),
                                                                     2 * 2048, 262_144, block))
    assert blocks / per_request * 262_144 == pytest.approx(from_0_21, rel=0.10)


#: Qwen3.5-27B's text shape: hidden 5120, 64 layers, 24 heads over 4 KV heads of 256, feed-forward 17408, vocabulary
#: 248320 (THUDM/slime scripts/models/qwen3.5-27B.sh), and delta-nets of 16 key and 48 value heads of 128 (what
#: llama.cpp's RS buffer of the 27B prints in ggml-org/llama.cpp PR #23792: R 16.88 MiB and S 432.00 MiB for 3
#: sequences over 48 delta-net layers), float32 recurrent state (mamba_ssm_dtype of the released configs)
QWEN35_27B = {"model_type": "qwen3_5_text", "hidden_size": 5120, "num_hidden_layers": 64, "num_attention_heads": 24,
              "num_key_value_heads": 4, "head_dim": 256, "intermediate_size": 17408, "vocab_size": 248320,
              "linear_num_key_heads": 16, "linear_num_value_heads": 48, "linear_key_head_dim": 128,
              "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "mamba_ssm_dtype": "float32"}


def test_qwen35_27b_pool_as_vllm_0_19_printed_it():
    """vllm-project/vllm issue #40691 (vLLM 0.19.0, H20, `vllm serve Qwen3.5-27B --max-model-len 32768
    --max-num-seqs 16`): "GPU KV cache size: 290,864 tokens" and "Maximum concurrency for 32,768 tokens per request:
    33.04x". The state page (10,240 conv channels x 3 in bf16 + 48 x 128 x 128 float32) sets the attention block to
    784 tokens of 4,096 bytes; 16 full-attention layers and three groups of 16 delta-net layers make 4 groups; a
    request takes 42 blocks of the full group and 1 of each delta-net group (prefix caching was off for hybrid models
    in 0.19). One pool of 1,487 blocks gives both printed figures."""
    from memviz.core.engines.vllm_kv import PRINTS_CONCURRENCY_SINCE

    a = from_hf_config(QWEN35_27B)
    e = estimate(a, Scenario(engine="vllm", gpu="h100-80g", context_tokens=32768, kv_format="bf16",
                             options=(("enable_prefix_caching", False), ("max_num_seqs", 16), ("block_size", 16),
                                      ("extensible_kv_cache", False))))
    f = e.engine_facts
    assert (f["block_size"], f["kv_groups"], f["kv_request_blocks"]) == (784, 4, 42 + 3)
    assert PRINTS_CONCURRENCY_SINCE > (0, 19)
    pools = [n for n in range(1, 5000) if n // f["kv_groups"] * f["kv_group_block_tokens"] == 290_864
             and round(n / f["kv_request_blocks"], 2) == 33.04]
    assert pools == [1487]

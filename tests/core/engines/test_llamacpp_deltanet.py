"""llama.cpp's recurrent state of Qwen3.5's gated delta-net layers against a published load, and the engine's
refusals where a setting would change what is measured (the real runs: tests/probe/test_llamacpp_live.py)."""

from memviz.core.arch import LINEAR, from_hf_config
from memviz.core.estimate import Scenario, estimate
from memviz.core.units import MiB

#: Qwen3.5-9B as llama.cpp printed it loading the released GGUF (github.com/JamePeng/llama-cpp-python issue #78,
#: print_info: n_embd 4096, n_layer 32, ssm_d_conv 4, ssm_d_inner 4096, ssm_d_state 128, ssm_dt_rank 32,
#: ssm_n_group 16; then "CUDA0 RS buffer size = 50.25 MiB" and "size = 50.25 MiB (1 cells, 32 layers, 1 seqs),
#: R (f32): 2.25 MiB, S (f32): 48.00 MiB")
QWEN35_9B = {"model_type": "qwen3_5_text", "hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 16,
             "num_key_value_heads": 4, "head_dim": 256, "intermediate_size": 12288, "vocab_size": 248320,
             "linear_conv_kernel_dim": 4, "linear_key_head_dim": 128, "linear_value_head_dim": 128,
             "linear_num_key_heads": 16, "linear_num_value_heads": 32}


def test_the_published_qwen35_9b_recurrent_buffer():
    a = from_hf_config(QWEN35_9B)
    assert a.layer_types.count(LINEAR) == 24
    e = estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=4096, batch=1))
    facts = e.engine_facts
    conv = 4 * 3 * a.linear_conv_dim  # R: the last 3 inputs of 8,192 channels, f32
    assert 24 * conv == 2.25 * MiB
    assert facts["linear_state_bytes_per_layer_sequence"] * 24 == 50.25 * MiB
    kv = 4096 * 8 * 2 * 4 * 256 * 2  # 8 attention layers' K and V, f16
    assert e.bytes["kv_cache"] == kv + 50.25 * MiB


def test_the_state_is_one_row_per_sequence_and_follows_its_layer():
    """rs_size = max(1, n_seq_max); with -ngl the state of a layer left in host memory stays there, as its KV."""
    a = from_hf_config(QWEN35_9B)
    one = estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=4096, batch=1))
    three = estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=4096, batch=3))
    state = one.engine_facts["linear_state_bytes_per_layer_sequence"] * 24
    kv_three = 3 * 4096 * 8 * 2 * 4 * 256 * 2
    assert three.bytes["kv_cache"] == kv_three + 3 * state
    split = estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=4096, batch=1,
                                 device="cuda", gpu_layers=16))
    assert split.host.kv_cache + split.bytes["kv_cache"] == one.bytes["kv_cache"]
    assert split.host.kv_cache == 4096 * 4 * 2 * 4 * 256 * 2 + 12 * one.engine_facts[
        "linear_state_bytes_per_layer_sequence"]

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


def test_the_published_qwen35_35b_a3b_cache_of_four_sequences():
    """ggml-org/llama.cpp issue #20587 (Qwen3.5-35B-A3B on CUDA, four slots, unified KV): "llama_kv_cache: size =
    80.00 MiB (4096 cells, 10 layers, 4/1 seqs)", "CPU RS buffer size = 134.00 MiB", "CUDA0 RS buffer size =
    117.25 MiB", "size = 251.25 MiB (4 cells, 40 layers, 4 seqs), R (f32): 11.25 MiB, S (f32): 240.00 MiB". The RS
    buffers split by whole layers as the layers' weights do: 16 delta-net layers in host memory, 14 on the GPU,
    which -ngl 19 gives (the first 21 layers stay on the host)."""
    from memviz.core.presets import get_preset

    a = get_preset("qwen3.5-35b-a3b").architecture()
    sc = Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=1024, batch=4, device="cuda",
                  gpu_layers=19, options=(("kv_unified", True),))
    e = estimate(a, sc)
    per_layer = e.engine_facts["linear_state_bytes_per_layer_sequence"] * 4
    assert 30 * per_layer == 251.25 * MiB
    assert (16 * per_layer, 14 * per_layer) == (134.00 * MiB, 117.25 * MiB)
    kv_layer = 4096 * 2 * 2 * 256 * 2  # one full-attention layer: 4,096 cells, K and V, 2 heads of 256, f16
    assert e.host.kv_cache == 5 * kv_layer + 16 * per_layer
    assert e.bytes["kv_cache"] == 5 * kv_layer + 14 * per_layer
    assert 10 * kv_layer == 80 * MiB

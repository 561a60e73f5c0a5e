import pytest

from memviz.core.activations import inference_workspace, training_activation_bytes, training_activation_bytes_per_layer
from memviz.core.presets import get_preset
from memviz.core.units import GiB

LLAMA70 = get_preset("llama-3.1-70b").architecture()  # LLaMA-3.3-70B has the same shape


def test_seed_llama_70b_training_example():
    # Korthikanti et al.: s*b*h*(34 + 5*a*s/h), s=2048, b=1, h=8192, a=64 -> 114 * s*b*h per layer
    per = training_activation_bytes_per_layer(LLAMA70, 2048, 1)
    assert per == 2048 * 8192 * 114 == 1_912_602_624
    assert training_activation_bytes(LLAMA70, 2048, 1) / GiB == 142.5
    assert training_activation_bytes(LLAMA70, 2048, 1, "flash") / GiB == 42.5
    assert training_activation_bytes(LLAMA70, 2048, 1, "full") / GiB == 2.5
    with pytest.raises(ValueError):
        training_activation_bytes(LLAMA70, 2048, 1, "magic")


def test_eager_attention_is_quadratic_and_sdpa_is_not():
    a = get_preset("llama-3.1-8b").architecture()
    e1 = inference_workspace(a, 1024, 1024, 1, "eager", 2, 1, 6).attention
    e2 = inference_workspace(a, 2048, 2048, 1, "eager", 2, 1, 6).attention
    s1 = inference_workspace(a, 1024, 1024, 1, "sdpa", 2, 1, 6).attention
    s2 = inference_workspace(a, 2048, 2048, 1, "sdpa", 2, 1, 6).attention
    assert e2 / e1 > 3.5 and s2 / s1 == pytest.approx(2)
    # eager scores: B*a*n*T*(2 + 4) bytes
    assert e1 >= 32 * 1024 * 1024 * 6


def test_inference_workspace_is_one_layer_not_all_layers():
    a = LLAMA70
    ws = inference_workspace(a, 2048, 2048, 1, "sdpa", 2, 1, 6)
    # largest transient: the MLP (3 x n x I x 2 bytes) plus the residual/projections
    assert ws.mlp == 3 * 2048 * 28672 * 2
    assert ws.peak < training_activation_bytes_per_layer(a, 2048, 1) * 2


def test_moe_routes_top_k_experts():
    a = get_preset("mixtral-8x7b").architecture()
    rows, router = 100 * 2, 100 * 8 * 4  # top-2 of 8, fp32 router logits
    fused = inference_workspace(a, 100, 100, 1, "sdpa", 2, 0, 6)
    # vLLM fused_moe: intermediate_cache1 (2I) + cache2 (I) + cache3 (H) per routed row
    assert fused.mlp == rows * (3 * 14336 + 4096) * 2 + router
    # transformers grouped experts: gathered input (H) + gate_up (2I) + act(gate) (I) + product (I)
    eager = inference_workspace(a, 100, 100, 1, "sdpa", 2, 0, 6, eager_modules=True)
    assert eager.mlp == rows * (4 * 14336 + 4096) * 2 + router


def test_python_written_activations_hold_temporaries_in_eager_mode_only():
    gpt2 = get_preset("gpt2").architecture()
    assert gpt2.hidden_act == "gelu_new"  # GPT2Config's default when config.json omits it
    fused = inference_workspace(gpt2, 100, 100, 1, "sdpa", 4, 0, 8)
    eager = inference_workspace(gpt2, 100, 100, 1, "sdpa", 4, 0, 8, eager_modules=True)
    # c_fc output + gelu output vs input, 0.5*input, pow(input, 3), 0.044715*pow(...) alive together
    assert fused.mlp == 100 * 2 * 3072 * 4 and eager.mlp == 100 * 4 * 3072 * 4
    llama = get_preset("llama-3.1-8b").architecture()
    assert (inference_workspace(llama, 100, 100, 1, "sdpa", 2, 0, 6, eager_modules=True).mlp
            == inference_workspace(llama, 100, 100, 1, "sdpa", 2, 0, 6).mlp == 3 * 100 * 14336 * 2)


def test_vllm_profile_run_skips_the_delta_net_scan():
    """vLLM 0.33's profile batch has no attention metadata: a delta-net layer holds its projections, their
    contiguous b / a, the zeroed core output and the gated norm's output, never the chunked scan's fp32 work.
    Qwen3.5-35B-A3B: 16 key heads and 32 value heads of 128, so (2 x 2,048 + 4 x 4,096 + 4 x 32) x 2 bytes a token."""
    from memviz.core.activations import gated_deltanet_workspace, skipped_core_workspace

    a = get_preset("qwen3.5-35b-a3b").architecture()
    n = 8192
    profile = skipped_core_workspace(a, n, 1, 2)
    assert profile == n * (2 * 2048 + 4 * 4096 + 4 * 32) * 2
    assert profile < gated_deltanet_workspace(a, n, 1, 2) / 5
    ws = inference_workspace(a, n, n, 1, "flash", 2, 0, 0, recurrent_cores=False)
    assert ws.attention == max(profile, ws.attention)  # the full-attention layers' output is smaller still
    assert ws.peak == ws.hidden + max(ws.attention, ws.mlp, ws.logits)
    tp2 = skipped_core_workspace(a, n, 1, 2, tp=2)
    assert tp2 == pytest.approx(profile / 2)


def test_vllm_activations_of_a_hybrid_model_follow_the_profile_run():
    from memviz.core.estimate import Scenario, estimate

    a = get_preset("qwen3.5-35b-a3b").architecture()
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=32768,  # the language model's pass alone
                  options={"max_num_batched_tokens": 8192, "max_num_seqs": 256, "language_model_only": True})
    ws = inference_workspace(a, 8192, 8192, 1, "flash", 2, 0, 0, recurrent_cores=False)
    sampler = 256 * a.output_rows * (2 + 4 + 4 + 4)  # V2's FlashInfer step on an fp32 copy
    assert estimate(a, sc).devices[0].activations == max(ws.peak, 8192 * a.hidden_size * 2 + sampler)

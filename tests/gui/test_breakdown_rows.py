"""The Breakdown tab's engine rows carry the figures the estimate computed."""

import pytest

from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset
from memviz.core.units import Unit, format_bytes
from memviz.gui.breakdown import engine_rows


def test_the_vision_encoders_profile_pass_is_a_row_with_the_estimates_bytes():
    a = get_preset("qwen3.5-35b-a3b").architecture()
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=65536)
    est = estimate(a, sc)
    rows = {r[0]: r for r in engine_rows(est, Unit.GiB)}
    ep = est.engine_facts["encoder_profile"]
    assert rows["vision encoder's profile pass"][1:3] == ("1 image(s) x 16,384 tokens", format_bytes(ep["peak_bytes"], Unit.GiB, 3))
    assert est.devices[0].activations >= ep["peak_bytes"]
    text_only = estimate(a, sc.with_changes(options={"language_model_only": True}))
    assert "vision encoder's profile pass" not in {r[0] for r in engine_rows(text_only, Unit.GiB)}


def test_the_cross_attention_image_cache_is_a_row_with_the_estimates_bytes():
    """Llama 3.2 Vision: each sequence's image K/V (option images) is a row, and the KV inputs name the layers."""
    from memviz.gui.breakdown import breakdown_rows

    est = estimate(get_preset("llama-3.2-11b-vision").architecture(), Scenario(context_tokens=8192, batch=4,
                                                                                options={"images": 2}))
    per = est.engine_facts["cross_attention_bytes_per_image"]
    rows = {r[0]: r for r in engine_rows(est, Unit.GiB)}
    assert rows["cross-attention image cache"][1] == f"{2 * 4 * per:,d}"
    kv = next(r for r in breakdown_rows(est, Unit.GiB) if r[0] == "kv_cache")
    assert "8 cross-attention layers: K/V of 6,404 vision tokens an image, none of the text's" in kv[4]


def test_the_sampler_warm_up_is_a_row_and_is_the_profile_peak_when_it_is_larger():
    """Llama-3.1-8B on an H100: 1,024 dummy requests x 128,256 logits x 14 bytes (V2 model runner: FlashInfer's step on
    an fp32 copy), the profile's peak beside the forward's hidden states; V1's runner adds the Triton kernel's 132
    rows. The V2 runner's sampler state is a row of its own."""
    a = get_preset("llama-3.1-8b").architecture()
    est = estimate(a, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192))
    ps = est.engine_facts["profile_sampler"]
    assert (ps["sampler"], ps["requests"], ps["bytes"]) == ("flashinfer", 1024, 1024 * 128256 * 14)
    rows = {r[0]: r for r in engine_rows(est, Unit.GiB)}
    row = rows["sampler warm-up of the profile run"]
    assert row[1:3] == ("1,024 rows of logits", format_bytes(ps["bytes"], Unit.GiB, 3))
    assert "fp32 copy" in row[4] and "V2 model runner" in row[4]
    assert est.devices[0].activations == ps["bytes"] + 8192 * 4096 * 2
    state = rows["sampler state (V2 model runner)"]
    assert state[1:3] == ("1,024 request slots", format_bytes(est.engine_facts["sampler_state_bytes"], Unit.GiB, 3))
    v1 = estimate(a, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192, options={"model_runner": "v1",
                                                                                         "extensible_kv_cache": False}))
    assert v1.engine_facts["profile_sampler"]["bytes"] == 1024 * 128256 * 14 + 132 * 128256 * 4
    assert "Triton kernel warmed" in {r[0]: r for r in engine_rows(v1, Unit.GiB)}["sampler warm-up of the profile run"][4]
    assert "sampler state (V2 model runner)" not in {r[0] for r in engine_rows(v1, Unit.GiB)}


def test_an_eagle3_drafter_is_a_row_with_its_weights():
    """Llama-3.1-8B with an EAGLE-3 drafter of the released shape: 849,635,328 bytes (tests/core/engines/
    test_vllm_eagle3.py works them by hand)."""
    est = estimate(get_preset("llama-3.1-8b").architecture(), Scenario(
        engine="vllm", gpu="h100-80g", context_tokens=8192,
        options={"num_speculative_tokens": 3, "speculative_method": "eagle3"}))
    row = {r[0]: r for r in engine_rows(est, Unit.GiB)}["EAGLE-3 drafter (speculative decoding)"]
    assert row[1:3] == ("1 layer(s), 3 tokens a step", format_bytes(849_635_328, Unit.GiB, 3))
    assert "EAGLE-3 drafter checkpoint" in row[4]


def test_the_mtp_drafter_is_a_row_with_its_weights():
    """Qwen3.5-35B-A3B with two MTP draft tokens: the draft layer's weights as the estimate counts them."""
    a = get_preset("qwen3.5-35b-a3b").architecture()
    est = estimate(a, Scenario(engine="vllm", gpu="h200", context_tokens=8192,
                               options={"num_speculative_tokens": 2}))
    row = {r[0]: r for r in engine_rows(est, Unit.GiB)}["MTP draft layers (speculative decoding)"]
    assert row[1:3] == ("1 layer(s), 2 tokens a step", format_bytes(est.engine_facts["drafter"]["weight_bytes"], Unit.GiB, 3))
    assert "each of the model's 30 state layers keeps a state page more a request for each drafted token" in row[4]


def test_sparse_attentions_index_buffers_are_a_row_with_the_estimates_bytes():
    """DeepSeek-V3.2 at TP 8 on H200s: the top-k index buffers `vllm_dsa` sizes, counted in the overhead."""
    import transformers

    from memviz.core.arch import from_hf_config

    a = from_hf_config(transformers.AutoConfig.for_model("deepseek_v32").to_dict())
    est = estimate(a, Scenario(engine="vllm", weight_format="fp8", gpu="h200", tp=8, context_tokens=8192))
    row = {r[0]: r for r in engine_rows(est, Unit.GiB)}["top-k index buffers (sparse attention)"]
    assert row[1:3] == ("8,192 batched tokens", format_bytes(est.engine_facts["sparse_index_buffer_bytes"], Unit.GiB, 3))
    assert est.engine_facts["sparse_index_buffer_bytes"] == 8192 * 2048 * 4 + 61 * 1025 * 2049 * 4


def test_the_cold_compiles_benchmark_is_a_row_where_a_profile_sizes_the_pool():
    """Llama-3.1-8B on an H100 with a profile-sized pool: Inductor's benchmark on a copy of the 128,256 x 4,096 table
    beside two rows of 8,192 tokens; no row on a warm start or with 0.34's measured pool."""
    a = get_preset("llama-3.1-8b").architecture()
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192, options={"extensible_kv_cache": False})
    row = {r[0]: r for r in engine_rows(estimate(a, sc), Unit.GiB)}["cold compile's kernel benchmark"]
    assert row[2] == format_bytes((128256 + 2 * 8192) * 4096 * 2, Unit.GiB, 3)
    for options in ({"extensible_kv_cache": False, "cold_compile": False}, {}):
        rows = {r[0] for r in engine_rows(estimate(a, sc.with_changes(options=options)), Unit.GiB)}
        assert "cold compile's kernel benchmark" not in rows


def test_the_rotary_tables_are_a_row_inside_the_overhead():
    """Gemma-3-4B on vLLM: a table for the sliding layers' base and one 8x as long for the full layers' linear rope,
    131,072 and 1,048,576 positions x 256 in bf16 (0.5625 GiB), within the overhead the estimate counts."""
    a = get_preset("gemma-3-4b").architecture()
    est = estimate(a, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192))
    row = {r[0]: r for r in engine_rows(est, Unit.GiB)}["rotary tables (cos / sin)"]
    assert row[1:3] == ("2 tables: 131,072 and 1,048,576 positions x 256", format_bytes(0.5625 * 2**30, Unit.GiB, 3))
    assert est.devices[0].overhead >= 0.5625 * 2**30


def test_gemma3ns_per_layer_embedding_buffer_is_a_row_inside_the_overhead():
    """Gemma 3n's multimodal class on vLLM allocates its per-layer embeddings for a whole batch at load: 8,192 tokens
    x 35 layers x 256 in bf16 on an H100 (140 MiB)."""
    transformers = pytest.importorskip("transformers")
    from memviz.core.arch import from_hf_config

    a = from_hf_config(transformers.Gemma3nConfig().to_dict())
    est = estimate(a, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192))
    row = {r[0]: r for r in engine_rows(est, Unit.GiB)}["per-layer embeddings' buffer"]
    assert row[1:3] == ("8,192 batched tokens", format_bytes(8192 * 35 * 256 * 2, Unit.GiB, 3))


def test_lora_slots_are_a_row_inside_the_weights():
    """Four LoRA slots of rank 64 for Llama-3.1-8B: 1.38 GiB, which the weights include."""
    a = get_preset("llama-3.1-8b").architecture()
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192,
                  options={"enable_lora": True, "max_loras": 4, "max_lora_rank": 64})
    est = estimate(a, sc)
    row = {r[0]: r for r in engine_rows(est, Unit.GiB)}["LoRA adapter slots"]
    assert row[2] == format_bytes(est.engine_facts["lora_slot_bytes"], Unit.GiB, 3) == format_bytes(
        1_477_705_728, Unit.GiB, 3)
    assert est.devices[0].weights - estimate(a, sc.with_changes(options={})).devices[0].weights == 1_477_705_728


def test_flashinfers_workspaces_are_a_row_saying_what_the_budget_holds():
    """Llama-3.1-8B on a B200 (FlashInfer, 16,384 batched tokens): 1 GiB for the builder, 394 MiB for the TRT-LLM
    kernels; with a profile-sized pool the builder's comes after it."""
    a = get_preset("llama-3.1-8b").architecture()
    sc = Scenario(engine="vllm", gpu="b200", context_tokens=8192)
    row = {r[0]: r for r in engine_rows(estimate(a, sc), Unit.GiB)}["FlashInfer attention workspaces"]
    assert row[1:3] == ("16,384 batched tokens", format_bytes(2**30 + 394 * 2**20, Unit.GiB, 3))
    assert row[4].endswith("counted in the overhead")
    profiled = estimate(a, sc.with_changes(options={"extensible_kv_cache": False}))
    row = {r[0]: r for r in engine_rows(profiled, Unit.GiB)}["FlashInfer attention workspaces"]
    assert format_bytes(394 * 2**20, Unit.GiB, 3) in row[4] and row[4].endswith("allocated after the pool")
    hopper = estimate(a, sc.with_changes(gpu="h100-80g"))
    assert "FlashInfer attention workspaces" not in {r[0] for r in engine_rows(hopper, Unit.GiB)}


def test_the_moe_experts_workspace_is_a_row_saying_where_it_is_counted():
    """Qwen3-30B-A3B on an H100: 8,192 batched tokens x 8 experts x (2,048 + 2,048) bf16 values, in the overhead on
    the V2 runner and the activations on V1."""
    a = get_preset("qwen3-30b-a3b").architecture()
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192)
    for options, where in (({}, "overhead"), ({"model_runner": "v1", "extensible_kv_cache": False}, "activations")):
        est = estimate(a, sc.with_changes(options=options))
        row = {r[0]: r for r in engine_rows(est, Unit.GiB)}["MoE experts' workspace"]
        assert row[1:3] == ("8,192 batched tokens", format_bytes(8192 * 8 * 4096 * 2, Unit.GiB, 3))
        assert f"counted in the {where}" in row[4]


def test_a_pipelines_receive_buffer_is_a_row_saying_where_it_is_counted():
    """Llama-3.1-8B at PP 2 on H100s: hidden_states and residual of 8,192 tokens in bf16 on the second stage, in
    the overhead on the V2 runner and in the profile's peak on V1; no row without a pipeline."""
    a = get_preset("llama-3.1-8b").architecture()
    sc = Scenario(engine="vllm", gpu="h100-80g", pp=2, context_tokens=8192)
    for options, where in (({}, "overhead"), ({"model_runner": "v1", "extensible_kv_cache": False}, "activations")):
        est = estimate(a, sc.with_changes(options=options))
        assert est.engine_facts["pp_receive_buffer_bytes"] == 8192 * 2 * 4096 * 2
        row = {r[0]: r for r in engine_rows(est, Unit.GiB)}["pipeline receive buffer"]
        assert row[1:3] == ("8,192 batched tokens", format_bytes(8192 * 2 * 4096 * 2, Unit.GiB, 3))
        assert f"counted in the {where}" in row[4]
    assert "pipeline receive buffer" not in {r[0] for r in engine_rows(estimate(a, sc.with_changes(pp=1)), Unit.GiB)}


def test_the_kv_inputs_name_the_latent_rows_as_the_engine_lays_them_out():
    """Mistral Large 4's NoPE layers cache a 512-wide latent in transformers and vLLM's 576-wide row."""
    import transformers

    from memviz.core.arch import from_hf_config
    from memviz.gui.breakdown import breakdown_rows

    a = from_hf_config(transformers.AutoConfig.for_model("mistral_large4").to_dict())
    scenarios = {"transformers": Scenario(engine="transformers", weight_format="fp8", context_tokens=8192),
                 "vllm": Scenario(engine="vllm", weight_format="fp8", gpu="b200", tp=8, context_tokens=8192)}
    texts = {engine: next(r[4] for r in breakdown_rows(estimate(a, sc), Unit.GiB) if r[0] == "kv_cache")
             for engine, sc in scenarios.items()}
    assert "MLA: one latent of 512 or 576 a token and layer that caches one" in texts["transformers"]
    assert "MLA: one latent of 576 a token and layer that caches one" in texts["vllm"]


def test_the_cuda_graph_row_counts_the_graphs_and_names_fa3_s_split_buffers():
    """Llama-3.1-8B on an H100 (FA3): 51 piecewise and 51 FULL graphs up to 512 tokens, 32 x 512 x 32 heads x 129 x
    4 bytes of split-KV buffers in them; on an A100 (FA2) the row names none."""
    a = get_preset("llama-3.1-8b").architecture()
    est = estimate(a, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192))
    row = {r[0]: r for r in engine_rows(est, Unit.GiB)}["CUDA graphs"]
    assert row[1] == "51 piecewise + 51 FULL, up to 512 tokens"
    assert row[2] == format_bytes(est.engine_facts["cudagraph_bytes"], Unit.GiB, 3)
    assert est.engine_facts["cudagraph_split_kv_bytes"] == 32 * 512 * 32 * 129 * 4
    assert f"split-KV buffers {format_bytes(32 * 512 * 32 * 129 * 4, Unit.GiB, 3)}" in row[4]
    a100 = estimate(a, Scenario(engine="vllm", gpu="a100-80g", context_tokens=8192))
    assert "split-KV" not in {r[0]: r for r in engine_rows(a100, Unit.GiB)}["CUDA graphs"][4]

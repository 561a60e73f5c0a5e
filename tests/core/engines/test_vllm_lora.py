"""vLLM's LoRA adapter slots (`vllm_lora`): every linear layer's A and B per slot as vLLM 0.34 partitions them, the
experts', the embeddings the model class lists, the CUDA graphs captured twice, and what vLLM refuses."""

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.presets import get_preset

LLAMA8 = get_preset("llama-3.1-8b").architecture()
#: Llama-3.1-8B's linear layers in one layer for one slot of rank r, A (r x in) + B (out x r) each, over r:
#: q 4,096 + 4,096, k and v 4,096 + 1,024, o 4,096 + 4,096, gate and up 4,096 + 14,336, down 14,336 + 4,096
LLAMA8_LAYER = 8192 + 2 * 5120 + 8192 + 2 * 18432 + 18432
#: embed_tokens (vocab + hidden) and lm_head (hidden + vocab), which LlamaForCausalLM lists in embedding_modules
LLAMA8_EMBEDDINGS = 2 * (128256 + 4096)


def _weights(a, **kwargs) -> int:
    sc = Scenario(**{"engine": "vllm", "gpu": "h100-80g", "context_tokens": 8192, **kwargs})
    return estimate(a, sc).devices[0].weights


def _lora(a, options: dict, **kwargs) -> int:
    return _weights(a, options={"enable_lora": True, **options}, **kwargs) - _weights(a, **kwargs)


def test_every_linear_layer_and_the_embeddings_get_max_loras_slots_of_max_lora_rank():
    """Four slots of rank 64 for Llama-3.1-8B: 1.38 GiB beside its 14.96 GiB; the launch command says so."""
    assert _lora(LLAMA8, {"max_loras": 4, "max_lora_rank": 64}) == 4 * 64 * (32 * LLAMA8_LAYER + LLAMA8_EMBEDDINGS) * 2
    assert _lora(LLAMA8, {}) == 16 * (32 * LLAMA8_LAYER + LLAMA8_EMBEDDINGS) * 2  # one slot of rank 16
    est = estimate(LLAMA8, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192,
                                    options={"enable_lora": True, "max_loras": 4, "max_lora_rank": 64,
                                             "lora_dtype": "float16"}))
    assert est.launch_command("meta-llama/Llama-3.1-8B").endswith(
        "--enable-lora --max-loras 4 --max-lora-rank 64 --lora-dtype float16")
    assert est.engine_facts["lora_slot_bytes"] == 4 * 64 * (32 * LLAMA8_LAYER + LLAMA8_EMBEDDINGS) * 2


def test_tensor_parallel_ranks_split_a_column_layers_b_and_a_row_layers_a():
    """At TP 2: q / k / v / gate / up keep A whole and half of B; o / down half of A and B whole; the embeddings are
    whole on every rank. --fully-sharded-loras halves the column layers' A and the row layers' B too."""
    column = (4096 + 4096 / 2) + 2 * (4096 + 1024 / 2) + 2 * (4096 + 14336 / 2)
    row = (4096 / 2 + 4096) + (14336 / 2 + 4096)
    assert _lora(LLAMA8, {}, tp=2) == 16 * (32 * (column + row) + LLAMA8_EMBEDDINGS) * 2
    sharded_column = (4096 / 2 + 4096 / 2) + 2 * (4096 / 2 + 1024 / 2) + 2 * (4096 / 2 + 14336 / 2)
    sharded_row = (4096 / 2 + 4096 / 2) + (14336 / 2 + 4096 / 2)
    assert _lora(LLAMA8, {"fully_sharded_loras": True}, tp=2) == pytest.approx(
        16 * (32 * (sharded_column + sharded_row) + LLAMA8_EMBEDDINGS) * 2)


def test_moe_layers_hold_a_slot_for_every_expert_and_the_router():
    """Qwen3-30B-A3B, one slot of rank 16: each of the 128 experts' gate and up (A 2,048 wide, B 768 rows) and down
    (A 768 wide, B 2,048 rows), the router (a ReplicatedLinear), the attention, the embeddings: 1.58 GiB."""
    a = get_preset("qwen3-30b-a3b").architecture()
    experts = 128 * 3 * (2048 + 768)
    attention = (2048 + 4096) + 2 * (2048 + 512) + (4096 + 2048)
    layer = experts + attention + (2048 + 128)
    assert _lora(a, {}) == 16 * (48 * layer + 2 * (151936 + 2048)) * 2


def test_pipeline_stages_hold_their_layers_slots_the_first_the_embedding_the_last_the_head():
    sc = Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192, pp=2, options={"enable_lora": True})
    lora = [d.weights for d in estimate(LLAMA8, sc).devices]
    plain = [d.weights for d in estimate(LLAMA8, sc.with_changes(options={})).devices]
    assert [x - y for x, y in zip(lora, plain, strict=True)] == [16 * (16 * LLAMA8_LAYER + 128256 + 4096) * 2] * 2


def test_cuda_graphs_are_captured_without_and_with_adapters():
    base = estimate(LLAMA8, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192)).engine_facts
    lora = estimate(LLAMA8, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192,
                                     options={"enable_lora": True})).engine_facts
    assert lora["cudagraph_captures"]["piecewise"] == 2 * base["cudagraph_captures"]["piecewise"]
    assert lora["cudagraph_captures"]["full"] == 2 * base["cudagraph_captures"]["full"]
    assert lora["cudagraph_bytes"] > base["cudagraph_bytes"]


def test_a_class_without_embedding_modules_gets_none():
    """Mistral's vLLM class empties embedding_modules: its linear layers only."""
    cfg = {"model_type": "mistral", "hidden_size": 1024, "intermediate_size": 2048, "num_hidden_layers": 2,
           "num_attention_heads": 8, "num_key_value_heads": 8, "vocab_size": 32000}
    a = from_hf_config(cfg)
    layer = 4 * (1024 + 1024) + 2 * (1024 + 2048) + (2048 + 1024)
    assert _lora(a, {}) == 16 * 2 * layer * 2


@pytest.mark.parametrize(("options", "tp", "match"), [
    ({"max_loras": 2}, 1, "without enable_lora"),
    ({"enable_lora": True, "max_lora_rank": 48}, 1, "one of 1, 8, 16"),
    ({"enable_lora": True, "max_lora_rank": 1, "fully_sharded_loras": True}, 2, "must divide"),
    ({"enable_lora": True, "lora_dtype": "float32"}, 1, "lora_dtype"),
])
def test_what_vllm_refuses_is_one_line(options, tp, match):
    with pytest.raises(InputError, match=match):
        estimate(LLAMA8, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192, tp=tp, options=options))


def test_the_output_layers_lora_takes_vocabularies_up_to_258048():
    cfg = {"model_type": "llama", "hidden_size": 1024, "intermediate_size": 2048, "num_hidden_layers": 2,
           "num_attention_heads": 8, "num_key_value_heads": 8, "vocab_size": 262144}
    with pytest.raises(InputError, match="258,048"):
        estimate(from_hf_config(cfg), Scenario(engine="vllm", context_tokens=4096, options={"enable_lora": True}))


def test_the_types_whose_vllm_class_has_no_lora_support_are_the_ones_refused():
    """vLLM 0.34 raises "<class> does not support LoRA yet." for a class without SupportsLoRA: the model types memviz
    refuses are those whose class is registered but not in the wheel's LoRA list; the Transformers backend supports
    LoRA."""
    pytest.importorskip("transformers")
    from memviz.core.engines.vllm_lora import NO_LORA
    from tests.core.engines.test_vllm_registry import types_without

    refused = types_without("lora")
    assert set(refused) == set(NO_LORA)
    assert all(NO_LORA[t] in names for t, names in refused.items())


@pytest.mark.parametrize("preset", ["gpt2", "falcon-7b"])
def test_lora_on_a_class_without_lora_support_is_one_line(preset, capsys):
    from memviz.cli import main
    a = get_preset(preset).architecture()
    with pytest.raises(InputError, match="does not support LoRA yet"):
        estimate(a, Scenario(engine="vllm", gpu="h100-80g", context_tokens=1024, options={"enable_lora": True}))
    assert estimate(a, Scenario(engine="vllm", gpu="h100-80g", context_tokens=1024)).total > 0
    assert main(["estimate", "--preset", preset, "--engine", "vllm", "--gpu", "h100-80g", "--context", "1024",
                 "-o", "enable_lora=true"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "does not support LoRA yet" in err[0]


@pytest.mark.parametrize(("targets", "values"), [
    # o_proj alone: A 4,096 x r, B 4,096 x r in each of 32 layers
    ("o_proj", 32 * 8192),
    # q_proj selects the whole qkv_proj (`is_in_target_modules`: a name packed into it), q, k and v slices alike
    ("q_proj", 32 * (8192 + 2 * 5120)), ("q_proj+v_proj", 32 * (8192 + 2 * 5120)),
    ("qkv_proj o_proj gate_up_proj down_proj", 32 * LLAMA8_LAYER),
    ("embed_tokens lm_head", LLAMA8_EMBEDDINGS), ("lm_head", 4096 + 128256),
])
def test_target_modules_give_slots_to_the_modules_they_name(targets, values):
    """--lora-target-modules (`LoRAConfig.target_modules`), four slots of rank 64 in bf16; the launch command lists
    the names."""
    options = {"max_loras": 4, "max_lora_rank": 64, "lora_target_modules": targets}
    assert _lora(LLAMA8, options) == 4 * 64 * values * 2
    est = estimate(LLAMA8, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192,
                                    options={"enable_lora": True, **options}))
    assert est.launch_command("m").endswith("--lora-target-modules " + " ".join(sorted(targets.replace("+", " ").split())))


def test_target_modules_of_moe_mla_and_lfm2_models():
    """The experts are `experts`, the router `gate` (gpt-oss's `router`), MLA's q_a and kv_a the packed
    fused_qkv_a_proj, LFM2's MLP `w13` / `w2` and its attention's output `out_proj` (lfm2.py)."""
    from memviz.core.engines.vllm_lora import target_names

    assert {"experts", "gate", "qkv_proj"} <= set(target_names(get_preset("qwen3-30b-a3b").architecture()))
    assert {"experts", "router"} <= set(target_names(get_preset("gpt-oss-20b").architecture()))
    assert {"fused_qkv_a_proj", "q_a_proj", "kv_b_proj"} <= set(target_names(get_preset("deepseek-v3").architecture()))
    lfm2 = set(target_names(get_preset("lfm2-1.2b").architecture()))
    assert {"w13", "w1", "w3", "w2", "out_proj", "qkv_proj"} <= lfm2 and "gate_up_proj" not in lfm2
    qwen3 = get_preset("qwen3-30b-a3b").architecture()
    assert _lora(qwen3, {"lora_target_modules": "experts"}) < _lora(qwen3, {})


@pytest.mark.parametrize(("options", "match"), [
    ({"enable_lora": True, "lora_target_modules": "c_attn"},
     "c_attn names no module of Llama-3.1-8B; its vLLM modules are qkv_proj"),
    ({"lora_target_modules": "o_proj"}, "lora_target_modules set without enable_lora"),
])
def test_target_modules_refused(options, match):
    with pytest.raises(InputError, match=match):
        estimate(LLAMA8, Scenario(engine="vllm", gpu="h100-80g", context_tokens=8192, options=options))

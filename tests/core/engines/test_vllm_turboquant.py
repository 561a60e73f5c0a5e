"""vLLM 0.34's TurboQuant caches (`engines/vllm_turboquant.py`): a head's K and V packed in one slot
(`TurboQuantConfig.slot_size_aligned`), a dense model's first and last two layers in its own dtype
(`get_boundary_skip_layers`), FlashAttention 2 for those, the builder's workspace (`_reserve_workspace`). Bytes worked
by hand for Llama-3.1-8B: 32 layers x 8 KV heads of 128, 32 query heads."""

import pytest

from memviz.core.engines import vllm_turboquant
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.formats import get_kv_format
from memviz.core.importers.vllm_log import vllm_scenario
from memviz.core.presets import get_preset

LLAMA8 = get_preset("llama-3.1-8b").architecture()


def run(kv="turboquant_k8v4", gpu="h100-80g", a=LLAMA8, context=8192, **options):
    return estimate(a, Scenario(engine="vllm", gpu=gpu, kv_format=kv, context_tokens=context, options=options))


@pytest.mark.parametrize(("kv", "slot_128", "slot_256"), [
    # FP8 keys: 128 bytes; 3 / 4-bit keys: 48 / 64 bytes and a 2-byte norm; 4 / 3-bit values: 64 / 48 bytes and a
    # 2-byte scale and zero each; rounded up to an even size
    ("turboquant_k8v4", 128 + 64 + 4, 256 + 128 + 4), ("turboquant_4bit_nc", 64 + 2 + 64 + 4, 128 + 2 + 128 + 4),
    ("turboquant_k3v4_nc", 48 + 2 + 64 + 4, 96 + 2 + 128 + 4), ("turboquant_3bit_nc", 48 + 2 + 48 + 4, 96 + 2 + 96 + 4),
])
def test_a_heads_slot(kv, slot_128, slot_256):
    fmt = get_kv_format(kv)
    assert (fmt.head_bytes(128, 128), fmt.head_bytes(256, 256)) == (slot_128, slot_256)
    assert get_kv_format("turboquant_k3v4_nc").head_bytes(72, 72) == 70  # 27 + 2 + 36 + 4 = 69, rounded up


@pytest.mark.parametrize(("kv", "token_bytes"), [
    ("turboquant_k8v4", 4 * 8 * 512 + 28 * 8 * 196), ("turboquant_4bit_nc", 4 * 8 * 512 + 28 * 8 * 134),
    ("turboquant_k3v4_nc", 4 * 8 * 512 + 28 * 8 * 118), ("turboquant_3bit_nc", 4 * 8 * 512 + 28 * 8 * 102),
])
def test_the_boundary_layers_cache_in_bf16_and_the_rest_in_slots(kv, token_bytes):
    """Layers 0, 1, 30 and 31 keep 8 heads x 512 bytes a token; the 28 others a slot a head; one 64-token block of
    the one group (all full attention) holds them all; the launch command names the dtype."""
    est = run(kv)
    assert est.engine_facts["kv_block_bytes"] == 64 * token_bytes
    assert est.launch_command("m").endswith(f"--kv-cache-dtype {kv}")


def test_boundary_layers():
    assert vllm_turboquant.boundary_layers(LLAMA8) == {0, 1, 30, 31}
    assert vllm_turboquant.boundary_layers(get_preset("qwen3.5-35b-a3b").architecture()) == set()  # hybrid


def test_the_builders_workspace():
    """H100 defaults, 1,024 request slots x 32 heads: 32 splits x 129 fp32 (541,065,216 B), a bf16 row of 128
    (8,388,608) and an fp32 value (131,072) beat the prefill buffers (2 x 8 heads x 8,192 tokens x 128 fp16,
    33,554,432); at 131,072 tokens and 16 slots the prefill buffers are the larger (2 x 8 x 131,072 x 128 x 2)."""
    assert run().engine_facts["attention_workspace_bytes"] == 541065216 + 8388608 + 131072
    long = run(context=131072, max_num_seqs=16)
    assert long.engine_facts["attention_workspace_bytes"] == 2 * 8 * 131072 * 128 * 2
    assert run(context=131072, max_num_seqs=16, enable_chunked_prefill=False).engine_facts[
        "attention_workspace_bytes"] == 16 * 32 * (32 * 129 * 4 + 128 * 2 + 4)


def test_flashattention_2_for_the_boundary_layers_and_flashinfer_on_blackwell():
    """No FlashAttention 3 split buffers on an H100; on a B200 the boundary layers run FlashInfer, whose workspaces
    come beside TurboQuant's."""
    assert run("bf16").engine_facts["cudagraph_split_kv_bytes"] > 0
    assert run().engine_facts["cudagraph_split_kv_bytes"] == 0
    b200 = run(gpu="b200").engine_facts
    assert b200["attention_workspace_owners"] == "FlashInfer and TurboQuant"
    assert b200["attention_workspace_bytes"] > run("bf16", gpu="b200").engine_facts["attention_workspace_bytes"]


def test_a_hybrid_model_compresses_every_attention_layer():
    """Qwen3.5-35B-A3B: 10 full-attention layers of 2 KV heads of 256, a 4-bit slot of 262 bytes each."""
    est = run("turboquant_4bit_nc", gpu="h200", a=get_preset("qwen3.5-35b-a3b").architecture())
    assert est.kv_bytes_per_token == 10 * 2 * 262


@pytest.mark.parametrize(("preset", "options", "weights", "message"), [
    ("gemma-3-4b", {}, "bf16", "beside sliding-window layers"),
    ("deepseek-v2-lite", {}, "bf16", "MLA"),
    ("llama-3.1-8b", {"attention_backend": "FLASH_ATTN"}, "bf16", "TURBOQUANT backend, not FLASH_ATTN"),
    ("llama-3.1-8b", {}, "fp32", "float16 and bfloat16 activations only"),
])
def test_what_is_refused(preset, options, weights, message):
    sc = Scenario(engine="vllm", gpu="h100-80g", kv_format="turboquant_k8v4", weight_format=weights,
                  context_tokens=8192, options=options)
    with pytest.raises(InputError, match=message):
        estimate(get_preset(preset).architecture(), sc)


def test_the_log_reader_takes_the_turboquant_names():
    args = "non-default args: {'model': '/m', 'kv_cache_dtype': 'turboquant_3bit_nc'}\n"
    assert vllm_scenario(args, LLAMA8, "h100-80g").kv_format == "turboquant_3bit_nc"


def test_slots_and_boundary_layers_are_vllms_own():
    """vLLM 0.34.0's own turboquant/config.py, run on its wheel's source (scripts/vllm_turboquant_slots.py,
    tests/data/published/vllm_turboquant.json): slot_size_aligned for eight head sizes and four presets, and the
    boundary layers of dense models of 1 to 61 layers, are memviz's."""
    import json
    from pathlib import Path

    from memviz.core.arch import from_hf_config

    vllm = json.loads((Path(__file__).parents[2] / "data" / "published" / "vllm_turboquant.json").read_text())
    for preset, slots in vllm["slot_bytes"].items():
        assert {d: get_kv_format(preset).head_bytes(int(d), int(d)) for d in slots} == slots
    for layers, skipped in vllm["boundary_layers"].items():
        a = from_hf_config({"model_type": "llama", "hidden_size": 256, "num_hidden_layers": int(layers),
                            "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 512,
                            "vocab_size": 128})
        assert sorted(vllm_turboquant.boundary_layers(a)) == skipped

import numpy as np
import pytest

from memviz.core.arch import from_hf_config
from memviz.core.formats import get_kv_format
from memviz.core.kv import KVLayout, kv_bytes_per_token, kv_cache_bytes, paged
from memviz.core.presets import get_preset
from memviz.core.units import GiB

SEED = get_preset("seed-hypothetical").architecture()
BF16 = get_kv_format("bf16")


def test_seed_bytes_per_token_is_128_kib():
    assert kv_bytes_per_token(SEED, BF16) == 131_072 == 2 * 32 * 8 * 128 * 2


@pytest.mark.parametrize(("tokens", "batch", "gib"), [(8192, 1, 1), (32768, 1, 4), (32768, 4, 16), (65536, 4, 32)])
def test_seed_table(tokens, batch, gib):
    assert kv_cache_bytes(SEED, BF16, [tokens] * batch) == gib * GiB


def test_uneven_sequences_are_summed_not_max_times_batch():
    assert kv_cache_bytes(SEED, BF16, [1000, 3000]) == 4000 * 131_072


def test_paged_rounds_each_sequence_up_to_blocks():
    assert paged(17, 16) == 32
    assert kv_cache_bytes(SEED, BF16, [17, 1], KVLayout(block_tokens=16)) == (32 + 16) * 131_072


def test_sliding_layers_keep_their_window():
    a = get_preset("mistral-7b-v0.1").architecture()  # every layer slides, window 4096
    assert kv_cache_bytes(a, BF16, [32768]) == kv_cache_bytes(a, BF16, [4096])


def test_gemma2_half_of_layers_slide():
    a = get_preset("gemma-2-9b").architecture()
    per = kv_bytes_per_token(a, BF16) / a.num_layers
    assert kv_cache_bytes(a, BF16, [8192]) == 21 * per * 8192 + 21 * per * 4096


def test_mla_latent_vs_expanded():
    a = get_preset("deepseek-v3").architecture()
    latent = kv_bytes_per_token(a, BF16, KVLayout(latent_mla=True))
    assert latent == 61 * (512 + 64) * 2
    expanded = kv_bytes_per_token(a, BF16)
    assert expanded == 61 * 128 * (192 + 128) * 2  # K = nope + rope, V = v_head_dim


def test_tensor_parallel_splits_kv_heads_but_not_below_one():
    a = get_preset("llama-3.1-8b").architecture()  # 8 KV heads
    full = kv_bytes_per_token(a, BF16)
    assert kv_bytes_per_token(a, BF16, KVLayout(kv_heads_divisor=2)) == full / 2
    assert kv_bytes_per_token(a, BF16, KVLayout(kv_heads_divisor=16)) == full / 8


def test_quantized_kv_adds_scales():
    a = SEED
    assert kv_bytes_per_token(a, get_kv_format("fp8")) == 65536
    assert kv_bytes_per_token(a, get_kv_format("int8")) == 65536 + 2 * 32 * 8 * 4
    assert kv_bytes_per_token(a, get_kv_format("q4_0")) == 2 * 32 * 8 * 4 * 18


def test_vectorised_matches_scalar():
    xs = np.array([1, 100, 5000, 70000])
    vec = kv_cache_bytes(SEED, BF16, xs)
    assert list(vec) == [kv_cache_bytes(SEED, BF16, [int(x)]) for x in xs]


def test_separate_k_and_v_head_dims():
    cfg = {"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
           "num_key_value_heads": 2, "vocab_size": 100, "intermediate_size": 512}
    a = from_hf_config(cfg).with_changes(v_head_dim=32)
    assert kv_bytes_per_token(a, BF16) == 2 * 2 * (64 + 32) * 2

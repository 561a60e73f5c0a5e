"""dots3 is read as a Llama-style MLA decoder (its parameters within 0.08 % of transformers' build); its cache is not
modelled, and the reading says so: a tiny real run's cache is larger than the estimate."""

import warnings

import pytest

transformers = pytest.importorskip("transformers")
pytest.importorskip("torch")

from tests.core.engines.transformers_runs import run_and_compare  # noqa: E402


def test_the_reading_names_the_cache_it_leaves_out_and_the_run_shows_it_short():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        config = transformers.AutoConfig.for_model(
            "dots3_note_text", vocab_size=512, hidden_size=64, intermediate_size=96, moe_intermediate_size=32,
            num_hidden_layers=6, num_attention_heads=4, num_key_value_heads=4, n_routed_experts=4, num_experts_per_tok=2,
            kv_lora_rank=16, q_lora_rank=32, qk_rope_head_dim=8, qk_nope_head_dim=8, v_head_dim=16, head_dim=16,
            index_head_dim=16, index_n_heads=2, index_topk=8, shared_experts_intermediate_size=32, pad_token_id=0,
            swa_num_attention_heads=2, swa_num_key_value_heads=2, swa_kv_lora_rank=32, swa_q_lora_rank=32,
            swa_head_dim=16, swa_qk_nope_head_dim=8, swa_v_head_dim=16, sliding_window_size=64)
    a, _, held, kv = run_and_compare(transformers.AutoModelForCausalLM.from_config, config)
    # three indexed layers cache latent + rope + an indexer key (16 + 8 + 16), three sliding ones the wider latent
    # + rope (32 + 8), fp32, 24 tokens; memviz counts 16 + 8 in every layer
    assert held == (3 * 40 + 3 * 40) * 24 * 4 and kv == 6 * 24 * 24 * 4
    assert any(w.startswith("its KV cache is short here: dots3's sliding layers") for w in a.warnings)

"""The Llama-shaped families that differ from Llama in their norms, biases and MLP (Command R, OLMo 1-3, OLMoE,
FlexOlmo, Seed-OSS, GLM, StableLM, Nemotron, HunYuan dense, PhiMoE, MiniMax-M2, HyperCLOVA X) and those of Llama's
layout under types of their own (Granite 3, SmolLM3, Ministral 3, EXAONE, InternLM3, Helium, VaultGemma, CWM,
MiniCPM3 and Youtu with MLA, IQuest-Coder, DiffLlama; Granite SWA and Granite MoE SWA with attention sinks, Mellum with q/k
norms and experts), run for real as tiny
random transformers models on the CPU: the model holds memviz's parameters and the cache it fills memviz's KV
(transformers 5.24's modeling files of each type). Read as Llama before, NemotronConfig's default (Nemotron-4 15B)
counted +30.9 % (a gated MLP) and CohereConfig's without `tie_word_embeddings` +6.0 % (its 256K-row head twice)."""

import warnings

import pytest

from memviz.core.arch import from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import parameter_count
from tests.core.engines.transformers_runs import assert_run_matches

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

S, F = "sliding_attention", "full_attention"
BASE = dict(vocab_size=512, hidden_size=64, intermediate_size=96, num_hidden_layers=4, num_attention_heads=4,
            num_key_value_heads=2, head_dim=16, pad_token_id=0, bos_token_id=1, eos_token_id=2)
CASES = {
    "cohere": dict(),  # one bias-free LayerNorm before parallel attention and MLP, tied
    "cohere-qk-norm": dict(model_type="cohere", use_qk_norm=True, tie_word_embeddings=False),  # Command R+
    "cohere2": dict(sliding_window=32, layer_types=[S, S, S, F]),
    "olmo": dict(),  # OlmoLayerNorm: no weights at all
    "olmo2": dict(),  # q/k norms over every head, post-norms
    "olmo3": dict(sliding_window=32, layer_types=[S, S, S, F]),
    "olmoe": dict(num_experts=4, num_experts_per_tok=2, intermediate_size=32),
    "flex_olmo": dict(num_experts=4, num_experts_per_tok=2, intermediate_size=32),
    "seed_oss": dict(),  # q/k/v biased, o_proj not
    "seed_oss-out-bias": dict(model_type="seed_oss", attention_out_bias=True),
    "glm": dict(),
    "stablelm": dict(),  # LayerNorms with bias
    "stablelm-2-12b": dict(model_type="stablelm", qk_layernorm=True, use_parallel_residual=True, use_qkv_bias=True),
    "nemotron": dict(),  # relu2 up/down, LayerNorm1P with bias
    "nemotron-biased": dict(model_type="nemotron", attention_bias=True, mlp_bias=True),
    "hunyuan_v1_dense": dict(),
    "phimoe": dict(num_local_experts=4, num_experts_per_tok=2, attention_bias=True),
    "minimax_m2": dict(num_local_experts=4, num_experts_per_tok=2, intermediate_size=32),
    "hyperclovax": dict(),
    "hyperclovax-pre-norm": dict(model_type="hyperclovax", use_post_norm=False),
    # Llama's layout under types of their own (memviz.core.arch LLAMA_LAYOUT_TIED)
    "granite": dict(), "granitemoe": dict(num_local_experts=4, num_experts_per_tok=2),
    "granitemoeshared": dict(num_local_experts=4, num_experts_per_tok=2, shared_intermediate_size=48),
    "smollm3": dict(), "ministral3": dict(), "exaone": dict(), "internlm3": dict(), "helium": dict(),
    "vaultgemma": dict(sliding_window=32, layer_types=[S, F, S, F]), "cwm": dict(sliding_window=32,
                                                                                layer_types=[F, S, S, S]),
    "iquestcoder": dict(),
    "minicpm3": dict(q_lora_rank=32, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=16),
    "youtu": dict(q_lora_rank=32, kv_lora_rank=16, qk_nope_head_dim=8, qk_rope_head_dim=8, v_head_dim=16, head_dim=8),
    # Granite's SWA releases: a learned sink per head, three sliding layers in four; Mellum: q/k norms, experts
    "granite_swa": dict(sliding_window=32), "granitemoe_swa": dict(sliding_window=32, num_local_experts=4,
                                                                   num_experts_per_tok=2),
    "mellum": dict(num_experts=4, num_experts_per_tok=2, moe_intermediate_size=32, head_dim=16),
    "ministral": dict(sliding_window=32),  # Ministral-8B: Mistral's decoder, sliding in every layer
    "diffllama": dict(),  # differential attention: four lambdas of head_dim a layer, Llama's cache
}


def _config(case: str):
    fields = {**BASE, **CASES[case]}
    model_type = fields.pop("model_type", case)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.AutoConfig.for_model(model_type, **fields)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_model_and_cache_transformers_builds_are_memviz_figures(case):
    assert_run_matches(_config(case))


def test_command_r_ties_its_head_when_the_config_does_not_say():
    """CohereConfig / Cohere2Config tie the embeddings by default: a config.json without the field loads one matrix."""
    cfg = {k: v for k, v in _config("cohere").to_dict().items() if k != "tie_word_embeddings"}
    a = from_hf_config(cfg)
    assert a.tie_word_embeddings
    assert parameter_count(a) == parameter_count(a.with_changes(tie_word_embeddings=False)) - 512 * 64


@pytest.mark.parametrize("model_type", ["flex_olmo", "hyperclovax", "diffllama"])
def test_llamacpp_refuses_what_it_has_no_architecture_for(model_type):
    """llama.cpp 0c1e570's converter registers none of FlexOlmoForCausalLM, HyperCLOVAXForCausalLM and
    DiffLlamaForCausalLM."""
    a = from_hf_config(_config(model_type).to_dict())
    with pytest.raises(InputError, match="cannot run"):
        estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=64))


@pytest.mark.parametrize("model_type", ["doge", "hrm_text", "cpmant", "gpt_neox_japanese", "ctrl", "moshi", "jetmoe",
                                        "biogpt", "openai-gpt", "git", "xlnet", "bert-generation"])
def test_decoders_whose_layers_memviz_does_not_model_are_refused_in_one_line(model_type):
    """Read as Llama-style decoders these counted -41.4 % (GIT) to over 8,000x (Doge) of what transformers builds;
    LongCat-Flash's router fields stopped the reading with a line naming a field."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = transformers.AutoConfig.for_model(model_type).to_dict()
    with pytest.raises(InputError, match=f"^{model_type}: its layers hold .* which memviz does not model"):
        from_hf_config(cfg)


@pytest.mark.parametrize(("model_type", "language_model"), [("idefics", "idefics"), ("blip", "blip_text_model")])
def test_multimodal_decoders_whose_layers_memviz_does_not_model_are_refused(model_type, language_model):
    """IDEFICS's language model read Llama-style counted -45.4 % of what transformers builds (its gated
    cross-attention layers missing), BLIP's captioning decoder -0.85 % and no cross-attention cache."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = transformers.AutoConfig.for_model(model_type).to_dict()
    with pytest.raises(InputError, match=f"^{language_model}: its layers hold .*cross-attention.* which memviz does not"):
        from_hf_config(cfg)


def test_ernie_4_5_vl_is_refused_with_its_reason():
    """ERNIE-4.5-VL's MoE layers hold text and vision experts of two widths (moe_intermediate_size [1536, 512]): one
    line naming them, not a complaint about a field's type."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cfg = transformers.AutoConfig.for_model("ernie4_5_vl_moe").to_dict()
    with pytest.raises(InputError, match="^ernie4_5_vl_moe_text: its layers hold text and vision experts of two widths"):
        from_hf_config(cfg)


def test_mpt_runs_as_memviz_reads_its_own_names():
    """MPT's d_model / n_heads / n_layers (MptConfig): weight-only LayerNorms, one bias-free Wqkv, a GELU MLP of
    4 x d_model, ALiBi; its cache and parameters as memviz reads them."""
    config = transformers.MptConfig(d_model=64, n_heads=4, n_layers=2, vocab_size=512, max_seq_len=256,
                                    pad_token_id=0, bos_token_id=1, eos_token_id=2)
    assert_run_matches(config)

"""LongCat-Flash (model_type longcat_flash): a decoder layer of two MLA attentions and two MLPs beside one shortcut
MoE with zero-computation experts, read as two sublayers (transformers 5.25 modeling_longcat_flash.py, vLLM 0.34
longcat_flash.py), and LongCat-Flash-Lite's n-gram input embedding (longcat_flash_ngram.py). The tiny real run
(cache and weights) is in test_moe_families_run.py, the default config against transformers' build in
test_arch_vs_transformers.py."""

import pytest

from memviz.cli import main
from memviz.core.arch import from_hf_config
from memviz.core.engines.vllm_pipeline import pipeline_split
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import build_inventory, parameter_count

#: meituan-longcat/LongCat-Flash-Chat's config.json (the shapes LongcatFlashConfig defaults to)
RELEASED = dict(architectures=["LongcatFlashForCausalLM"], model_type="longcat_flash", hidden_size=6144,
                ffn_hidden_size=12288, expert_ffn_hidden_size=2048, num_layers=28, num_attention_heads=64,
                kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128,
                n_routed_experts=512, zero_expert_num=256, zero_expert_type="identity", moe_topk=12,
                vocab_size=131072, max_position_embeddings=131072, routed_scaling_factor=6.0,
                rope_theta=10000000.0, mla_scale_q_lora=True, mla_scale_kv_lora=True)


def test_a_decoder_layer_is_two_mla_sublayers_the_first_with_the_experts():
    a = from_hf_config(RELEASED)
    assert (a.num_layers, a.block_layers, a.is_mla) == (56, 2, True)
    assert a.moe_layers == (True, False) * 28
    assert (a.num_experts, a.zero_experts, a.experts_per_token) == (512, 256, 12)
    assert (a.moe_intermediate_size, a.shared_expert_intermediate_size, a.intermediate_size) == (2048, 12288, 12288)
    router = [t for t in build_inventory(a) if t.layer == 0 and t.kind == "router"]
    assert [t.shape for t in router] == [(768, 6144)]  # the 256 zero experts are scored too
    assert not any(t.layer == 1 and t.role.value == "expert" for t in build_inventory(a))
    # by hand: per decoder layer two MLAs, two MLPs of 12,288, 512 experts of 2,048, the router and its bias, 4 norms
    mla = 6144 * 1536 + 1536 + 1536 * 64 * 192 + 6144 * 576 + 512 + 512 * 64 * 256 + 64 * 128 * 6144
    layer = 2 * mla + 2 * 3 * 6144 * 12288 + 512 * 3 * 6144 * 2048 + 768 * 6144 + 768 + 4 * 6144
    assert parameter_count(a) == 28 * layer + 2 * 131072 * 6144 + 6144 == 560_664_980_480


def test_every_engine_caches_a_latent_per_sublayer():
    """56 latents of 512 + 64 a token: 64,512 bytes in bf16 (transformers caches the latent too: LongcatFlashMLA
    updates the cache with k_pass and k_rot before decompressing them)."""
    a = from_hf_config(RELEASED)
    for engine, gpu, tp in (("transformers", "h200", 1), ("vllm", "h200", 8)):
        sc = Scenario(engine=engine, weight_format="fp8-block", context_tokens=8192, gpu=gpu, tp=tp)
        assert estimate(a, sc).kv_bytes_per_token == 56 * 576 * 2


@pytest.mark.parametrize(("pp", "decoder_layers"), [(2, [14, 14]), (3, [9, 10, 9]), (8, [3, 3, 3, 4, 4, 4, 4, 3])])
def test_vllms_pipeline_stages_split_whole_decoder_layers(pp, decoder_layers):
    """make_layers(config.num_layers): get_pp_indices splits the 28 decoder layers, never a pair of sublayers."""
    stages = pipeline_split(56, pp, 2)
    assert [len(r) for r in stages] == [2 * n for n in decoder_layers]
    assert all(r.start % 2 == 0 for r in stages) and stages[-1].stop == 56


def test_more_pipeline_stages_than_decoder_layers_are_refused():
    a = from_hf_config(RELEASED)
    with pytest.raises(InputError, match="28 layers"):
        estimate(a, Scenario(engine="vllm", weight_format="fp8-block", gpu="h200", pp=29))


def test_an_odd_sublayer_count_is_refused():
    with pytest.raises(InputError, match=r"multiple of block_layers \(2\)"):
        from_hf_config(RELEASED).with_changes(num_layers=55)


def test_llamacpp_and_ollama_have_no_such_architecture(tmp_path, capsys):
    path = tmp_path / "config.json"
    path.write_text(__import__("json").dumps(RELEASED))
    for engine in ("llamacpp", "ollama"):
        assert main(["estimate", "--config", str(path), "--engine", engine, "--weights", "Q4_K_M"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "no such architecture" in err[0]


def test_a_checkpoints_tensors_land_on_their_sublayers(tmp_path):
    """A tiny real checkpoint saved by transformers: memviz places each stored tensor on the sublayer its inventory
    puts the same tensor on (self_attn.k, mlps.k and the norms .k on 2i + k, the MoE on 2i), bytes per sublayer equal."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from memviz.core.importers.safetensors_file import read_safetensors

    fields = dict(hidden_size=64, ffn_hidden_size=96, expert_ffn_hidden_size=16, num_layers=3, num_attention_heads=4,
                  kv_lora_rank=32, q_lora_rank=48, qk_rope_head_dim=8, qk_nope_head_dim=16, v_head_dim=16,
                  head_dim=8, n_routed_experts=4, zero_expert_num=2, moe_topk=2, vocab_size=256)
    config = transformers.AutoConfig.for_model("longcat_flash", **fields)
    torch.manual_seed(0)
    transformers.AutoModelForCausalLM.from_config(config, dtype=torch.bfloat16).save_pretrained(tmp_path)
    a = read_safetensors(tmp_path)
    stored = {}
    for t in a.stored:
        stored[t.layer] = stored.get(t.layer, 0) + t.nbytes
    built = {}
    for t in build_inventory(a):
        built[t.layer] = built.get(t.layer, 0) + 2 * t.numel
    assert stored == built and set(stored) == {None, *range(6)}


#: meituan-longcat/LongCat-Flash-Lite's config.json: LongCat-Flash's layers behind an n-gram input embedding
LITE = dict(architectures=["LongcatFlashNgramForCausalLM"], model_type="longcat_flash_ngram", vocab_size=131072,
            hidden_size=3072, ffn_hidden_size=6144, expert_ffn_hidden_size=1024, num_layers=14, num_attention_heads=32,
            kv_lora_rank=512, q_lora_rank=1536, qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128,
            n_routed_experts=256, moe_topk=12, routed_scaling_factor=6.0, zero_expert_num=128,
            ngram_vocab_size_ratio=78, emb_neighbor_num=4, emb_split_num=4, rope_theta=5000000.0,
            max_position_embeddings=327680, torch_dtype="bfloat16")
#: its 12 tables: 78 x 131,072 + 2i + 1 rows of 3,072 / 12 = 256, and 12 projections of 3,072 x 256
NGRAM_TABLES = sum(78 * 131072 + 2 * i + 1 for i in range(12)) * 256
NGRAM_PROJECTIONS = 12 * 3072 * 256


def _without_ngrams(cfg: dict) -> dict:
    return {k: v for k, v in cfg.items() if not k.startswith(("ngram", "emb_"))} | {"model_type": "longcat_flash"}


def test_lite_counts_its_ngram_tables_as_vllm_builds_them():
    """68.56B parameters (its card: 68.5B), 31.4B of them in the n-gram tables; the tables are looked up, the
    projections read whole by every token."""
    from memviz.core.inventory import active_parameter_count

    lite, base = from_hf_config(LITE), from_hf_config(_without_ngrams(LITE))
    assert (lite.ngram_embedders, lite.ngram_rows) == (12, 78 * 131072)
    assert parameter_count(lite) - parameter_count(base) == NGRAM_TABLES + NGRAM_PROJECTIONS
    assert parameter_count(lite) == 68_562_465_024
    assert active_parameter_count(lite) - active_parameter_count(base) == NGRAM_PROJECTIONS
    assert "LongcatFlashNgramForCausalLM" in lite.remote_code  # transformers 5.25 has no class for it


def test_vllm_splits_the_tables_keeps_the_projections_whole_and_holds_the_inputs_buffer():
    tokens = 8192
    sc = Scenario(engine="vllm", weight_format="fp8-block", gpu="h100-80g", tp=2, context_tokens=32768,
                  options=(("max_num_batched_tokens", tokens),))
    lite, base = estimate(from_hf_config(LITE), sc), estimate(from_hf_config(_without_ngrams(LITE)), sc)
    assert lite.bytes["weights"] - base.bytes["weights"] == 2 * (NGRAM_TABLES / 2 + NGRAM_PROJECTIONS)
    facts = lite.engine_facts
    assert facts["ngram_buffer_bytes"] == tokens * 3072 * 2
    assert facts["ngram_peak_bytes"] == tokens * (3072 * 27 + 12 * 256) * 2
    assert lite.bytes["overhead"] - base.bytes["overhead"] == pytest.approx(tokens * 3072 * 2, abs=1)


def test_the_ngram_step_sets_the_profile_peak_where_it_is_the_larger():
    """At 32,768 batched tokens the lookups, projections and their stack (5.2 GiB) exceed the forward's peak."""
    tokens = 32768
    sc = Scenario(engine="vllm", weight_format="fp8-block", gpu="h200", context_tokens=32768,
                  options=(("max_num_batched_tokens", tokens),))
    lite, base = estimate(from_hf_config(LITE), sc), estimate(from_hf_config(_without_ngrams(LITE)), sc)
    assert base.bytes["activations"] < lite.engine_facts["ngram_peak_bytes"] == lite.bytes["activations"]


def test_lite_runs_on_vllms_v2_model_runner_only():
    sc = Scenario(engine="vllm", weight_format="bf16", gpu="h200",
                  options=(("model_runner", "v1"), ("extensible_kv_cache", False)))
    with pytest.raises(InputError, match="V2 model runner only"):
        estimate(from_hf_config(LITE), sc)


@pytest.mark.parametrize(("field", "value"), [("emb_neighbor_num", 1), ("emb_split_num", 0),
                                              ("ngram_vocab_size_ratio", -1)])
def test_impossible_ngram_shapes_are_one_line(field, value):
    with pytest.raises(InputError, match=field):
        from_hf_config({**LITE, field: value})


def test_decoder_layers_count_blocks_and_an_edit_in_them_keeps_the_sublayer_pattern():
    """The config's num_layers (28) is what a user reads and types; memviz's own layers are its 56 sublayers."""
    a = from_hf_config(RELEASED)
    assert a.decoder_layers == 28
    assert a.layer_kinds_text() == "28 decoder layers of 2 attention sublayers (56 × full)"
    b = a.with_changes(decoder_layers=30)
    assert (b.num_layers, b.decoder_layers, b.moe_layers) == (60, 30, (True, False) * 30)
    assert from_hf_config({**RELEASED, "num_layers": 30}).moe_layers == b.moe_layers

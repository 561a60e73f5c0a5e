"""Nemotron-H: blocks of one mixer each (Mamba2, attention, an up / down MLP or ungated experts). Parameters and
the cache transformers fills, run for real (tiny random models, CPU); vLLM's state pages from vllm 0.33's source and
against the attention block vLLM's own issue reports; the importer's spellings and refusals."""

import warnings

import pytest

from memviz.core.arch import FULL, LINEAR, NO_MIXER, from_hf_config
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.inventory import parameter_count
from tests.core.engines.transformers_runs import run_and_compare

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

TINY = dict(vocab_size=512, hidden_size=128, num_attention_heads=4, num_key_value_heads=2, head_dim=32,
            intermediate_size=96, mamba_num_heads=8, mamba_head_dim=32, ssm_state_size=16, n_groups=2, conv_kernel=4,
            chunk_size=16, n_routed_experts=4, num_experts_per_tok=2, moe_intermediate_size=48,
            moe_shared_expert_intermediate_size=64, pad_token_id=0, bos_token_id=1, eos_token_id=2)
#: nvidia/NVIDIA-Nemotron-Nano-9B-v2's config.json (the fields memviz reads): 56 blocks, 27 Mamba2, 4 attention
NANO_9B_V2 = dict(model_type="nemotron_h", hidden_size=4480, num_attention_heads=40, num_key_value_heads=8,
                  head_dim=128, intermediate_size=15680, vocab_size=131072, mamba_num_heads=128, mamba_head_dim=80,
                  ssm_state_size=128, n_groups=8, conv_kernel=4, chunk_size=128, max_position_embeddings=131072,
                  hybrid_override_pattern="M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-")


def _config(pattern: str, **changes):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return transformers.AutoConfig.for_model("nemotron_h", hybrid_override_pattern=pattern, **{**TINY, **changes})


@pytest.mark.parametrize(("pattern", "changes", "dtype"), [
    ("M-M*-M", {}, "fp32"), ("M-M*-M", {}, "bf16"), ("ME*EM-", {}, "bf16"),
    ("M*E", {"use_bias": True, "use_conv_bias": False, "mlp_bias": True, "tie_word_embeddings": True}, "fp32")])
def test_the_cache_transformers_fills_and_the_parameters(pattern, changes, dtype):
    """Each Mamba2 block's convolution and SSM state, each attention block's K and V, nothing for MLP and expert
    blocks: memviz's transformers cache to the byte. Parameters exact, the routers' score-correction bias (a
    buffer the checkpoint holds) included; NemotronHForCausalLM ties no embedding whatever the config says."""
    config = _config(pattern, **changes)
    a, model, held, kv = run_and_compare(transformers.AutoModelForCausalLM.from_config, config, dtype)
    kinds = {"M": LINEAR, "*": FULL, "-": NO_MIXER, "E": NO_MIXER}
    assert a.layer_types == tuple(kinds[c] for c in pattern)
    assert a.ffn_layers == tuple(c in "-E" for c in pattern) and a.moe_layers == (tuple(c == "E" for c in pattern)
                                                                                  if "E" in pattern else ())
    assert kv == held > 0
    buffers = sum(b.numel() for name, b in model.named_buffers() if "e_score_correction_bias" in name)
    assert parameter_count(a) == sum(p.numel() for p in model.parameters()) + buffers


def test_nano_9b_v2_counts_as_published_and_its_spellings():
    a = from_hf_config(NANO_9B_V2)
    assert parameter_count(a) == pytest.approx(8.89e9, rel=0.001)  # the model card's 8.89B
    blocks = ["mamba" if c == "M" else "attention" if c == "*" else "mlp" for c in NANO_9B_V2["hybrid_override_pattern"]]
    listed = {k: v for k, v in NANO_9B_V2.items() if k != "hybrid_override_pattern"} | {"layers_block_type": blocks}
    renamed = listed | {"layers_block_type": [{"mamba": "linear_attention", "attention": "full_attention"}.get(b, b)
                                              for b in blocks]}
    assert from_hf_config(listed) == from_hf_config(renamed) == a
    assert (a.layer_types.count(LINEAR), a.layer_types.count(FULL), a.num_layers) == (27, 4, 56)


@pytest.mark.parametrize(("changes", "message"), [
    ({"hybrid_override_pattern": None}, "no layers_block_type / hybrid_override_pattern"),
    ({"hybrid_override_pattern": "M-M?"}, r"unknown block kinds \?"),
    ({"moe_latent_size": 1024}, "latent projection")])
def test_a_config_that_cannot_describe_the_model_is_refused(changes, message):
    cfg = {k: v for k, v in (NANO_9B_V2 | changes).items() if v is not None}
    with pytest.raises(InputError, match=message):
        from_hf_config(cfg)


def test_vllm_attention_block_for_nano_9b_v2():
    """vLLM 0.33 keeps Nemotron-H's SSM state in float32 unless the config says otherwise
    (`NemotronHForCausalLMConfig.DEFAULT_MAMBA_SSM_CACHE_DTYPE`): conv (10,240 + 2 x 8 x 128) x 3 in bf16 and
    128 x 80 x 128 float32 values make the attention block 1,312 tokens of 8 x 128 x K, V x 2 bytes. With the state
    in bf16, as vLLM kept it in September 2025, the block is 672 tokens, the figure vllm-project/vllm issue #24280
    gives for this model. 27 Mamba2 and 4 attention blocks make 8 groups; MLP blocks hold nothing. Those releases grew
    a 16-token block; 0.34 grows its 64-token default: 1,344 tokens."""
    for dtype, block, start in (("float32", 1312, 16), ("bfloat16", 672, 16), ("float32", 1344, 64)):
        a = from_hf_config(NANO_9B_V2 | {"mamba_ssm_cache_dtype": dtype})
        f = estimate(a, Scenario(engine="vllm", gpu="h100-80g", context_tokens=32768,
                                 options={"block_size": start})).engine_facts
        assert (f["block_size"], f["kv_groups"], f["kv_request_blocks"]) == (block, 8, -(-32768 // block) + 7 * 2)


def test_vllm_cuda_graphs_count_every_block_and_the_mlp_blocks_working_set():
    """Each of Nano-9B-v2's 56 blocks adds its graphs per captured size, MLP blocks included (the graphs' memory
    follows the kernels a block launches); the working set is the MLP blocks' up projection and activation for the
    largest size (ungated: 2 x 15,680 values a token); no FA3 split buffers without FULL graphs."""
    from memviz.core.engines.vllm_cudagraphs import BASE_BYTES, LAYER_GRAPH_BYTES, Captures, cudagraph_bytes

    a = from_hf_config(NANO_9B_V2)
    mixers_only = from_hf_config(NANO_9B_V2 | {"hybrid_override_pattern": NANO_9B_V2["hybrid_override_pattern"]
                                               .replace("-", "")})
    caps = Captures(51, 0, 512, 0, True)
    assert cudagraph_bytes(mixers_only, 1, 1, caps) == BASE_BYTES + 51 * 31 * LAYER_GRAPH_BYTES
    assert (cudagraph_bytes(a, 1, 1, caps) - cudagraph_bytes(mixers_only, 1, 1, caps)
            == 51 * 25 * LAYER_GRAPH_BYTES + 512 * 2 * 2 * a.intermediate_size)

"""BitNet b1.58 (transformers 5.24 modeling_bitnet.py, integrations/bitnet.py): Llama's layout with a norm before
o_proj and one before down_proj, and packed ternary checkpoints (`quant_method` "bitnet"). Read before as a warned
Llama-style decoder (-0.01 %, the sub-norms missed) whose packed weights were taken as 16-bit ones (8x), a
quantization memviz had no format for. Checked here against tiny real runs: a cache and a model transformers
builds, and packed checkpoints transformers loads on this CPU with each linear class; llama.cpp's side in
tests/probe/test_llamacpp_live.py."""

import json
import warnings

import pytest

from memviz.cli import main
from memviz.core.arch import from_hf_config
from memviz.core.engines import default_engine
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate
from memviz.core.gguf_names import gguf_tensors

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from tests.core.engines.transformers_runs import assert_run_matches  # noqa: E402

SMALL = dict(vocab_size=512, hidden_size=64, intermediate_size=128, num_hidden_layers=2, num_attention_heads=4,
             num_key_value_heads=2, tie_word_embeddings=True)
NOT_WEIGHTS = ("inv_freq",)  # the rotary frequencies, buffers memviz counts nowhere


def test_a_tiny_real_run_fills_the_cache_memviz_predicts():
    assert_run_matches(transformers.BitNetConfig(**SMALL))


def _packed_checkpoint(folder, linear_class: str) -> dict:
    """A BitNet checkpoint as BitLinear stores it: every decoder matrix four ternary values a uint8, one bf16
    weight_scale each; the rest bf16."""
    from safetensors.torch import save_file

    cfg = transformers.BitNetConfig(**SMALL)
    with warnings.catch_warnings():  # the integration's torch.compile'd helpers import torch.jit's deprecated parts
        warnings.simplefilter("ignore")
        from transformers.integrations.bitnet import pack_weights

        model = transformers.AutoModelForCausalLM.from_config(cfg).to(torch.bfloat16)
    tensors = {}
    for name, p in model.state_dict().items():
        if name == "lm_head.weight":
            continue
        if p.dim() == 2 and "embed" not in name:
            tensors[name] = pack_weights(torch.randint(-1, 2, p.shape, dtype=torch.int8))
            tensors[name.replace(".weight", ".weight_scale")] = torch.ones(1, dtype=torch.bfloat16)
        else:
            tensors[name] = p.contiguous()
    save_file(tensors, str(folder / "model.safetensors"), metadata={"format": "pt"})
    config = {**cfg.to_dict(), "architectures": ["BitNetForCausalLM"],
              "quantization_config": {"quant_method": "bitnet", "linear_class": linear_class,
                                      "quantization_mode": "offline"}}
    (folder / "config.json").write_text(json.dumps(config))
    return config


@pytest.mark.parametrize(("linear_class", "held"), [("bitlinear", 85_404), ("autobitlinear", 214_428)])
def test_packed_checkpoints_hold_what_transformers_loads(tmp_path, capsys, linear_class, held):
    """BitLinear keeps the packed bytes; AutoBitLinear unpacks them to bf16 while loading (BitNetDeserialize), beside
    its bf16 scales: the loaded model's parameters and buffers equal memviz's weights for the config (format
    "bitnet") and for the imported folder (format "stored")."""
    config = _packed_checkpoint(tmp_path, linear_class)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = transformers.AutoModelForCausalLM.from_pretrained(tmp_path, dtype=torch.bfloat16)
    loaded = sum(t.numel() * t.element_size() for n, t in [*model.named_parameters(), *model.named_buffers()]
                 if not n.endswith(NOT_WEIGHTS))
    assert loaded == held
    a = from_hf_config(config)
    assert a.native_format == "bitnet" and not a.warnings
    scenario = Scenario(engine="transformers", weight_format="bitnet", device="cpu", context_tokens=64)
    assert estimate(a, scenario).bytes["weights"] == held
    assert main(["estimate", "--safetensors", str(tmp_path), "--engine", "transformers", "--device", "cpu",
                 "--context", "64", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["bytes"]["weights"] == held


def test_bitlinear_unpacks_a_matrix_a_call_autobitlinear_none():
    cfg = {**transformers.AutoConfig.for_model("bitnet").to_dict(), "tie_word_embeddings": True}

    def activations(linear_class):
        a = from_hf_config({**cfg, "quantization_config": {"quant_method": "bitnet", "linear_class": linear_class}})
        return estimate(a, Scenario(engine="transformers", weight_format="bitnet", context_tokens=1024,
                                    gpu="rtx4090")).bytes["activations"]

    # BitNet-2B-4T's widths: gate / up, 6,912 x 2,560, unpacked into bf16 on top of the MLP's activations
    assert activations("bitlinear") - activations("autobitlinear") == 6912 * 2560 * 2


def test_engines_refuse_what_they_cannot_load():
    cfg = {**transformers.AutoConfig.for_model("bitnet").to_dict(), "quantization_config": {"quant_method": "bitnet"}}
    a = from_hf_config(cfg)
    assert default_engine("bitnet", a.native_format) == "transformers"
    with pytest.raises(InputError, match="no BitNet quantization"):
        estimate(a, Scenario(engine="vllm", weight_format="bitnet", gpu="h100-80g", context_tokens=1024))
    with pytest.raises(InputError, match="no output layer"):  # BitNetConfig unties by default
        estimate(a, Scenario(engine="llamacpp", weight_format="Q4_K_M", context_tokens=1024))


def test_the_gguf_file_holds_llamacpps_sub_norms():
    """src/models/bitnet.cpp `load_arch_tensors`: attn_sub_norm {n_embd} and ffn_sub_norm {n_ff} a layer, no
    output (tok_embd projects the logits)."""
    from memviz.core.gguf_names import gguf_name

    a = from_hf_config({**transformers.AutoConfig.for_model("bitnet").to_dict(), "tie_word_embeddings": True})
    shapes = {gguf_name(t, a): t.shape for t in gguf_tensors(a)}
    assert shapes["blk.0.attn_sub_norm.weight"] == (2560,) and shapes["blk.29.ffn_sub_norm.weight"] == (6912,)
    assert "output.weight" not in shapes

"""CLI numbers from anywhere (hypothesis, in-process): `memviz estimate` and `memviz plan` return 0 (or 1: nothing
fits) or 2 with one line naming the problem — never a traceback, whatever the integers."""

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memviz.cli import main

big = st.one_of(st.integers(-2**70, 2**70), st.sampled_from([0, -1, 1, 2**31, 2**62, 2**63, 10**19]))
FUZZ = settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "200")), deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def _run(capsys, argv):
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse's own refusals exit (with one line: memviz's parser)
        code = exc.code
    err = capsys.readouterr().err.strip()
    assert code in (0, 1, 2)
    assert (code == 2) == bool(err) and len(err.splitlines()) <= 1, err
    return code


@FUZZ
@given(context=big, batch=big, tp=big, pp=big, engine=st.sampled_from(["transformers", "vllm", "llamacpp"]))
def test_estimate_numbers(capsys, context, batch, tp, pp, engine):
    _run(capsys, ["estimate", "--preset", "qwen2.5-0.5b", "--engine", engine, "--context", str(context), "--batch",
                  str(batch), "--tp", str(tp), "--pp", str(pp), "--gpu", "rtx4090", "--json"])


@FUZZ
@given(context=big, concurrency=big, nodes=big, top=big,
       loss=st.floats(allow_nan=True, allow_infinity=True) | st.none())
def test_plan_numbers(capsys, context, concurrency, nodes, top, loss):
    argv = ["plan", "--preset", "qwen2.5-0.5b", "--gpu", "rtx4090", "--context", str(context), "--concurrency",
            str(concurrency), "--nodes", str(nodes), "--top", str(top), "--json"]
    if loss is not None:
        argv.append(f"--max-quality-loss={loss}")
    _run(capsys, argv)


@pytest.mark.parametrize("size", ["0", "-1GiB", "1e400GiB", "nanGiB", "24 parsecs", "9" * 400])
def test_plan_sizes(capsys, size):
    assert _run(capsys, ["plan", "--preset", "gpt2", "--vram", size]) == 2


def test_a_hybrid_config_is_one_line_and_exit_2(capsys, tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"model_type": "zamba2", "hidden_size": 2048, "num_hidden_layers": 4,
                               "num_attention_heads": 16, "vocab_size": 151936,
                               "layers_block_type": ["mamba", "hybrid", "mamba", "mamba"]}))
    assert main(["estimate", "--config", str(cfg)]) == 2
    assert "recurrent / linear-attention" in capsys.readouterr().err
    cfg.write_text(json.dumps({"model_type": "jamba", "hidden_size": 2048, "num_hidden_layers": 4,
                               "num_attention_heads": 16, "vocab_size": 151936, "attn_layer_period": 4}))
    assert main(["estimate", "--config", str(cfg)]) == 2  # JambaConfig's offset (default 4) below its period
    assert capsys.readouterr().err.strip().endswith("attn_layer_offset (4) must be below attn_layer_period (4)")


def test_nemotron_h_in_every_engine_and_a_split_of_its_mamba2_heads_refused(capsys, tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"model_type": "nemotron_h", "hidden_size": 2048, "num_attention_heads": 16,
                               "num_key_value_heads": 4, "head_dim": 128, "vocab_size": 131072,
                               "mamba_num_heads": 64, "mamba_head_dim": 64, "hybrid_override_pattern": "M-M*M-M*"}))
    for engine in ("transformers", "vllm", "llamacpp", "ollama"):
        assert main(["estimate", "--config", str(cfg), "--engine", engine]) == 0, engine
    capsys.readouterr()
    cfg.write_text(json.dumps({**json.loads(cfg.read_text()), "mamba_num_heads": 100, "n_groups": 4}))
    assert main(["estimate", "--config", str(cfg), "--engine", "vllm", "--tp", "16"]) == 2
    err = capsys.readouterr().err
    assert "Mamba2 layers' 100 heads divisible by tp (16)" in err and len(err.strip().splitlines()) == 1


def test_qwen3_next_in_every_engine_and_a_tensor_parallel_split_of_its_delta_net_heads_refused(capsys, tmp_path):
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps({"model_type": "qwen3_next", "hidden_size": 2048, "num_hidden_layers": 48,
                               "num_attention_heads": 16, "num_key_value_heads": 2, "vocab_size": 151936,
                               "full_attention_interval": 4}))
    for engine in ("transformers", "vllm", "llamacpp", "ollama"):
        assert main(["estimate", "--config", str(cfg), "--engine", engine]) == 0, engine
    capsys.readouterr()
    cfg.write_text(json.dumps({**json.loads(cfg.read_text()), "num_attention_heads": 12, "num_key_value_heads": 3,
                               "head_dim": 256}))
    assert main(["estimate", "--config", str(cfg), "--engine", "vllm", "--tp", "3"]) == 2
    err = capsys.readouterr().err
    assert "delta-net" in err and len(err.strip().splitlines()) == 1

"""The `memviz estimate` CLI contract, run as a real subprocess."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from memviz.core.presets import get_preset


def run(*args):
    return subprocess.run([sys.executable, "-m", "memviz", *args], capture_output=True, text=True)


def test_estimate_json_contract():
    r = run("estimate", "--preset", "seed-hypothetical", "--context", "32768", "--batch", "4", "--json", "--gpu", "h100-80g")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert isinstance(d["parameters"], int) and d["kv_bytes_per_token"] == 131072
    assert set(d["bytes"]) == {"weights", "kv_cache", "activations", "overhead", "total"}
    assert d["bytes"]["kv_cache"] == 16 * 2**30
    assert d["bytes"]["total"] == sum(d["bytes"][k] for k in ("weights", "kv_cache", "activations", "overhead"))
    f = d["fit"]
    assert f["capacity_bytes"] == round(79.22 * 2**30) and isinstance(f["fits"], bool) and f["max_context"] > 32768


def test_human_output_prints_units():
    r = run("estimate", "--preset", "llama-3.1-8b", "--weights", "Q4_K_M", "--engine", "llamacpp")
    assert r.returncode == 0 and "GiB" in r.stdout and "weights" in r.stdout
    r = run("estimate", "--preset", "llama-3.1-8b", "--unit", "GB")
    assert " GB" in r.stdout


def test_config_file_and_folder(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(get_preset("qwen3-8b").config))
    a = json.loads(run("estimate", "--config", str(tmp_path), "--json").stdout)
    b = json.loads(run("estimate", "--config", str(tmp_path / "config.json"), "--json").stdout)
    assert a["bytes"] == b["bytes"] and a["parameters"] == 8190735360
    # the launch command loads the folder, whichever was given (neither from_pretrained nor vllm serve takes a
    # config.json)
    assert a["launch_command"] == b["launch_command"] and str(tmp_path) in b["launch_command"]
    assert "config.json" not in b["launch_command"]
    served = json.loads(run("estimate", "--config", str(tmp_path / "config.json"), "--engine", "vllm", "--json").stdout)
    assert f"vllm serve {tmp_path} " in served["launch_command"]


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--config", "/definitely/missing"], "no config.json"),
        (["--preset", "nope"], "unknown preset"),
        (["--preset", "gpt2", "--context", "0"], "context_tokens"),
        (["--preset", "gpt2", "--batch", "-3"], "batch"),
        (["--preset", "gpt2", "--weights", "int3"], "unknown weight format"),
        (["--preset", "gpt2", "--kv", "int3"], "unknown KV"),
        (["--preset", "gpt2", "--engine", "trt"], "unknown engine"),
        (["--preset", "gpt2", "--gpu", "voodoo"], "unknown GPU"),
        (["--preset", "gemma-3-27b", "--engine", "vllm", "--option", "mm_max_pixels=1000000"], "image processors"),
    ],
)
def test_bad_input_exits_2_with_one_line(args, needle):
    r = run("estimate", *args)
    assert r.returncode == 2
    assert needle in r.stderr and len(r.stderr.strip().splitlines()) == 1 and "Traceback" not in r.stderr


def test_malformed_and_incomplete_config(tmp_path):
    bad = tmp_path / "config.json"
    bad.write_text("{oops")
    r = run("estimate", "--config", str(bad))
    assert r.returncode == 2 and "not valid JSON" in r.stderr
    bad.write_text(json.dumps({"model_type": "llama", "hidden_size": 64}))
    r = run("estimate", "--config", str(bad))
    assert r.returncode == 2 and "missing" in r.stderr


def test_listings_and_training():
    assert "llama-3.1-405b" in run("presets").stdout
    assert "Q4_K_M" in run("formats").stdout
    assert "GiB" in run("gpus").stdout
    t = run("training", "--preset", "llama-3.1-70b", "--seq", "2048")
    assert "142.500 GiB" in t.stdout


def test_estimate_and_inspect_imported_files(tmp_path):
    from tests.core.importers.files import cuda_padding, write_gguf_model, write_safetensors_model

    tensors = write_safetensors_model(tmp_path / "st")
    d = json.loads(run("estimate", "--safetensors", str(tmp_path / "st"), "--json").stdout)
    assert d["bytes"]["weights"] == sum(a.nbytes for a in tensors.values())
    expected = write_gguf_model(tmp_path / "m.gguf")
    d = json.loads(run("estimate", "--gguf", str(tmp_path / "m.gguf"), "--engine", "llamacpp", "--json").stdout)
    assert d["bytes"]["weights"] + d["host"]["weights"] == sum(b for _, b in expected.values()) + cuda_padding(
        tmp_path / "m.gguf")
    r = run("inspect", str(tmp_path / "m.gguf"), "--json")
    i = json.loads(r.stdout)
    assert i["stored_bytes"] == sum(b for _, b in expected.values())
    assert {row["type"] for row in i["by_type_and_role"]} == {"Q8_0", "Q4_0", "Q4_K", "F16", "F32"}
    assert "Q4_K" in run("inspect", str(tmp_path / "m.gguf")).stdout


def test_log_command(tmp_path):
    r = run("log", "tests/data/logs/vllm_llama3_8b_pr10511.log")
    d = json.loads(r.stdout)
    assert d["engine"] == "vllm" and set(d["bytes"]) == {"weights", "kv_cache", "activations", "overhead", "total"}
    bad = tmp_path / "x.log"
    bad.write_text("nothing")
    r = run("log", str(bad))
    assert r.returncode == 2 and "no llama.cpp" in r.stderr


def test_bad_model_files_exit_2(tmp_path):
    f = tmp_path / "broken.gguf"
    f.write_bytes(b"GGUF" + b"\xff" * 30)
    r = run("estimate", "--gguf", str(f))
    assert r.returncode == 2 and "broken.gguf" in r.stderr and "Traceback" not in r.stderr
    g = tmp_path / "x.safetensors"
    g.write_bytes(b"\x05")
    r = run("inspect", str(g))
    assert r.returncode == 2 and "truncated" in r.stderr


def test_fewest_gpus_and_overhead_size():
    args = ("estimate", "--preset", "llama-3.1-405b", "--weights", "fp8", "--engine", "vllm", "--context", "8192",
            "--gpu", "h100-80g", "--overhead", "1GiB")
    r = run(*args)  # one H100 cannot hold 405B in FP8: vLLM would refuse to start, and the line says what would fit
    assert r.returncode == 2 and "vLLM refuses to start" in r.stderr and "(--tp 2 --pp 3)" in r.stderr
    d = json.loads(run(*args, "--tp", "2", "--pp", "3", "--json").stdout)
    assert d["fit"]["fewest_gpus"] == {"count": 6, "tp": 2, "pp": 3} and d["bytes"]["overhead"] == 2**30
    r = run("estimate", "--preset", "gpt2", "--overhead", "lots")
    assert r.returncode == 2 and "memory size" in r.stderr


def test_data_parallel_replicas_count_in_the_gpus():
    """DeepSeek-V3 as DP 4 with expert parallelism: every GPU of the 4 replicas is a device, the fewest GPUs keep
    the replicas and say so, the launch command names both flags."""
    args = ("estimate", "--preset", "deepseek-v3", "--engine", "vllm", "--gpu", "h200", "--tp", "8", "--context",
            "8192", "-o", "data_parallel_size=4", "-o", "enable_expert_parallel=true")
    d = json.loads(run(*args, "--json").stdout)
    assert len(d["devices"]) == 32 and d["fit"]["fewest_gpus"] == {"count": 8, "tp": 2, "pp": 1}
    out = run(*args).stdout
    assert "fewest h200 GPUs for this scenario: 8 (TP 2 x PP 1 x DP 4)" in out
    assert "--tensor-parallel-size 8 --data-parallel-size 4 --enable-expert-parallel" in out


def test_a_closed_pipe_ends_quietly():
    import subprocess
    import sys

    with subprocess.Popen([sys.executable, "-m", "memviz", "presets"], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE) as p:
        p.stdout.close()  # the reader has left before memviz writes, as `| head -1` leaves after a line
        err = p.stderr.read()
        assert p.wait(timeout=60) == 141 and err == b""


def test_a_context_beyond_the_models_positions_exits_2_unless_extrapolated():
    import subprocess
    import sys

    run = [sys.executable, "-m", "memviz", "estimate", "--preset", "qwen3-8b", "--context", "131072"]
    r = subprocess.run(run, capture_output=True, text=True)
    assert r.returncode == 2 and "40,960 positions" in r.stderr and len(r.stderr.splitlines()) == 1
    assert subprocess.run([*run, "--extrapolate"], capture_output=True, text=True).returncode == 0
    gpt2 = subprocess.run([sys.executable, "-m", "memviz", "estimate", "--preset", "gpt2", "--json"], capture_output=True,
                          text=True)
    assert gpt2.returncode == 0 and '"context_tokens": 1024' in gpt2.stdout  # the default, capped at its positions


def test_hostile_numbers_and_arguments_are_one_line_and_exit_2(tmp_path):
    import json
    import subprocess
    import sys

    bad_config = tmp_path / "c.json"
    bad_config.write_text(json.dumps({"model_type": "qwen2_moe", "vocab_size": 1000, "hidden_size": 64,
                                      "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
                                      "num_experts": 4, "num_experts_per_tok": 2, "moe_intermediate_size": 32,
                                      "shared_expert_intermediate_size": -99999}))
    cases = [["estimate", "--preset", "gpt2", "--bogus"],
             ["estimate", "--preset", "gpt2", "--batch", "1000000000000", "--context", "1000"],
             ["estimate", "--preset", "llama-3.1-8b", "--engine", "vllm", "--tp", "1000000"],
             ["estimate", "--preset", "llama-3.1-8b", "--context", str(2**62)],
             ["estimate", "--config", str(bad_config)]]
    for args in cases:
        r = subprocess.run([sys.executable, "-m", "memviz", *args], capture_output=True, text=True, timeout=60)
        assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1, (args, r.stderr)


def test_an_empty_xdg_data_home_is_unset(monkeypatch):
    from pathlib import Path

    from memviz.core.calibration import data_dir

    monkeypatch.delenv("MEMVIZ_DATA_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", "")
    assert data_dir() == Path.home() / ".local" / "share" / "memviz"


def test_log_check_sets_llamacpp_buffers_beside_the_estimate(tmp_path):
    cases = json.loads(Path("tests/data/published/llamacpp_logs.json").read_text())["cases"]
    log = tmp_path / "server.log"
    log.write_text("\n".join(next(c for c in cases if c["id"].startswith("glm4"))["log"]))
    r = run("log", str(log), "--check")
    assert r.returncode == 0, r.stderr
    lines = {ln.split()[0] + (" " + ln.split()[1] if ln.split()[1].startswith("(") else ""): ln
             for ln in r.stdout.splitlines()[2:]}
    assert "1,952.00     1,952.00" in lines["KV (device)"] and "+0.0%" in lines["KV (device)"]
    assert "76.01" in lines["compute (host)"] and "n_ctx" in lines


def test_log_check_reads_a_file_of_the_older_quantizer_rules_with_them(tmp_path):
    """The CI's Pythia Q2_K file types attn_qkv by the older quantizers' branch: its tensors per type say so, the
    check reads it with that branch and its model buffers come out exact."""
    cases = json.loads(Path("tests/data/published/llamacpp_logs.json").read_text())["cases"]
    log = tmp_path / "cli.log"
    log.write_text("\n".join(next(c for c in cases if c["id"] == "pythia-2.8b-q2_k-cuda-v100-2k")["log"]))
    r = run("log", str(log), "--check")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("2.8B: Q2_K+qkv-branch")
    assert any(ln.split()[:4] == ["tensors", "q2_k", "65", "65"] for ln in lines)
    assert any(ln.startswith("model (device)") and ln.split()[2:4] == ["993.89", "993.89"] for ln in lines)
    assert "typed a fused attn_qkv by its own branch" in r.stdout and "other types than" not in r.stdout
    glm = tmp_path / "glm.log"
    glm.write_text("\n".join(next(c for c in cases if c["id"].startswith("glm4"))["log"]))
    assert "attn_qkv" not in run("log", str(glm), "--check").stdout


def test_log_check_of_a_vllm_log_is_one_line_and_exit_2():
    r = run("log", "tests/data/logs/vllm_llama3_8b_pr10511.log", "--check")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "give --preset or --config, and --gpu" in r.stderr
    r = run("log", "tests/data/logs/vllm_llama3_8b_pr10511.log", "--check", "--preset", "llama-3.1-8b",
            "--gpu", "h100-80g")
    assert r.returncode == 0 and "weights" in r.stdout, r.stderr


def test_a_pre_quantized_release_is_estimated_as_released_by_default():
    r = run("estimate", "--preset", "gpt-oss-20b", "--json")
    assert r.returncode == 0, r.stderr
    sc = json.loads(r.stdout)["scenario"]
    assert (sc["weight_format"], sc["engine"]) == ("mxfp4-moe", "vllm")  # transformers would dequantize it
    r = run("estimate", "--preset", "llama-3.1-8b", "--json")
    sc = json.loads(r.stdout)["scenario"]
    assert (sc["weight_format"], sc["engine"]) == ("bf16", "transformers")


def test_log_check_of_a_vllm_log_takes_the_model_and_gpu_from_the_command(tmp_path):
    from tests.core.importers.test_vllm_log import LOG_010

    log = tmp_path / "vllm.log"
    log.write_text(LOG_010)
    r = run("log", str(log), "--check", "--preset", "qwen2.5-7b", "--gpu", "a100-80g")
    assert r.returncode == 0, r.stderr
    assert "KV pool" in r.stdout and "utilization 0.25" in r.stdout
    r = run("log", str(log), "--check")
    assert r.returncode == 2 and "give --preset or --config, and --gpu" in r.stderr


def test_log_check_says_when_the_checkpoint_decides_the_quantized_format(tmp_path):
    """A compressed-tensors start checked against a base model: the weights row is the model's dtype, and a note says
    to give the checkpoint's config or a format; with --weights the note goes."""
    from tests.core.importers.test_vllm_log import LOG_010

    log = tmp_path / "vllm.log"
    log.write_text(LOG_010.replace("kv_cache_dtype=auto", "quantization=compressed-tensors, kv_cache_dtype=auto"))
    r = run("log", str(log), "--check", "--preset", "qwen2.5-7b", "--gpu", "a100-80g")
    assert r.returncode == 0, r.stderr
    assert ": bf16," in r.stdout.splitlines()[0]
    assert "note: vLLM ran compressed-tensors quantization" in r.stdout
    r = run("log", str(log), "--check", "--preset", "qwen2.5-7b", "--gpu", "a100-80g", "--weights", "w4a16")
    assert r.returncode == 0 and ": w4a16," in r.stdout.splitlines()[0] and "note: vLLM ran" not in r.stdout


@pytest.mark.parametrize("args, kv, context", [
    (("--weights", "Q4_K_M"), "fp16", 4096),  # llama.cpp's -ctk default
    (("--weights", "Q4_K_M", "--engine", "ollama", "--gpu", "rtx4090"), "fp16", 32768),  # Ollama's tier for 24 GiB
    (("--weights", "Q4_K_M", "--engine", "ollama", "--gpu", "rtx4080"), "fp16", 4096),
    (("--weights", "Q4_K_M", "--engine", "ollama"), "fp16", 4096),  # no GPU named: its lowest tier
    ((), "bf16", 4096),  # transformers: the checkpoint's dtype
    (("--weights", "Q4_K_M", "--kv", "q8_0", "--context", "8192"), "q8_0", 8192)])
def test_kv_and_context_default_to_the_engines_own(args, kv, context):
    d = json.loads(run("estimate", "--preset", "qwen3-8b", *args, "--json").stdout)
    assert (d["scenario"]["kv_format"], d["scenario"]["context_tokens"]) == (kv, context)


def test_a_llamacpp_scenario_too_big_for_its_gpu_names_where_llama_servers_fit_would_put_it():
    d = json.loads(run("estimate", "--preset", "llama-3.1-70b", "--weights", "Q4_K_M", "--gpu", "rtx4090",
                       "--context", "32768", "--json").stdout)
    assert not d["fit"]["fits"] and d["fit"]["llama_server_fit"].startswith("-ngl 35:")
    r = run("estimate", "--preset", "llama-3.1-70b", "--weights", "Q4_K_M", "--gpu", "rtx4090", "--context", "32768")
    assert "llama-server's default --fit (1 GiB left free) would start it instead with -ngl 35" in r.stdout
    fits = json.loads(run("estimate", "--preset", "llama-3.1-8b", "--weights", "Q4_K_M", "--gpu", "rtx4090", "--json").stdout)
    assert fits["fit"]["fits"] and "llama_server_fit" not in fits["fit"]


def test_the_vision_encoders_profile_pass_is_printed_for_vllm():
    args = ("estimate", "--preset", "qwen3.5-35b-a3b", "--engine", "vllm", "--context", "65536", "--gpu", "h200")
    out = run(*args).stdout
    assert "the vision encoder's pass over 1 image(s) of 16,384 tokens peaks at 1.71 GiB" in out
    assert "vision encoder's pass" not in run(*args, "-o", "language_model_only=true").stdout
    gemma4 = run("estimate", "--preset", "gemma-4-26b-a4b", "--engine", "vllm", "--gpu", "rtx4090", "--tp", "2",
                 "--weights", "fp8", "--context", "4096").stdout
    assert "pass over 1 video(s) of 2,496 tokens (12 frames a call of the tower) peaks at 0.28 GiB" in gemma4
    skipped = run("estimate", "--preset", "gemma-4-31b", "--engine", "vllm", "--gpu", "h100-80g", "--context", "8192",
                  "-o", "skip_mm_profiling=true").stdout
    assert "would peak at 0.96 GiB; --skip-mm-profiling leaves it out of the budget" in skipped


def test_estimate_prints_the_mmproj_compute_buffer():
    r = run("estimate", "--preset", "qwen3.5-35b-a3b", "--weights", "Q4_K_M", "--engine", "llamacpp", "--gpu",
            "rtx4090", "-o", "mmproj=true", "--unit", "GiB")
    assert r.returncode == 0, r.stderr
    line = next(x for x in r.stdout.splitlines() if x.startswith("llama.cpp mmproj:"))
    assert "0.24 GiB" in line and "1472 x 1472" in line and "grows it to 0.47 GiB" in line
    d = json.loads(run("estimate", "--preset", "qwen3.5-35b-a3b", "--weights", "Q4_K_M", "--engine", "llamacpp",
                       "-o", "mmproj=true", "-o", "flash_attn=off", "--json").stdout)
    assert d["engine"]["mmproj_compute"]["device_bytes"] == 4884066560  # 4,657.81 MiB: one f32 score matrix a head


def test_an_mmproj_file_beside_a_gguf_model(tmp_path):
    from tests.core.importers.files import write_gguf_model, write_mmproj

    lm, mm = tmp_path / "lm.gguf", tmp_path / "mmproj.gguf"
    write_gguf_model(lm)
    write_mmproj(mm, "gemma3", 1152, 4304, 16, 256, 14, image=896)
    r = run("estimate", "--gguf", str(lm), "--mmproj", str(mm), "--engine", "llamacpp", "--gpu", "rtx4090")
    assert r.returncode == 0, r.stderr
    assert "896 x 896 warm-up image" in r.stdout and f"--mmproj {mm}" in r.stdout
    for args, words in ((("--engine", "vllm"), "--mmproj is llama.cpp's"), (("-o", "mmproj=false"), "choose one")):
        r = run("estimate", "--gguf", str(lm), "--mmproj", str(mm), *args)
        assert r.returncode == 2 and words in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = run("estimate", "--gguf", str(mm))
    assert r.returncode == 2 and "an mmproj file" in r.stderr
    assert json.loads(run("estimate", "--gguf", str(lm), "--json").stdout)["scenario"]["engine"] == "llamacpp"
    out = tmp_path / "report.md"
    r = run("export", "--gguf", str(lm), "--mmproj", str(mm), "--gpu", "rtx4090", "--out", str(out))
    assert r.returncode == 0, r.stderr
    assert f"--mmproj {mm}" in out.read_text()


def test_a_vllm_suggestion_that_cannot_fit_is_said_so():
    """DeepSeek-V3 as DP 8 + EP with 24 redundant experts on H200s leaves vLLM's --kv-cache-memory suggestion below
    zero (the captured graphs, 6.19 GiB with FA3's split buffers for 128 heads, come on top of a 5.27 GiB pool): no
    negative byte count to paste. The profile-sized pool of vLLM before 0.34 at a 0.94 share: 0.34's measured pool
    prints no suggestion."""
    r = run("estimate", "--preset", "deepseek-v3", "--engine", "vllm", "--gpu", "h200", "--weights", "fp8-block",
            "--gpu-memory-utilization", "0.94", "-o", "extensible_kv_cache=false", "-o", "data_parallel_size=8",
            "-o", "enable_expert_parallel=true", "-o", "enable_eplb=true", "-o", "num_redundant_experts=24")
    assert r.returncode == 0, r.stderr
    assert "vLLM's suggestion within this budget: none (-" in r.stdout
    assert "--kv-cache-memory-bytes -" not in r.stdout
    assert "--enable-eplb --eplb-config '{\"num_redundant_experts\": 24}'" in r.stdout


def test_the_vllm_sampler_line_names_the_sampler_and_a_gpu_flashinfer_does_not_run_on_is_one_line():
    r = run("estimate", "--preset", "qwen2.5-7b", "--engine", "vllm", "--gpu", "v100-32g", "--context", "8192")
    assert r.returncode == 0, r.stderr
    assert "sampler warm-up over 256 rows of logits holds" in r.stdout
    assert ": vLLM's Triton kernel on an fp32 copy of the logits and its buffer" in r.stdout
    assert "V2 model runner's sampler state (a vocabulary row of counts per request slot): 0.15 GiB" in r.stdout
    r = run("estimate", "--preset", "qwen2.5-7b", "--engine", "vllm", "--gpu", "v100-32g", "--context", "8192",
            "-o", "sampler=flashinfer")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "FlashInfer's sampler needs compute capability 8.0 to 12.1" in r.stderr


def test_a_reserved_vllm_pool_names_what_the_sequences_need_of_it():
    """Gemma-3-12B on a B200: the pool fills the budget; the line under it gives the KV the sequences need and the
    need the verdict judges, as the JSON's fit.needed_bytes."""
    args = ("estimate", "--preset", "gemma-3-12b", "--engine", "vllm", "--gpu", "b200", "--context", "32768")
    r = run(*args)
    data = json.loads(run(*args, "--json").stdout)
    need = data["fit"]["needed_bytes"] / 2**30
    assert r.returncode == 0 and f"{need:.2f} GiB needed on the busiest device" in r.stdout
    assert data["kv_cache_required"] < data["bytes"]["kv_cache"]
    plain = run("estimate", "--preset", "gemma-3-12b", "--engine", "llamacpp", "--weights", "Q4_K_M", "--gpu", "b200")
    assert "needed on the busiest device" not in plain.stdout

"""A llama.cpp load log read as the model, the settings and the buffers it reports."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memviz.core.errors import InputError
from memviz.core.importers.llamacpp_log import architecture_of, read_llamacpp_load, scenario_of
from memviz.core.units import MiB

CASES = {c["id"]: c for c in json.loads(
    (Path(__file__).parents[2] / "data" / "published" / "llamacpp_logs.json").read_text())["cases"]}
GLM = "\n".join(CASES["glm4-32b-iq4xs-cuda-fa-32k"]["log"])
PYTHIA = "\n".join(CASES["pythia-2.8b-q4_0-cuda-v100-2k"]["log"])


def test_metadata_dump_becomes_the_model():
    load = read_llamacpp_load(GLM)
    a = architecture_of(load)
    assert (a.num_layers, a.hidden_size, a.num_heads, a.num_kv_heads, a.head_dim) == (61, 6144, 48, 2, 128)
    assert a.vocab_size == 151552 and a.intermediate_size == 23040
    assert load.type_counts == {"f32": 245, "q5_k": 61, "q6_k": 1, "iq4_xs": 306} and load.n_tensors == 613


def test_settings_and_offload_become_the_scenario():
    load = read_llamacpp_load(GLM)
    sc = scenario_of(load, architecture_of(load))
    # the file names an importance matrix (quantize.imatrix.*): the quantizer's rules with one
    assert (sc.engine, sc.device, sc.gpu_layers, sc.weight_format, sc.kv_format) == ("llamacpp", "cuda", None,
                                                                                     "IQ4_XS+imatrix", "fp16")
    assert sc.context_tokens == 32768 and dict(sc.options)["flash_attn"] == "on"
    partial = read_llamacpp_load(PYTHIA.replace("offloaded 33/33", "offloaded 20/33"))
    assert scenario_of(partial, architecture_of(partial)).gpu_layers == 20


def test_tensors_the_loader_kept_in_host_memory_become_an_override():
    """Both spellings llama.cpp printed (0c1e570 `llama-model-loader.cpp`, older `Tensor ... overriden`); tensors
    overridden to a GPU buffer stay there; the scenario then keeps exactly the printed tensors in host memory."""
    from memviz.core.estimate import estimate

    lines = ["tensor blk.0.ffn_up.weight (17 MiB q4_K) buffer type overridden to CUDA_Host",
             "Tensor blk.1.ffn_down.weight buffer type overriden to CPU",
             "tensor blk.2.ffn_up.weight (17 MiB q4_K) buffer type overridden to CUDA0"]
    load = read_llamacpp_load(PYTHIA.replace("llm_load_tensors:", "\n".join(lines) + "\nllm_load_tensors:", 1))
    a = architecture_of(load)
    sc = scenario_of(load, a)
    assert dict(sc.options)["override_tensor"] == r"^(blk\.0\.ffn_up\.weight|blk\.1\.ffn_down\.weight)$=CPU"
    plain = scenario_of(read_llamacpp_load(PYTHIA), a)
    gpu_freed = estimate(a, plain).bytes["weights"] - estimate(a, sc).bytes["weights"]
    read_in = {k: v.with_changes(options={**dict(v.options), "mmap": False}) for k, v in (("sc", sc), ("plain", plain))}
    moved = estimate(a, read_in["sc"]).host.weights - estimate(a, read_in["plain"]).host.weights
    assert 0 < gpu_freed <= moved < gpu_freed + 64  # each tensor of the CPU buffer padded to 32 bytes
    # mapped, the range from the embedding to blk.1.ffn_down also spans tensors the GPU holds
    assert estimate(a, sc).host.weights - estimate(a, plain).host.weights > moved


def test_flash_attention_auto_is_read_as_llama_cpp_resolved_it():
    text = PYTHIA.replace("flash_attn    = 0", "flash_attn    = auto") + "\nllama_context: Flash Attention was auto, set to enabled"
    load = read_llamacpp_load(text)
    assert dict(scenario_of(load, architecture_of(load)).options)["flash_attn"] == "on"


def test_the_last_load_with_a_compute_buffer_counts():
    second = PYTHIA.replace("n_ctx         = 2048", "n_ctx         = 1024")
    vocab_only = "llama_model_loader: loaded meta data with 23 key-value pairs and 388 tensors from x.gguf\n" \
                 "llama_model_load: vocab only - skipping tensors"
    load = read_llamacpp_load("\n".join([PYTHIA, second, vocab_only]))
    assert load.settings["n_ctx"] == "1024"


def tiny_llama(n_tensors: int) -> str:
    meta = {"general.architecture": "str = llama", "llama.block_count": "u32 = 2", "llama.embedding_length": "u32 = 256",
            "llama.feed_forward_length": "u32 = 512", "llama.attention.head_count": "u32 = 4",
            "llama.attention.head_count_kv": "u32 = 2", "tokenizer.ggml.tokens": "arr[str,1000] = [\"a\", ...]"}
    lines = [f"llama_model_loader: loaded meta data with 7 key-value pairs and {n_tensors} tensors from tiny.gguf"]
    lines += [f"llama_model_loader: - kv {i:3d}: {k:>40s} {v}" for i, (k, v) in enumerate(meta.items())]
    lines += ["llama_context: n_ctx         = 512", "llama_context: n_ubatch      = 512",
              "llama_context:        CPU compute buffer size =     3.00 MiB"]
    return "\n".join(lines)


def test_tied_embeddings_follow_the_tensor_count_where_every_tensor_is_named():
    """2 layers x 9 tensors + embedding + final norm (+ output when untied)."""
    assert not architecture_of(read_llamacpp_load(tiny_llama(21))).tie_word_embeddings
    assert architecture_of(read_llamacpp_load(tiny_llama(20))).tie_word_embeddings


def test_fused_tensors_leave_it_to_the_printed_model_buffers():
    """GPT-NeoX files fuse Q, K and V: the count cannot decide, the model buffers (1,523.91 MiB) do."""
    assert not architecture_of(read_llamacpp_load(PYTHIA)).tie_word_embeddings


@pytest.mark.parametrize("text", ["", "llama_model_loader: - kv   0: general.architecture str = llama",
                                  PYTHIA.replace("compute buffer size", "compute buffer")])
def test_a_log_without_a_load_is_one_clear_error(text):
    with pytest.raises(InputError, match="no llama.cpp load"):
        read_llamacpp_load(text)


def test_unknown_cache_type_is_refused():
    load = read_llamacpp_load(PYTHIA.replace("K (f16)", "K (q6_K)"))
    with pytest.raises(InputError, match="q6_K"):
        scenario_of(load, architecture_of(load))


@pytest.mark.parametrize("flags, features", [("AVX2 = 1 | AVX512 = 1 | AMX_INT8 = 1", "amx"),
                                             ("AVX2 = 1 | AVX512 = 1", "avx512"), ("AVX2 = 1 | F16C = 1", "avx2"),
                                             ("NEON = 1 | ARM_FMA = 1 | DOTPROD = 1", "arm"),
                                             ("NEON = 1 | ARM_FMA = 1", "generic"), (None, "avx2")])
def test_cpu_features_come_from_the_system_info_line(flags, features):
    # without its own system_info line, its CPU_AARCH64 (packed) buffer is read as an x86 CPU with AVX2
    cpu = "\n".join(CASES["pythia-1.4b-q4_0-cpu-avx512-2k"]["log"][:-1])
    if flags:
        cpu += f"\nsystem_info: n_threads = 4 / 8 | CPU : SSE3 = 1 | {flags} | OPENMP = 1 | "
    load = read_llamacpp_load(cpu)
    assert dict(scenario_of(load, architecture_of(load)).options)["cpu"] == features


@settings(max_examples=int(os.environ.get("FUZZ_EXAMPLES", "200")), deadline=None)
@given(st.data())
def test_a_damaged_log_gives_a_check_or_one_clear_error(data):
    """Published lines dropped, duplicated or with a value replaced: the check runs or says what is missing."""
    from memviz.core.log_check import check_log

    lines = list(CASES["glm4-32b-iq4xs-cuda-fa-32k"]["log"])
    for _ in range(data.draw(st.integers(0, 6))):
        i = data.draw(st.integers(0, len(lines) - 1))
        action = data.draw(st.sampled_from(["drop", "dup", "value"]))
        if action == "drop":
            lines.pop(i)
        elif action == "dup":
            lines.insert(i, lines[i])
        elif "=" in lines[i]:
            head = lines[i].rsplit("=", 1)[0]
            lines[i] = head + "= " + data.draw(st.sampled_from(["0", "-1", "abc", "1e400", "99999999999", ""]))
        if not lines:
            break
    try:
        _, rows = check_log("\n".join(lines))
    except InputError as exc:
        assert str(exc) and "\n" not in str(exc)  # one line that says what is missing
    else:
        assert rows[0].name == "n_ctx" and all(r.measured >= 0 for r in rows)


def test_an_mla_load_without_system_info_is_checked_buffer_by_buffer():
    """A DeepSeek-V2-shaped Q4_K_M file on this project's CPU (tests/data/llamacpp), its CPU feature line left out:
    its CPU_REPACK buffer says the CPU packs weights; the mapped range follows the quantizer's file order; MLA's
    k_b / v_b count as two tensors."""
    from memviz.core.log_check import check_log, retyped_tensors

    text = (Path(__file__).parents[2] / "data" / "llamacpp" / "deepseek2_mla_q4km_cpu.log").read_text()
    e, rows = check_log("\n".join(ln for ln in text.splitlines() if not ln.startswith("CPU : ")))
    by_name = {r.name: r for r in rows}
    assert e.architecture.model_type == "deepseek_v2" and e.architecture.is_mla
    assert any("CPU_REPACK buffer is read as a CPU with AVX2" in w for w in e.architecture.warnings)
    for name in ("model CPU_REPACK", "model CPU_Mapped", "KV", "n_ctx"):
        assert abs(by_name[name].estimated - by_name[name].measured) <= 0.01 * MiB, name
    assert abs(by_name["compute"].error) < 0.01 and retyped_tensors(rows) == 0


def test_a_qwen35_load_reads_its_delta_nets_from_the_metadata_and_checks_exactly():
    """A Qwen3.5-MoE-shaped Q4_K_M file on this project's CPU (tests/data/llamacpp): the log names no tensors, so the
    full-attention interval places the delta-net layers; model buffers, KV with the RS buffer, every tensor type
    exact, compute within 1 %."""
    from memviz.core.arch import LINEAR
    from memviz.core.log_check import check_log, retyped_tensors

    text = (Path(__file__).parents[2] / "data" / "llamacpp" / "qwen35moe_q4km_cpu.log").read_text()
    e, rows = check_log(text)
    by_name = {r.name: r for r in rows}
    assert e.architecture.model_type == "qwen3_5_moe_text"
    assert e.architecture.layer_types.count(LINEAR) == 6
    assert "llama_memory_recurrent:        CPU RS buffer size =     1.64 MiB" in text
    for name in ("model CPU_REPACK", "model CPU_Mapped", "KV", "n_ctx"):
        assert abs(by_name[name].estimated - by_name[name].measured) <= 0.01 * MiB, name
    assert abs(by_name["compute"].error) < 0.01 and retyped_tensors(rows) == 0


CODER_NEXT = "\n".join(CASES["qwen3-coder-next-q5_k_m-cuda-4060-fit-40k"]["log"])


def test_a_legacy_qwen3_next_file_is_told_by_its_tensor_count():
    """Qwen's own Qwen3-Next GGUFs predate llama.cpp's split of in_proj_qkvz: one `ssm_in` per delta-net layer
    (807 tensors, not 843), which the quantizer types by no category; their converter kept the shared-expert
    gates in F16 (48 more F16 and fewer F32 tensors than 0c1e570's converter writes)."""
    from memviz.core.gguf_mixes import gguf_type_counts

    load = read_llamacpp_load(CODER_NEXT)
    a = architecture_of(load)
    assert a.deltanet_ssm_in and a.shared_gate_gguf_type == "F16" and load.n_tensors == 807
    assert gguf_type_counts("Q5_K_M", a) == load.type_counts == {"f32": 313, "f16": 48, "q5_k": 391, "q6_k": 55}
    current = a.with_changes(deltanet_ssm_in=False, shared_gate_gguf_type="F32")
    assert gguf_type_counts("Q5_K_M", current) == {"f32": 361, "q5_k": 409, "q6_k": 73}


def test_the_fit_line_places_the_experts_of_the_last_layers_in_host_memory():
    """`--fit` printed "49 layers (47 overflowing)" on one GPU: layers 0-1 whole, the experts of 2-47 in host
    memory, and layer 2's up experts back on the GPU as fit decides it against the 6,968 MiB it found free."""
    load = read_llamacpp_load(CODER_NEXT)
    assert load.settings["fit_devices"] == {"CUDA0": (49, 47)} and load.settings["fit_free_mib"] == 6968
    sc = scenario_of(load, architecture_of(load))
    rule = dict(sc.options)["override_tensor"]
    assert rule.startswith(r"blk\.2\.ffn_(gate|gate_up|down).*=CPU,blk\.(3|4|") and r"|47)\.ffn_" in rule
    assert sc.gpu_layers is None


def test_a_fit_line_without_its_free_memory_changes_nothing():
    text = "\n".join(ln for ln in CODER_NEXT.splitlines() if "projected to use" not in ln)
    load = read_llamacpp_load(text)
    assert "override_tensor" not in dict(scenario_of(load, architecture_of(load)).options)


def test_llama_cpp_python_prints_the_cpu_features_without_a_prefix():
    load = read_llamacpp_load("\n".join(CASES["qwen3.6-35b-a3b-q2_k-cpu-avx2-8k"]["log"]))
    assert load.settings["cpu"] == "avx2" and not load.notes


@pytest.mark.parametrize("line", ["49 layers (50 overflowing)", "60 layers ( 2 overflowing)", "49 layers ( 0 overflowing)"])
def test_a_fit_line_that_cannot_describe_the_model_places_nothing(line):
    """More overflowing layers than layers, more layers than the model has, or none overflowing: no -ot rule."""
    text = CODER_NEXT.replace("49 layers (47 overflowing)", line)
    load = read_llamacpp_load(text)
    assert "override_tensor" not in dict(scenario_of(load, architecture_of(load)).options)


def test_a_granite_hybrid_log_places_its_mamba2_layers_from_the_model_summary():
    """A real load of a 40-layer granitehybrid file on this CPU (tests/data/llamacpp/README.md): the metadata dump
    cuts head_count_kv after 12 layers, `print_info: n_head_kv` prints all 40, so the four attention layers are
    found; model (CPU_REPACK included), KV with the RS buffer and the tensors per type exact, compute within 3 %."""
    from memviz.core.arch import LINEAR
    from memviz.core.log_check import check_log, retyped_tensors

    text = (Path(__file__).parents[2] / "data" / "llamacpp" / "granitehybrid40_q4km_cpu.log").read_text()
    assert "head_count_kv arr[i32,40]      = [0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, ..." in text
    e, rows = check_log(text)
    a = e.architecture
    assert a.model_type == "granitemoehybrid" and [i for i, kind in enumerate(a.layer_types) if kind != LINEAR] == [
        5, 15, 25, 35]
    by_name = {r.name: r for r in rows}
    for name in ("model CPU_REPACK", "model CPU_Mapped", "KV", "n_ctx"):
        assert abs(by_name[name].estimated - by_name[name].measured) <= 0.01 * MiB, name
    assert abs(by_name["compute"].error) < 0.03 and retyped_tensors(rows) == 0


def test_a_kimi_linear_log_reads_its_delta_layers_and_matches_every_buffer():
    """A real load of a kimi-linear file on this CPU (two sequences): a layer without KV heads is a delta layer;
    model, KV with the RS buffer (the MLA latent, the delta layers' F32 convolution rows and states per sequence) and
    the tensors per type exact, compute within 5 %."""
    from memviz.core.arch import FULL
    from memviz.core.log_check import check_log, retyped_tensors

    text = (Path(__file__).parents[2] / "data" / "llamacpp" / "kimilinear_q4km_cpu.log").read_text()
    assert "llama_memory_recurrent:        CPU RS buffer size =     6.42 MiB" in text
    e, rows = check_log(text)
    a = e.architecture
    assert a.model_type == "kimi_linear" and [i for i, kind in enumerate(a.layer_types) if kind == FULL] == [3, 7]
    by_name = {r.name: r for r in rows}
    for name in ("model CPU_REPACK", "model CPU_Mapped", "KV", "n_ctx"):
        assert abs(by_name[name].estimated - by_name[name].measured) <= 0.01 * MiB, name
    assert abs(by_name["compute"].error) < 0.05 and retyped_tensors(rows) == 0


def test_a_nemotron_h_log_places_its_blocks_from_the_model_summary():
    """A real load of a 56-block nemotron_h file (Nemotron-Nano-9B-v2's pattern) on this CPU: the metadata dump cuts
    the per-layer KV heads and feed-forward widths, the summary prints them, so Mamba2, MLP and attention blocks
    are told apart; model, KV with the RS buffer and the tensors per type exact, compute within 3 %."""
    from memviz.core.arch import FULL, LINEAR, NO_MIXER
    from memviz.core.log_check import check_log, retyped_tensors

    text = (Path(__file__).parents[2] / "data" / "llamacpp" / "nemotronh56_q4km_cpu.log").read_text()
    e, rows = check_log(text)
    a = e.architecture
    pattern = "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-"
    assert a.layer_types == tuple({"M": LINEAR, "-": NO_MIXER, "*": FULL}[c] for c in pattern)
    by_name = {r.name: r for r in rows}
    for name in ("model CPU_REPACK", "model CPU_Mapped", "KV", "n_ctx"):
        assert abs(by_name[name].estimated - by_name[name].measured) <= 0.01 * MiB, name
    assert abs(by_name["compute"].error) < 0.03 and retyped_tensors(rows) == 0


def test_a_deepseek_v4_log_reads_its_compressed_caches_and_swa_full():
    """A real load of a deepseek4 file on this CPU (tests/data/llamacpp/configs/deepseek-v4.json at Q4_K_M) by
    llama-cpp-python's high-level API, which asks for full-size SWA caches: the log says so ("using full-size SWA
    cache"), and the window cache then holds every cell. The compress ratios come from the metadata dump; model
    (CPU_REPACK included), KV (four caches and three compressor-state buffers, each printed to 0.01 MiB) and the
    tensors per type exact."""
    from memviz.core.log_check import check_log, retyped_tensors

    text = (Path(__file__).parents[2] / "data" / "llamacpp" / "deepseek4_q4km_cpu.log").read_text()
    e, rows = check_log(text)
    assert e.architecture.compress_ratios == (0, 4, 128, 4) and e.scenario.engine_options["swa_full"]
    by_name = {r.name: r for r in rows}
    for name, printed in (("model CPU_REPACK", 1), ("model CPU_Mapped", 1), ("KV", 7), ("n_ctx", 1)):
        assert abs(by_name[name].estimated - by_name[name].measured) <= printed * 0.005 * MiB + 1, name
    assert retyped_tensors(rows) == 0


def test_a_quantized_cache_log_says_whether_the_attention_is_rotated():
    """A load printing `attn_rot_k = 1` (the published Qwen3.6-27B start, q8_0 caches) keeps the rotation; the same
    lines without it (a build before the rotation, or LLAMA_ATTN_ROT_DISABLE=1) turn it off."""
    cases = json.loads((Path(__file__).parents[2] / "data" / "published" / "llamacpp_logs.json").read_text())["cases"]
    lines = next(c for c in cases if c["id"] == "qwen3.6-27b-ud-q4kxl-cuda-5090-q8cache-128k-np4")["log"]
    for kept, rotated in ((lines, True), ([x for x in lines if "attn_rot" not in x], False)):
        load = read_llamacpp_load("\n".join(kept))
        sc = scenario_of(load, architecture_of(load))
        assert sc.kv_format == "q8_0" and dict(sc.options).get("attn_rotation", True) is rotated

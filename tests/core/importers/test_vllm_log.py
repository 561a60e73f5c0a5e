"""The settings a vLLM start-up log states, read into the scenario memviz checks it against."""

import pytest

from memviz.core.errors import InputError
from memviz.core.importers.vllm_log import read_vllm_settings, vllm_scenario
from memviz.core.log_check import check_vllm
from memviz.core.presets import get_preset

# the lines vllm 0.10.1.1 printed for Qwen2-7B-Instruct on one A100 80GB (dennislee22/vLLM-benchmarking,
# log/vllm-7B-1gpuA10080GB-0.25GRAM.log), the engine config shortened to the fields read
LOG_010 = """\
(APIServer pid=1671) INFO 09-04 01:02:21 [api_server.py:1805] vLLM API server version 0.10.1.1
(APIServer pid=1671) INFO 09-04 01:02:21 [utils.py:326] non-default args: {'model_tag': 'Qwen2-7B-Instruct', \
'port': 8081, 'model': 'Qwen2-7B-Instruct', 'max_model_len': 16384, 'gpu_memory_utilization': 0.25}
(APIServer pid=1671) INFO 09-04 01:02:37 [__init__.py:1750] Using max model len 16384
(APIServer pid=1671) INFO 09-04 01:02:38 [scheduler.py:222] Chunked prefill is enabled with max_num_batched_tokens=2048.
(EngineCore_0 pid=1812) INFO 09-04 01:02:54 [core.py:74] Initializing a V1 LLM engine (v0.10.1.1) with config: \
max_seq_len=16384, tensor_parallel_size=1, pipeline_parallel_size=1, enforce_eager=False, kv_cache_dtype=auto
(EngineCore_0 pid=1812) INFO 09-04 01:03:03 [gpu_model_runner.py:2007] Model loading took 14.2488 GiB and 4.4 seconds
(EngineCore_0 pid=1812) INFO 09-04 01:04:29 [gpu_worker.py:276] Available KV cache memory: 5.01 GiB
(EngineCore_0 pid=1812) INFO 09-04 01:04:29 [kv_cache_utils.py:849] GPU KV cache size: 93,872 tokens
(EngineCore_0 pid=1812) INFO 09-04 01:04:29 [kv_cache_utils.py:853] Maximum concurrency for 16,384 tokens per request: 5.73x
"""


def test_settings_come_from_the_non_default_args_the_engine_config_and_the_scheduler():
    s = read_vllm_settings(LOG_010)
    assert s.version == (0, 10, 1)
    assert s.args == {"max_model_len": 16384, "gpu_memory_utilization": 0.25, "tensor_parallel_size": 1,
                      "pipeline_parallel_size": 1, "kv_cache_dtype": "auto", "enforce_eager": False,
                      "max_num_batched_tokens": 2048}


def test_a_wrapped_args_line_still_gives_its_pairs():
    wrapped = LOG_010.replace("'model': 'Qwen2-7B-Instruct', 'max_model_len'", "'model': 'Qwe\nn2-7B', 'max_model_len'")
    assert read_vllm_settings(wrapped).args["gpu_memory_utilization"] == 0.25


def test_the_scenario_checks_the_pool_the_log_printed():
    a = get_preset("qwen2.5-7b").architecture()
    sc = vllm_scenario(LOG_010, a, "a100-80g")
    assert (sc.gpu_memory_utilization, sc.context_tokens, sc.tp) == (0.25, 16384, 1)
    # before v0.20: no CUDA-graph estimate; before v0.21 FlashInfer's sampler without the Triton warm-up, V1's model runner;
    # before 0.12 no Inductor benchmark in the compile
    assert dict(sc.options) == {"max_num_batched_tokens": 2048, "estimate_cudagraphs": False, "sampler": "flashinfer-only",
                                "model_runner": "v1", "extensible_kv_cache": False, "block_size": 16,
                                "cold_compile": False, "in_flight_admission": False}
    _, rows = check_vllm(LOG_010, a, sc)
    pool = next(r for r in rows if r.name == "KV pool")
    assert abs(pool.error) < 0.01


def test_a_kv_cache_dtype_memviz_does_not_model_is_one_error():
    with pytest.raises(InputError, match="kv_cache_dtype 'int4'"):
        vllm_scenario(LOG_010.replace("kv_cache_dtype=auto", "kv_cache_dtype=int4"),
                      get_preset("qwen2.5-7b").architecture(), "a100-80g")


@pytest.mark.parametrize("line", ["[config.py:174] Using fp8 kv-cache for GlmMoeDsaForCausalLM on SM10x",
                                  "[config.py:149] Using fp8_ds_mla kv-cache for Mistral Large 4"])
def test_a_cache_the_model_makes_fp8_by_itself_is_read_as_fp8(line):
    """GLM-5 on compute capability 10 and a Mistral Large 4 checkpoint declaring an FP8 latent turn "auto" into
    FP8 (vLLM 0.34 model_executor/models/config.py `verify_and_update_config`) and say so."""
    a = get_preset("qwen2.5-7b").architecture()
    assert vllm_scenario(LOG_010, a, "a100-80g").kv_format == "bf16"
    logged = LOG_010.replace("Model loading took", f"{line}\n(EngineCore_0 pid=1812) INFO Model loading took")
    assert vllm_scenario(logged, a, "a100-80g").kv_format == "fp8"


def test_a_hybrid_models_prefix_caching_comes_from_the_log_or_its_release():
    """Prefix caching decides how many state pages a Qwen3.5 request keeps: stated in the args, announced by vLLM
    ("Mamba cache mode is set to 'align'"), else off before 0.24 (0.19's published pool keeps one page)."""
    a = get_preset("qwen3.5-35b-a3b").architecture()
    head = "INFO [core.py:114] Initializing a V1 LLM engine (v0.{}.0) with config: model='Qwen3.5'\n"
    assert dict(vllm_scenario(head.format(19), a, "h100-80g").options)["enable_prefix_caching"] is False
    assert "enable_prefix_caching" not in dict(vllm_scenario(head.format(24), a, "h100-80g").options)
    told = head.format(19) + "INFO Mamba cache mode is set to 'align' for Qwen3_5MoeForConditionalGeneration by default"
    assert dict(vllm_scenario(told, a, "h100-80g").options)["enable_prefix_caching"] is True
    args = head.format(21) + "INFO non-default args: {'enable_prefix_caching': True, 'max_model_len': 8192}"
    assert dict(vllm_scenario(args, a, "h100-80g").options)["enable_prefix_caching"] is True
    assert "enable_prefix_caching" not in dict(vllm_scenario(head.format(19), get_preset("qwen2.5-7b").architecture(),
                                                             "h100-80g").options)


# the start-up a DGX Spark serving report (2026-10-01) quotes for Qwen3-Embedding-8B (Qwen3-8B's attention) with the
# pool pinned to 8 sequences x 4,096 tokens x 144 KiB: its args as vLLM 0.33 prints them, its pool and token lines
LOG_PINNED = """\
(APIServer pid=1) INFO 10-01 18:18:05 [utils.py:326] non-default args: {'model': 'Qwen/Qwen3-Embedding-8B', \
'max_model_len': 4096, 'max_num_seqs': 8, 'kv_cache_memory_bytes': 4831838208}
(EngineCore pid=2) INFO 10-01 18:19:40 [gpu_worker.py:663] Initial free memory 106.83 GiB, reserved 4.5 GiB memory \
for KV Cache as specified by kv_cache_memory_bytes config and skipped memory profiling.
(EngineCore pid=2) INFO 10-01 18:19:40 [kv_cache_utils.py:2235] GPU KV cache size: 32,768 tokens
(EngineCore pid=2) INFO 10-01 18:19:40 [kv_cache_utils.py:2236] Maximum concurrency for 4,096 tokens per request: 8.00x
"""


@pytest.mark.parametrize("args_printed", [True, False])
def test_a_pool_set_in_bytes_comes_from_the_args_or_the_reserved_line(args_printed):
    text = LOG_PINNED if args_printed else LOG_PINNED.replace(", 'kv_cache_memory_bytes': 4831838208", "")
    a = get_preset("qwen3-8b").architecture()
    sc = vllm_scenario(text, a, "NVIDIA GB10")
    assert dict(sc.options)["kv_cache_memory_bytes"] == 4831838208  # 4.5 GiB: exact either way here
    _, rows = check_vllm(text, a, sc)
    pool = next(r for r in rows if r.name == "KV pool")
    assert pool.error == 0


def test_a_log_without_flashinfer_sampler_reads_the_sort_before_0_17_and_the_triton_kernel_since():
    """vLLM prints its fallback (0.10's line in the two-node dennislee22 log; 0.33's "disabled via
    VLLM_USE_FLASHINFER_SAMPLER=0"): before 0.17 the profile's sampler step then sorts the logits, 38 bytes a logit
    with 256 dummy requests instead of 14; from 0.17 the Triton kernel masks them in place, as FlashInfer's, beside
    its buffer of a vocabulary row per SM (108 on the A100)."""
    from memviz.core.estimate import estimate
    a = get_preset("qwen2.5-7b").architecture()
    fallback = ("INFO [topk_topp_sampler.py:50] FlashInfer is available, but it is not enabled. Falling back to the "
                "PyTorch-native implementation of top-p & top-k sampling.\n")
    native = vllm_scenario(LOG_010 + fallback, a, "a100-80g")
    assert dict(native.options)["sampler"] == "sort"
    assert dict(vllm_scenario(LOG_010, a, "a100-80g").options)["sampler"] == "flashinfer-only"  # 0.10's default
    off = vllm_scenario(LOG_010.replace("version 0.10.1.1", "version 0.33.0") + "INFO FlashInfer top-p/top-k sampling "
                        "disabled via VLLM_USE_FLASHINFER_SAMPLER=0.\n", a, "a100-80g")
    assert dict(off.options)["sampler"] == "triton"
    flash = native.with_changes(options={**dict(native.options), "sampler": "flashinfer-only"})
    extra = estimate(a, native).bytes["activations"] - estimate(a, flash).bytes["activations"]
    assert extra == 256 * a.vocab_size * (38 - 14)  # 256 dummy requests, one row of logits each
    # 0.33 runs Qwen2 on its V2 model runner: the Triton kernel masks an fp32 copy in place, beside its buffer
    assert "model_runner" not in dict(off.options)
    assert estimate(a, off).engine_facts["profile_sampler"]["bytes"] == 256 * a.vocab_size * 6 + 108 * a.vocab_size * 4
    assert "VLLM_USE_FLASHINFER_SAMPLER=0 vllm serve" in estimate(a, native).launch_command()


def test_the_cuda_total_the_log_prints_replaces_the_catalogues():
    """vLLM budgets from the total CUDA reports, which the log prints: under WSL2 an RTX 4080's is its whole 16,376
    MiB (kvcache-lab's vLLM 0.26 runs: "Free memory on device cuda:0 (13.88/15.99 GiB)"), 0.5 GiB above the
    catalogue's Linux figure; a total beyond the card named is the wrong card."""
    a = get_preset("qwen2.5-7b").architecture()
    line = "INFO [gpu_worker.py:391] Free memory on device cuda:0 (13.88/15.99 GiB) on startup.\n"
    assert vllm_scenario(LOG_010 + line, a, "rtx4080").gpu == "rtx4080@15.99GiB"
    assert vllm_scenario(LOG_010 + line, a, "rtx4080@15.5GiB").gpu == "rtx4080@15.99GiB"
    assert vllm_scenario(LOG_010, a, "RTX 4080").gpu == "rtx4080"
    v0 = "INFO worker.py:241] Memory profiling results: total_gpu_memory=79.22GiB initial_memory_usage=0.5GiB\n"
    assert vllm_scenario(LOG_010 + v0, a, "h100-80g").gpu == "h100-80g@79.22GiB"
    with pytest.raises(InputError, match="not within the RTX 4080 16GB's"):
        vllm_scenario(LOG_010 + line.replace("15.99", "23.64"), a, "rtx4080")


# the args vLLM 0.25.0 printed for a data-parallel, expert-parallel start-up (vllm-project/vllm issue #51454,
# DeepSeek-V4-Flash on 8 B200s), shortened to the pairs read
DP_EP_ARGS = ("INFO 08-07 21:32:22 [api_utils.py:273] non-default args: {'model_tag': 'DeepSeek-V4-Flash-0731', "
              "'data_parallel_size': 8, 'enable_expert_parallel': True, 'block_size': 256, "
              "'gpu_memory_utilization': 0.95, 'kv_cache_dtype': 'fp8', 'max_num_batched_tokens': 8192, "
              "'max_num_seqs': 256}")


def test_data_and_expert_parallelism_come_from_the_args():
    """A log's --data-parallel-size and --enable-expert-parallel reach the scenario (each GPU then holds its own
    attention and a share of the experts), also from a wrapped args line."""
    s = read_vllm_settings(DP_EP_ARGS)
    assert (s.args["data_parallel_size"], s.args["enable_expert_parallel"]) == (8, True)
    sc = vllm_scenario(DP_EP_ARGS, get_preset("deepseek-v3").architecture(), "b200")
    assert {k: v for k, v in sc.options if "parallel" in k} == {"data_parallel_size": 8, "enable_expert_parallel": True}
    wrapped = DP_EP_ARGS.replace("'model_tag': 'DeepSeek", "'model_tag': 'Deep\nSeek")
    assert read_vllm_settings(wrapped).args["enable_expert_parallel"] is True
    assert "data_parallel_size" not in dict(vllm_scenario(LOG_010, get_preset("qwen2.5-7b").architecture(),
                                                          "a100-80g").options)


def test_eplb_and_its_redundant_experts_come_from_the_args():
    """vLLM prints --eplb-config as an EPLBConfig(...) inside the args dict, which then is not a Python literal: the
    pairs are read one by one (a line built in the form vLLM 0.2x prints)."""
    line = DP_EP_ARGS.replace("'block_size': 256,", "'block_size': 256, 'enable_eplb': True, 'eplb_config': "
                              "EPLBConfig(window_size=1000, step_interval=3000, num_redundant_experts=32),")
    sc = vllm_scenario(line, get_preset("deepseek-v3").architecture(), "b200")
    assert (dict(sc.options)["enable_eplb"], dict(sc.options)["num_redundant_experts"]) == (True, 32)
    assert "eplb_window_size" not in dict(sc.options)  # vLLM prints the default 1,000 with the rest
    longer = vllm_scenario(line.replace("window_size=1000", "window_size=5000"),
                           get_preset("deepseek-v3").architecture(), "b200")
    assert dict(longer.options)["eplb_window_size"] == 5000
    assert "enable_eplb" not in dict(vllm_scenario(DP_EP_ARGS, get_preset("deepseek-v3").architecture(),
                                                   "b200").options)


@pytest.mark.parametrize(("release", "line", "sampler"), [
    ("0.11.0", "", "flashinfer-only"),  # FlashInfer's sampler the default where installed, no Triton warm-up
    ("0.11.1", "", "sort"),  # FlashInfer's off by default (vllm-project/vllm PR #26859), no Triton kernel before 0.17
    ("0.19.0", "", "triton"),
    ("0.19.0", "INFO Using FlashInfer for top-p & top-k sampling.\n", "flashinfer-only"),
    ("0.21.0", "", None),  # FlashInfer's again (PR #40376) and the Triton kernel warmed beside it (PR #41375): 0.33's
    ("0.33.0", "INFO FlashInfer top-p/top-k sampling disabled via VLLM_USE_FLASHINFER_SAMPLER=0.\n", "triton"),
])
def test_the_sampler_of_a_log_follows_its_release(release, line, sampler):
    a = get_preset("qwen2.5-7b").architecture()
    sc = vllm_scenario(LOG_010.replace("version 0.10.1.1", f"version {release}") + line, a, "a100-80g")
    assert dict(sc.options).get("sampler") == sampler


def test_an_old_log_on_a_gpu_without_flashinfers_sampler_reads_the_native_path():
    """0.10 on a T4 (compute capability 7.5, which FlashInfer's sampler is not run on): the sort, not a refusal."""
    a = get_preset("qwen2.5-7b").architecture()
    assert dict(vllm_scenario(LOG_010, a, "t4").options)["sampler"] == "sort"


def test_the_log_reader_takes_the_model_runner_the_release_ran():
    """Releases 0.22 to 0.28 ran the V2 model runner for some architectures (Llama in 0.23 and 0.24, not in 0.26),
    every model from 0.29; their V2 profile made only the sampler's default pass until 0.33 (sampler greedy).
    What the log prints decides over the release."""
    a = get_preset("llama-3.1-8b").architecture()
    on = {v: dict(vllm_scenario(LOG_010.replace("version 0.10.1.1", f"version {v}"), a, "a100-80g").options)
          for v in ("0.21.0", "0.24.0", "0.26.0", "0.30.0", "0.33.0")}
    assert [o.get("model_runner", "v2") for o in on.values()] == ["v1", "v2", "v1", "v2", "v2"]
    assert on["0.24.0"]["sampler"] == on["0.30.0"]["sampler"] == "greedy"
    assert "sampler" not in on["0.33.0"]  # the GPU's own
    told = LOG_010.replace("version 0.10.1.1", "version 0.30.0") + (
        "WARNING Model Runner V2 does not yet support X; using the V1 model runner instead.\n")
    assert dict(vllm_scenario(told, a, "a100-80g").options)["model_runner"] == "v1"
    v2 = LOG_010.replace("version 0.10.1.1", "version 0.26.0") + "INFO [gpu_worker.py:513] Using V2 Model Runner\n"
    assert dict(vllm_scenario(v2, a, "a100-80g").options)["sampler"] == "greedy"


def test_a_v0_log_reads_v0s_sort_and_batch_defaults():
    """V0's worker lines (vllm-project/vllm PR #10511's 0.6.4 start-up of Meta-Llama-3-8B): its profile sorts the
    logits of V0's 256 sequences, and without chunked prefill (8K positions) a step is a whole prompt; the profile
    then lands within 3 % of the printed 1.26 GiB (0.33's 1,024 sequences and 14 bytes a logit gave +40 %)."""
    from pathlib import Path

    from memviz.core.log_check import check_vllm

    text = Path("tests/data/logs/vllm_llama3_8b_pr10511.log").read_text()
    a = get_preset("llama-3.1-8b").architecture().with_changes(max_position_embeddings=8192)
    sc = vllm_scenario(text, a, "h100-80g")
    assert dict(sc.options) == {"sampler": "sort", "max_num_seqs": 256, "enable_chunked_prefill": False,
                                "max_num_batched_tokens": 8192, "model_runner": "v1", "extensible_kv_cache": False,
                                "block_size": 16, "cold_compile": False, "in_flight_admission": False}
    peak = next(r for r in check_vllm(text, a, sc)[1] if r.name == "activation peak")
    assert abs(peak.error) < 0.03
    long = vllm_scenario(text, get_preset("llama-3.1-8b").architecture(), "h100-80g")  # 131K positions: chunked
    assert (dict(long.options)["enable_chunked_prefill"], dict(long.options)["max_num_batched_tokens"]) == (True, 2048)
    assert dict(vllm_scenario(LOG_010, get_preset("qwen2.5-7b").architecture(), "a100-80g").options)["sampler"] \
        == "flashinfer-only"  # a V1 log of 0.10


def test_a_v2_runners_consumed_memory_holds_its_sampler_state():
    """0.33's "Actual usage is X GiB for consumed memory (weights + non-torch)" counts what the V2 model runner's
    sampler keeps beside the weights; memviz's non-torch row compares it with its 64 MiB and that state."""
    from memviz.core.log_check import check_vllm

    a = get_preset("qwen2.5-7b").architecture()
    text = ("INFO [core.py:123] Initializing a V1 LLM engine (v0.33.0) with config: model='Qwen/Qwen2.5-7B'\n"
            "INFO [gpu_model_runner.py:1] Model loading took 14.25 GiB memory and 3.2 seconds\n"
            "INFO [gpu_worker.py:789] Free memory on device (78.6/79.18 GiB) on startup. Desired GPU memory "
            "utilization is (0.9, 71.26 GiB). Actual usage is 14.95 GiB for consumed memory (weights + non-torch), "
            "1.90 GiB for peak activation, and 0.60 GiB for CUDAGraph memory.\n")
    sc = vllm_scenario(text, a, "h100-80g")
    e, rows = check_vllm(text, a, sc)
    row = next(r for r in rows if r.name == "non-torch")
    assert row.measured == round(0.70 * 2**30)
    assert row.estimated == e.engine_facts["non_torch_bytes"] + e.engine_facts["sampler_state_bytes"]


def _published(case_id: str) -> str:
    import json
    from pathlib import Path

    cases = json.loads((Path(__file__).parents[2] / "data" / "published" / "vllm_logs.json").read_text())["cases"]
    return "\n".join(next(c for c in cases if c["id"] == case_id)["log"])


def test_a_019_log_is_read_as_it_ran():
    """vLLM 0.19.0 (llm-d-planner's H100 sweep): its hint "In v0.19, CUDA graph memory profiling will be enabled by
    default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1) ... To try it now, set ..." says the estimate is off; the
    DEBUG "worker init memory snapshot: ..., non_torch_memory=0.51GiB" is the CUDA context before loading, not the
    profile's non-torch increase (0.25 GiB); dtype=torch.float32 keeps weights and cache in fp32."""
    from memviz.core.importers.logs import parse_log

    text = _published("llama3.1-8b-h100-v1-0.19-llmd")
    a = get_preset("llama-3.1-8b").architecture()
    sc = vllm_scenario(text, a, "h100-80g")
    assert dict(sc.options)["estimate_cudagraphs"] is False
    assert parse_log(text).bytes["overhead"] == round(0.25 * 2**30)
    fp32 = vllm_scenario(_published("llama3.1-8b-h100-fp32-v1-0.19-llmd"), a, "h100-80g")
    assert (fp32.weight_format, fp32.kv_format) == ("fp32", "fp32")
    on = text.replace("To try it now, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase", "") + \
        "\n'VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS': True"
    assert "estimate_cudagraphs" not in dict(vllm_scenario(on, a, "h100-80g").options)


@pytest.mark.parametrize(("release", "persistent"), [("0.13.0", False), ("0.14.0", None), ("0.19.0", None)])
def test_releases_before_0_14_free_the_moe_workspace_after_each_layer(release, persistent):
    """16-bit experts ran `fused_experts` up to 0.13 (caches freed in each layer) and the modular kernel from 0.14,
    whose workspace stays (`vllm_moe_workspace`); a dense model's scenario does not name the option."""
    log = LOG_010.replace("0.10.1.1", release)
    moe, dense = get_preset("qwen3-30b-a3b").architecture(), get_preset("qwen2.5-7b").architecture()
    assert dict(vllm_scenario(log, moe, "a100-80g").options).get("persistent_moe_workspace") is persistent
    assert "persistent_moe_workspace" not in dict(vllm_scenario(log, dense, "a100-80g").options)


@pytest.mark.parametrize(("release", "line", "cold"), [
    ("0.19.0", "Compiling a graph for compile range (1, 8192) takes 12.34 s", None),
    ("0.19.0", "Directly load the compiled graph(s) for compile range (1, 8192) from the cache, took 1.234 s", False),
    ("0.11.0", "Compiling a graph for compile range (1, 8192) takes 12.34 s", False)])
def test_a_start_that_loads_its_compiled_graphs_runs_no_inductor_benchmark(release, line, cold):
    """vLLM prints whether it compiled (compilation/backends.py); a start from its compile cache, or a release
    before 0.12 (torch 2.8, no combo-kernel benchmark), holds no copy of the embedding table (`vllm_compile`)."""
    log = LOG_010.replace("0.10.1.1", release) + f"(EngineCore_0 pid=1812) INFO 09-04 01:03:20 [backends.py:286] {line}\n"
    options = dict(vllm_scenario(log, get_preset("qwen2.5-7b").architecture(), "a100-80g").options)
    assert options.get("cold_compile") is cold


@pytest.mark.parametrize(("backend", "option"), [("TRITON_ATTN", "TRITON_ATTN"), ("FLASHINFER", "FLASHINFER"),
                                                 ("FLASH_ATTN", None), ("FLASH_ATTN_MLA", None)])
def test_the_attention_backend_the_log_names_becomes_the_option(backend, option):
    """vLLM 0.19 ran Gemma 3 on TRITON_ATTN (its image prefix): no FA3 split buffers in its FULL graphs. FLASH_ATTN
    is what "auto" resolves to where its buffers matter; MLA's backends are not the option's."""
    line = (f"(EngineCore_0 pid=1812) INFO 09-04 01:02:58 [cuda.py:334] Using {backend} attention backend out of "
            "potential backends: ['TRITON_ATTN', 'FLEX_ATTENTION'].\n")
    options = dict(vllm_scenario(LOG_010 + line, get_preset("qwen2.5-7b").architecture(), "a100-80g").options)
    assert options.get("attention_backend") == option
    if backend == "FLASHINFER":  # vLLM's own choice on a B200: "auto" models it
        options = dict(vllm_scenario(LOG_010 + line, get_preset("qwen2.5-7b").architecture(), "b200").options)
        assert "attention_backend" not in options


@pytest.mark.parametrize(("version", "admits_in_flight"), [("0.19.2", False), ("0.25.0", False), ("0.26.0", True),
                                                           ("0.34.0", True)])
def test_a_release_before_0_26_admits_one_batch_beside_a_window(version, admits_in_flight):
    """vLLM 0.25.0's `max_admission_blocks_per_request` took max_num_batched_tokens, 0.26.0's
    `VllmConfig.max_in_flight_tokens` (every concurrent batch): the option follows the log's release."""
    text = LOG_010.replace("0.10.1.1", version)
    sc = vllm_scenario(text, get_preset("qwen2.5-7b").architecture(), "a100-80g")
    assert dict(sc.options).get("in_flight_admission", True) is admits_in_flight


@pytest.mark.parametrize(("version", "estimates"), [("0.19.1", False), ("0.20.0", True), ("0.21.0", True)])
def test_the_cuda_graph_estimate_is_on_from_0_20(version, estimates):
    """envs.py's VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS defaults to "0" in 0.19.1's wheel and "1" in 0.20.0's
    (whose log line already says "default since v0.21.0")."""
    text = LOG_010.replace("0.10.1.1", version)
    sc = vllm_scenario(text, get_preset("qwen2.5-7b").architecture(), "a100-80g")
    assert dict(sc.options).get("estimate_cudagraphs", True) is estimates


@pytest.mark.parametrize(("method", "fmt"), [("modelopt_fp4", "nvfp4"), ("fp8", "fp8"), ("modelopt", "bf16"),
                                             ("awq", "bf16")])
def test_the_quantization_argument_names_the_weight_format_of_an_unquantized_config(method, fmt):
    """`--quantization` where the model given has no quantization_config (a base model's config.json beside the log
    of its quantized checkpoint); a method whose format depends on the checkpoint (AWQ's bits and groups) stays the
    model's dtype (ModelOpt's FP8 or NVFP4 is the checkpoint's quant_algo), and the engine config line's
    `quantization=` is read where the args line is not."""
    a = get_preset("qwen2.5-7b").architecture()
    args = LOG_010.replace("'gpu_memory_utilization': 0.25}", f"'gpu_memory_utilization': 0.25, 'quantization': '{method}'}}")
    config = LOG_010.replace("kv_cache_dtype=auto", f"quantization={method}, kv_cache_dtype=auto")
    assert vllm_scenario(args, a, "a100-80g").weight_format == fmt
    assert vllm_scenario(config, a, "a100-80g").weight_format == fmt
    assert vllm_scenario(LOG_010, a, "a100-80g").weight_format == "bf16"


def test_a_checkpoints_own_quantization_config_comes_before_the_argument():
    a = get_preset("qwen2.5-7b").architecture().with_changes(native_format="awq-int4")
    text = LOG_010.replace("kv_cache_dtype=auto", "quantization=fp8, kv_cache_dtype=auto")
    assert vllm_scenario(text, a, "a100-80g").weight_format == "awq-int4"


def test_nemotron_cascade_starts_are_read_as_they_ran():
    """The five Nemotron-Cascade-2 NVFP4 starts (99sono/DockerBuildFiles, a base config.json without the checkpoint's
    quantization_config): nvfp4 from `--quantization modelopt_fp4`, FP8 cache, prefix caching off for a hybrid model
    before 0.24, the CUDA-graph estimate off in 0.19 and on in the 0.20.1 build: what each published case states."""
    import json
    from pathlib import Path

    from memviz.core.arch import from_hf_config

    cases = json.loads((Path(__file__).parents[2] / "data" / "published" / "vllm_logs.json").read_text())["cases"]
    cases = [c for c in cases if c["id"].startswith("nemotron-cascade2-")]
    assert len(cases) == 5
    for case in cases:
        sc = vllm_scenario("\n".join(case["log"]), from_hf_config(case["model"]["config"]), case["gpu"])
        assert (sc.weight_format, sc.kv_format, sc.context_tokens) == ("nvfp4", "fp8", case["scenario"]["context_tokens"])
        assert dict(sc.options) | {"estimate_cudagraphs": dict(sc.options).get("estimate_cudagraphs", True)} == \
            case["options"], case["id"]


def test_the_method_vllm_resolved_comes_before_the_one_asked_for():
    """`--quantization modelopt` of an NVFP4 checkpoint: the engine config line prints what vLLM resolved from the
    checkpoint's quant_algo (`ModelOptNvFp4Config.override_quantization_method`: quantization=modelopt_fp4)."""
    text = LOG_010.replace("'gpu_memory_utilization': 0.25}", "'gpu_memory_utilization': 0.25, 'quantization': 'modelopt'}")
    text = text.replace("kv_cache_dtype=auto", "quantization=modelopt_fp4, kv_cache_dtype=auto")
    assert vllm_scenario(text, get_preset("qwen2.5-7b").architecture(), "a100-80g").weight_format == "nvfp4"

"""The settings a vLLM start-up log states, as the scenario memviz estimates for it.

vLLM prints what it was asked (`vllm/entrypoints/utils.py` `log_non_default_args`: "non-default args: {...}"), the
context it settled on ("Using max model len N"), a pool set in bytes ("reserved X GiB memory for KV Cache as
specified by kv_cache_memory_bytes"), the scheduler's batch ("Chunked prefill is enabled with
max_num_batched_tokens=N") and its engine config ("Initializing a V1 LLM engine (vX) with config: ...
tensor_parallel_size=N, ... kv_cache_dtype=..., enforce_eager=..."). It does not name the GPU, only the CUDA total
its budget starts from, and the model only by its name or path: the caller gives both.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from memviz.core.arch import Architecture
from memviz.core.engines.vllm import KV_CACHE_DTYPES
from memviz.core.engines.vllm_eplb import WINDOW_STEPS
from memviz.core.engines.vllm_flashinfer import runs_flashinfer
from memviz.core.engines.vllm_sampler import V2_WARMUP_PASS_SINCE, flashinfer_refusal, release_runner
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario
from memviz.core.gpus import get_gpu, with_cuda_total
from memviz.core.importers.logs import CUDA_TOTAL_GIB
from memviz.core.units import GiB

#: the release that made the CUDA-graph estimate part of the budget by default (envs.py
#: VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS: "0" in 0.19.1's wheel, "1" in 0.20.0's, whose log line already says
#: "CUDA graph memory profiling is enabled (default since v0.21.0)")
CUDAGRAPH_ESTIMATE_SINCE = (0, 20)
#: the model dtype the engine config line prints (`dtype=torch.float16`), as memviz's formats
LOGGED_DTYPES = {"float32": "fp32", "float16": "fp16", "bfloat16": "bf16"}
#: `--quantization` methods whose memviz weight format the name alone decides (vLLM 0.20.1
#: model_executor/layers/quantization/__init__.py `get_quantization_config`: Fp8Config, whose online quantization of a
#: 16-bit checkpoint keeps a scale a tensor; ModelOptNvFp4Config, Mxfp4Config); a checkpoint's own quantization_config,
#: where the model given has one, decides first. Not "modelopt": vLLM takes it for an NVFP4 checkpoint too
#: (`ModelOptNvFp4Config.override_quantization_method`), so the checkpoint's quant_algo decides
LOGGED_QUANTIZATION = {"fp8": "fp8", "modelopt_fp4": "nvfp4", "mxfp4": "mxfp4-moe"}
#: a log of an earlier release that had the estimate on: 0.20's own line, the variable set in an environment dump or
#: a command line; not 0.19's hint "will be enabled by default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1) ... To
#: try it now, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase ...", printed when it is off
ESTIMATE_CUDAGRAPHS_ON = (r"CUDA graph memory profiling is enabled|'VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS': True"
                          r"|(?<![(\w])(?<!set )VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1(?! and increase)")
#: the first release known to cache prefixes of hybrid (delta-net) models by default: 0.19 did not (vllm-project/vllm
#: issue #40691's pool takes one state page per request), 0.24 did (noonghunna/club-3090 issue #612); releases between
#: are read as not, unless the log says so ("Mamba cache mode is set to 'align'")
HYBRID_PREFIX_CACHING_SINCE = (0, 24)
#: vLLM 0.34 sizes its pool from measured memory by default (the extensible KV cache) and makes 64-token blocks its
#: default (config/cache.py `enable_extensible_kv_cache`, `DEFAULT_BLOCK_SIZE`; 16 before); what its sizing prints
#: (v1/worker/extensible_kv_cache.py `measure_kv_cache_blocks`, `extend_kv_cache`)
EXTENSIBLE_SINCE = (0, 34)
#: 16-bit experts run the modular kernel, whose workspace the WorkspaceManager keeps (`vllm_moe_workspace`; 0.13's
#: unquantized_fused_moe_method.py still called `fused_experts`, 0.14's builds `FusedMoEModularKernel`)
PERSISTENT_MOE_WORKSPACE_SINCE = (0, 14)
#: the release whose sliding-window and chunked layers admit every concurrent batch's tokens (0.26.0
#: `VllmConfig.max_in_flight_tokens`; 0.25.0's `max_admission_blocks_per_request` took max_num_batched_tokens)
IN_FLIGHT_ADMISSION_SINCE = (0, 26)
#: Inductor's combo-kernel benchmark in a cold compile (`vllm_compile`: torch 2.9, vLLM 0.12); a start that loads its
#: compiled graphs from vLLM's cache prints this (compilation/backends.py) and benchmarks nothing
COMPILE_BENCHMARK_SINCE = (0, 12)
WARM_COMPILE = r"Directly load the compiled graph"
#: the backend vLLM picked for the decoder's attention (platforms/cuda.py `get_attn_backend_cls`, 0.19-0.34); the
#: ones memviz takes become the option but where "auto" resolves to them: FLASH_ATTN (on Hopper, where its buffers
#: matter) and FlashInfer on compute capability 10
LOGGED_BACKEND = r"Using (\w+) attention backend out of potential backends"
OTHER_BACKENDS = ("TRITON_ATTN", "FLASHINFER", "FLEX_ATTENTION")
EXTENSIBLE_LINES = r"Memory after warmup: .* KV cache blocks|Extended KV cache to \d+ blocks"
UNLOGGED_UTILIZATION = 0.9  # what memviz takes for a profile-sized log that prints none (vLLM 0.6.4's default)
_ARG_KEYS = ("max_model_len", "gpu_memory_utilization", "tensor_parallel_size", "pipeline_parallel_size",
             "max_num_seqs", "max_num_batched_tokens", "kv_cache_dtype", "enforce_eager", "block_size",
             "enable_chunked_prefill", "enable_prefix_caching", "kv_cache_memory_bytes", "data_parallel_size",
             "enable_expert_parallel", "enable_eplb", "enable_extensible_kv_cache", "quantization")
_CONFIG_KEYS = {"tensor_parallel_size": int, "pipeline_parallel_size": int, "data_parallel_size": int,
                "max_seq_len": int}


@dataclass(frozen=True)
class VllmSettings:
    """What the log says it ran with (absent keys: not printed, vLLM's defaults apply)."""

    version: tuple[int, int, int] | None  # (major, minor, patch)
    args: dict[str, Any] = field(default_factory=dict)


def read_vllm_settings(text: str) -> VllmSettings:
    args: dict[str, Any] = {}
    m = re.search(r"(?:\bversion |LLM engine \(v)(\d+)\.(\d+)\.(\d+)", text)
    version = (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None
    if given := _first(text, r"non-default args: (\{.*\})"):
        try:
            parsed = ast.literal_eval(given)  # a Python dict literal; a wrapped line simply is not read
        except (ValueError, SyntaxError):
            parsed = {}
        if isinstance(parsed, dict):
            args.update({k: parsed[k] for k in _ARG_KEYS if k in parsed})
    for key in _ARG_KEYS:  # the same pairs where a wrapped line kept the dict from being read whole
        if key in args or (value := _first(text, rf"'{key}': ([\d.]+|True|False)")) is None:
            continue
        args[key] = (value == "True") if value in ("True", "False") else (float(value) if "." in value else int(value))
    for key, kind in _CONFIG_KEYS.items():
        if (value := _first(text, rf"\b{key}=(\d+)")) is not None:
            args.setdefault("max_model_len" if key == "max_seq_len" else key, kind(value))
    if (value := _first(text, r"\bkv_cache_dtype=(\w+)")) is not None:
        args.setdefault("kv_cache_dtype", value)
    if (value := _first(text, r"\bdtype=torch\.(float32|float16|bfloat16)\b")) is not None:  # the engine config
        args.setdefault("dtype", value)
    if (value := _first(text, r"\bquantization=([\w-]+)")) is not None:  # the engine config: the method vLLM resolved
        args["quantization"] = value  # from the checkpoint ('modelopt' of an NVFP4 one: modelopt_fp4); None unquantized
    if (value := _first(text, r"\benforce_eager=(True|False)")) is not None:
        args.setdefault("enforce_eager", value == "True")
    if (value := _first(text, r"(?:Desired GPU memory utilization is \(|The current --gpu-memory-utilization=)([\d.]+)")) \
            is not None:  # 0.20+'s CUDA-graph line names it too
        args.setdefault("gpu_memory_utilization", float(value))
    if (value := _first(text, r"Maximum concurrency for ([\d,]+) tokens per request")) is not None:
        args.setdefault("max_model_len", int(value.replace(",", "")))
    if (value := _first(text, r"reserved ([\d.]+) GiB memory for KV Cache as specified by kv_cache_memory_bytes")) \
            is not None:  # printed to 0.01 GiB (`format_gib`): the non-default args' exact bytes come first
        args.setdefault("kv_cache_memory_bytes", round(float(value) * 2**30))
    if (value := _first(text, r"num_redundant_experts['\"]?(?::|=)\s*(\d+)")) is not None:  # --eplb-config, a dict
        args["num_redundant_experts"] = int(value)  # or an EPLBConfig(...) in the args line
    if (value := _first(text, r"(?:EPLBConfig\(|eplb_config['\"]?:\s*\{)[^)}]*\bwindow_size['\"]?(?::|=)\s*(\d+)")) \
            is not None:
        args["eplb_window_size"] = int(value)
    if (value := _first(text, r"Using max model len (\d+)")) is not None:
        args["max_model_len"] = int(value)
    if (value := _first(text, r"Chunked prefill is enabled with max_num_batched_tokens=(\d+)")) is not None:
        args["max_num_batched_tokens"] = int(value)
    return VllmSettings(version, args)


#: what vLLM prints when its sampler runs without FlashInfer (v1/sample/ops/topk_topp_sampler.py: 0.33's
#: "disabled via VLLM_USE_FLASHINFER_SAMPLER=0" and "sampling unavailable", earlier releases' "Falling back to the
#: PyTorch-native implementation of top-p & top-k sampling"): the PyTorch sort before 0.17, the Triton kernel since
TRITON_SAMPLER_SINCE = (0, 17)
#: FlashInfer's sampler was vLLM's default until 0.11.0 (where installed) and again from 0.21 (vllm-project/vllm PR
#: #26859 turned it off, PR #40376 on); 0.21 also warms the Triton kernel beside it (PR #41375)
FLASHINFER_OFF_SINCE, FLASHINFER_WARMED_SINCE = (0, 11, 1), (0, 21)
FLASHINFER_SAMPLER_LINE = r"Using FlashInfer for top-p & top-k sampling"
#: V0 engine's sampler sorts the logits in its profile run (vLLM 0.10.1.1 vllm/worker/model_runner.py `_dummy_run`:
#: top_p 0.99, top_k vocab - 1; vllm/model_executor/layers/sampler.py `_apply_top_k_top_p`); V1 is the default from 0.8
V1_DEFAULT_SINCE = (0, 8)
V0_LINES = r"PyTorch activation peak memory|model weights take|Loading model weights took|# (?:GPU|CUDA|cuda) blocks:"
V1_LINES = r"Available KV cache memory|gpu_model_runner\.py|gpu_worker\.py|Model loading took"
NATIVE_SAMPLER_LINES = (r"Falling back to the PyTorch-native implementation of top-p & top-k sampling|"
                        r"FlashInfer top-p/top-k sampling (?:disabled|unavailable)")


def is_v0(text: str, version: tuple[int, int, int] | None) -> bool:
    """Whether the log is V0 engine's (the default before 0.8, VLLM_USE_V1=0 after): its worker's memory lines, not
    V1's gpu_worker / gpu_model_runner ones."""
    if re.search(V1_LINES, text):
        return False
    return (version is not None and version < V1_DEFAULT_SINCE) or bool(re.search(V0_LINES, text))


def _v0_batch_defaults(args: dict[str, Any], a: Architecture, max_model_len: int) -> dict[str, Any]:
    """V0's scheduler limits where the log does not print them (vLLM 0.10.1.1 engine/arg_utils.py
    `_set_default_args_v0`, config/scheduler.py): 256 sequences; chunked prefill only above 32K tokens, and not for
    multimodal, MLA or sliding-window models, 2,048 tokens a step, else a whole max_model_len prompt (at least
    2,048)."""
    chunked = args.get("enable_chunked_prefill")
    if chunked is None:
        chunked = max_model_len > 32768 and not (a.sliding_window or a.is_mla or a.encoders)
    out: dict[str, Any] = {"max_num_seqs": args.get("max_num_seqs") or 256, "enable_chunked_prefill": bool(chunked)}
    out["max_num_batched_tokens"] = args.get("max_num_batched_tokens") or (2048 if chunked else max(max_model_len, 2048))
    return out


def _sampler(text: str, version: tuple[int, int, int] | None, gpu: str, v0: bool, runner: str | None) -> str | None:
    """The sampler a log's release ran in its profile, where it differs from the one 0.33 picks for the GPU: V0's
    sort; the V2 runner's default pass alone before 0.33 (`runner` None: V2); the native path its fallback line names
    (the sort before 0.17, the Triton kernel since), FlashInfer's without the Triton warm-up before 0.21, and, where
    nothing is printed, the release's default (FlashInfer's only on a GPU that runs it)."""
    native = "triton" if version is None or version >= TRITON_SAMPLER_SINCE else "sort"
    if v0:
        return "sort"
    if runner is None and version is not None and version[:2] < V2_WARMUP_PASS_SINCE:
        return "greedy"
    if re.search(NATIVE_SAMPLER_LINES, text):
        return native
    if version is None or version >= FLASHINFER_WARMED_SINCE:
        return None
    if re.search(FLASHINFER_SAMPLER_LINE, text) or version < FLASHINFER_OFF_SINCE:
        return native if flashinfer_refusal(get_gpu(gpu) if gpu else None) else "flashinfer-only"
    return native


#: what vLLM prints about its model runner (v1/worker/gpu_worker.py, config/vllm.py `use_v2_model_runner`)
V2_RUNNER_LINE, V1_RUNNER_LINE = r"Using V2 Model Runner", r"using the V1 model runner instead|VLLM_USE_V2_MODEL_RUNNER=0"


def _runner(text: str, version: tuple[int, int, int] | None, a: Architecture) -> str | None:
    """The model runner a V1-engine log ran, where it is not 0.33's V2: what the log prints, else its release's
    default for the model (`vllm_sampler.release_runner`)."""
    if re.search(V1_RUNNER_LINE, text):
        return "v1"
    if re.search(V2_RUNNER_LINE, text) or version is None:
        return None
    return None if release_runner(version, a.model_type) == "v2" else "v1"


#: the speculative config as the args line (a dict) or the engine config (`SpeculativeConfig(...)`) prints it; MTP
#: methods by their names before 0.11 unified them as "mtp" (deepseek_mtp, qwen3_next_mtp, glm4_moe_mtp, ...)
SPECULATIVE = r"speculative_config(?:=SpeculativeConfig\(|'?:\s*\{)([^)}]*)"


def _speculative(text: str) -> tuple[str, int]:
    """The drafter ("mtp" or "eagle3") and its tokens a step the log ran with (0: no speculative decoding); another
    method is an error. An EAGLE-3 drafter is taken as the released ones are shaped (`vllm_eagle3`)."""
    given = _first(text, SPECULATIVE)
    if not given:
        return "mtp", 0
    method = _first(given, r"method['\"]?(?::\s*|=)['\"]([\w-]+)")
    tokens = _first(given, r"num_spec(?:ulative)?_tokens['\"]?(?::\s*|=)(\d+)")
    if method is None or not (method in ("mtp", "eagle3") or method.endswith("_mtp")):
        raise InputError(f"the log's speculative decoding ({method or 'its method not printed'}) is not one memviz "
                         "models (vLLM's MTP and EAGLE-3)")
    return ("eagle3" if method == "eagle3" else "mtp"), int(tokens or 1)


def _logged_cache(kv: str, dtype: str | None) -> str:
    """memviz's KV format for the log's kv_cache_dtype (vLLM's names: `KV_CACHE_DTYPES`; fp8_e4m3 / fp8_e5m2 as
    fp8; auto as the model's dtype); another is an error."""
    if kv == "auto":
        return dtype or "bf16"
    if kv in ("bfloat16", "float16"):  # named beside float32 weights: vllm_dtype
        return {"bfloat16": "bf16", "float16": "fp16"}[kv]
    if kv.startswith("fp8") and kv != "fp8_per_token_head":
        return "fp8"
    named = {v: k for k, v in KV_CACHE_DTYPES.items() if v != "auto"}
    if kv not in named:
        raise InputError(f"the log's kv_cache_dtype {kv!r} is not one memviz models ({', '.join(['auto', *named])})")
    return named[kv]


def _first(text: str, pattern: str) -> str | None:
    m = re.search(pattern, text)
    return m.group(1) if m else None


def logged_gpu(text: str, gpu: str) -> str:
    """The caller's GPU with the CUDA total the log prints (V0's "total_gpu_memory (T GiB)", V1's "Free memory on
    device (F/T GiB)"), which vLLM's budget is taken from: it varies between drivers and under WSL2
    (`gpus.with_cuda_total`); the GPU as given where the log prints none."""
    g = get_gpu(gpu)
    total_gib = _first(text, CUDA_TOTAL_GIB)
    if total_gib is None:
        return g.key
    return with_cuda_total(get_gpu(g.key.partition("@")[0]), round(float(total_gib) * GiB)).key


def extensible(text: str, s: VllmSettings) -> bool:
    """Whether the log's pool was sized by the extensible KV cache: it prints its sizing, or a release from 0.34 on
    that does not say it was turned off; kv_cache_memory_bytes turns it off."""
    if s.args.get("kv_cache_memory_bytes"):
        return False
    if re.search(EXTENSIBLE_LINES, text):
        return True
    return s.version is not None and s.version >= EXTENSIBLE_SINCE and s.args.get("enable_extensible_kv_cache") is not False


def _utilization(args: dict[str, Any], measured: bool) -> float | None:
    """The log's gpu_memory_utilization; unset, vLLM's own default for a measured pool, else `UNLOGGED_UTILIZATION`."""
    value = args.get("gpu_memory_utilization")
    return float(value) if value else None if measured else UNLOGGED_UTILIZATION


def _auto_flashinfer(backend: str, a: Architecture, gpu: str) -> bool:
    """FlashInfer where it is vLLM's own choice for the model on the GPU ("auto" models it, `vllm_flashinfer`)."""
    return backend == "FLASHINFER" and runs_flashinfer(a, get_gpu(gpu).compute_capability, 2, "auto")


def _quantized_format(args: dict[str, Any], a: Architecture, weight_format: str | None) -> tuple[str | None, str | None]:
    """(the weight format the caller, the checkpoint's quantization_config or the log's quantization names, in that
    order, or None; the log's quantization method where none of them names one)."""
    method = str(args.get("quantization") or "None")
    fmt = weight_format or a.native_format or LOGGED_QUANTIZATION.get(method)
    return fmt, None if fmt or method == "None" else method


def quantization_note(text: str, a: Architecture, weight_format: str | None = None) -> str | None:
    """What to say where the log's quantization does not name a format and neither the model nor the caller gives one
    (compressed-tensors, modelopt_mixed, AWQ, GPTQ: the checkpoint's quantization_config decides)."""
    _, method = _quantized_format(read_vllm_settings(text).args, a, weight_format)
    if method is None:
        return None
    return (f"vLLM ran {method} quantization, which the checkpoint's config.json describes: import it or choose a "
            "weight format (CLI: --config, --weights); the weights count in the model's dtype until then")


def vllm_scenario(text: str, a: Architecture, gpu: str, weight_format: str | None = None) -> Scenario:
    """The scenario the log ran: its settings, the caller's model and GPU (with the CUDA total the log prints),
    vLLM's defaults for the rest."""
    s = read_vllm_settings(text)
    args = s.args
    kv = str(args.get("kv_cache_dtype", "auto"))
    if kv == "auto" and re.search(r"Using fp8\S* kv-cache for (GlmMoeDsaForCausalLM|Mistral Large 4)", text):
        kv = "fp8"  # the model's own default (model_executor/models/config.py `verify_and_update_config`, 0.34)
    dtype = LOGGED_DTYPES.get(str(args.get("dtype")))  # "auto" keeps the cache in the model's dtype
    cache = _logged_cache(kv, dtype)
    options: dict[str, Any] = {k: args[k] for k in ("max_num_seqs", "max_num_batched_tokens", "block_size",
                                                    "kv_cache_memory_bytes") if args.get(k) is not None}
    if args.get("enforce_eager"):
        options["enforce_eager"] = True
    if int(args.get("data_parallel_size") or 1) > 1:
        options["data_parallel_size"] = int(args["data_parallel_size"])
    if args.get("enable_expert_parallel"):
        options["enable_expert_parallel"] = True
    if args.get("enable_eplb"):  # the EPLBConfig vLLM prints beside it holds the defaults too
        options["enable_eplb"] = True
        options |= {k: args[k] for k, default in (("num_redundant_experts", 0), ("eplb_window_size", WINDOW_STEPS))
                    if args.get(k, default) != default}
    if args.get("enable_chunked_prefill") is False:
        options["enable_chunked_prefill"] = False
    method, drafted = _speculative(text)
    if drafted:
        options["num_speculative_tokens"] = drafted
        if method != "mtp":
            options["speculative_method"] = method
    if a.state_layers:  # prefix caching decides how many state pages a request keeps
        caching = args.get("enable_prefix_caching")
        if caching is None and re.search(r"Mamba cache mode is set to 'align'", text):
            caching = True
        if caching is None and s.version is not None and s.version < HYBRID_PREFIX_CACHING_SINCE:
            caching = False
        if isinstance(caching, bool):
            options["enable_prefix_caching"] = caching
    if s.version is not None and s.version < CUDAGRAPH_ESTIMATE_SINCE and not re.search(
            ESTIMATE_CUDAGRAPHS_ON, text):
        options["estimate_cudagraphs"] = False
    measured = extensible(text, s)
    if not measured:
        options["extensible_kv_cache"] = False
        options.setdefault("block_size", 16)
    gpu, v0 = logged_gpu(text, gpu), is_v0(text, s.version)
    if a.is_moe and (v0 or s.version is not None and s.version < PERSISTENT_MOE_WORKSPACE_SINCE):
        options["persistent_moe_workspace"] = False
    if v0 or s.version is not None and s.version < IN_FLIGHT_ADMISSION_SINCE:
        options["in_flight_admission"] = False
    if v0 or (s.version is not None and s.version < COMPILE_BENCHMARK_SINCE) or re.search(WARM_COMPILE, text):
        options["cold_compile"] = False
    if (m := re.search(LOGGED_BACKEND, text)) and m.group(1) in OTHER_BACKENDS and not _auto_flashinfer(m.group(1), a, gpu):
        options["attention_backend"] = m.group(1)
    runner = "v1" if v0 else _runner(text, s.version, a)  # V0's profile is modelled with V1's runner
    if runner:
        options["model_runner"] = runner
    if sampler := _sampler(text, s.version, gpu, v0, runner):
        options["sampler"] = sampler
    context = int(args.get("max_model_len") or a.max_position_embeddings or 4096)
    if v0:
        options |= _v0_batch_defaults(args, a, context)
    return Scenario(engine="vllm", gpu=gpu, weight_format=_quantized_format(args, a, weight_format)[0] or dtype or "bf16",
                    kv_format=cache, context_tokens=context,
                    tp=int(args.get("tensor_parallel_size") or 1), pp=int(args.get("pipeline_parallel_size") or 1),
                    gpu_memory_utilization=_utilization(args, measured),
                    options=tuple(sorted(options.items())))

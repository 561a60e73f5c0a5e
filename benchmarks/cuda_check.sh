#!/usr/bin/env bash
# memviz's CUDA checks as one script for a GPU machine: the GPU as CUDA and NVML report it, the CUDA probe
# tests, and the estimate-vs-measured matrix on tiny models and on real model shapes (random-initialised).
# Usage: OUT=folder bash benchmarks/cuda_check.sh   (python3 must hold torch with CUDA and transformers)
set -u
OUT=${OUT:-/tmp/memviz-cuda}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH=$PWD
py=${PYTHON:-python3}
{
  nvidia-smi --query-gpu=name,memory.total,memory.used,driver_version --format=csv
  "$py" - <<'PY'
import json, torch, transformers
free, total = torch.cuda.mem_get_info(0)
props = torch.cuda.get_device_properties(0)
info = {"torch": torch.__version__, "cuda": torch.version.cuda, "transformers": transformers.__version__,
        "name": props.name, "mem_get_info_total": total, "mem_get_info_free": free, "props_total": props.total_memory}
try:
    import pynvml
    pynvml.nvmlInit()
    h = pynvml.nvmlDeviceGetHandleByIndex(0)
    info["nvml_total"] = pynvml.nvmlDeviceGetMemoryInfo(h).total
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.bfloat16)
    (a @ a).sum().item()
    procs = pynvml.nvmlDeviceGetComputeRunningProcesses(h)
    info["nvml_processes"] = [(p.pid, p.usedGpuMemory) for p in procs]
    free2, _ = torch.cuda.mem_get_info(0)
    info["after_matmul_used_minus_reserved"] = (free - free2) - torch.cuda.memory_reserved(0)
except Exception as exc:  # report, do not stop the checks
    info["nvml_error"] = repr(exc)
print(json.dumps(info))
PY
} > "$OUT/env.txt" 2>&1
cat "$OUT/env.txt"
timeout 150 "$py" -m pytest -q -p no:cacheprovider -W ignore::pytest.PytestConfigWarning tests/probe/test_runner_cuda.py 2>&1 | tee "$OUT/pytest.txt"
timeout 330 "$py" benchmarks/bench_probe_accuracy.py --device cuda --dtypes bf16 --batches 1,8 --prompts 1024,8192 \
  --configs qwen2.5-7b,llama-3.1-8b,mistral-7b-v0.1,gemma-2-9b --raw "$OUT/runs.jsonl" --out "$OUT/matrix.md" 2>&1 | tail -30
timeout 90 "$py" benchmarks/bench_probe_accuracy.py --device cuda --dtypes bf16 --batches 1 --prompts 2048 \
  --configs qwen3-30b-a3b --raw "$OUT/runs_moe.jsonl" --out "$OUT/matrix_moe.md" 2>&1 | tail -8

"""Memory meters for the probe: process RSS on the CPU, allocator + NVML on CUDA.

CPU (Linux): /proc/self/status gives VmRSS and VmHWM (peak); writing "5" to
/proc/self/clear_refs resets VmHWM to the current RSS (proc(5)), and glibc's
malloc_trim(0) returns freed heap first, so each phase's peak is its own.
Elsewhere: psutil's rss (and Windows' peak_wset) when installed, else
resource.getrusage's ru_maxrss (KiB on Linux, bytes on macOS); those peaks
cannot be reset, which the probe reports.

CUDA: torch.cuda memory_allocated / max_memory_allocated / memory_reserved /
max_memory_reserved (the caching allocator) and NVML's per-process used memory,
which also sees the CUDA context and non-torch allocations (cuBLAS, NCCL). The
NVML baseline is taken before torch creates a context.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import sys
from dataclasses import dataclass


def _proc_status() -> dict[str, int] | None:
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            text = fh.read()
    except OSError:
        return None
    out = {}
    for key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"):
        m = re.search(key + r":\s+(\d+)\s+kB", text)
        if m:
            out[key] = int(m.group(1)) * 1024
    return out


@dataclass
class CPUMeter:
    """Process memory in bytes; `resettable` says whether per-phase peaks are exact."""

    resettable: bool = os.path.exists("/proc/self/clear_refs")

    def rss(self) -> int:
        st = _proc_status()
        if st:
            return st["VmRSS"]
        try:
            import psutil

            return int(psutil.Process().memory_info().rss)
        except ImportError:
            return self.peak()

    def peak(self) -> int:
        st = _proc_status()
        if st:
            return st["VmHWM"]
        try:
            import psutil

            info = psutil.Process().memory_info()
            return int(getattr(info, "peak_wset", info.rss))
        except ImportError:
            import resource

            maxrss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
            return int(maxrss if sys.platform == "darwin" else maxrss * 1024)

    def reset_peak(self) -> None:
        with contextlib.suppress(OSError, AttributeError):  # glibc only
            ctypes.CDLL("libc.so.6").malloc_trim(0)
        if self.resettable:
            try:
                with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
                    fh.write("5")
            except OSError:
                self.resettable = False

    def sample(self) -> dict[str, int]:
        return {"rss": self.rss()}

    # the CUDAMeter interface: on the CPU everything the process holds is its resident set
    def allocated(self) -> int:
        return self.rss()

    reserved = process_used = allocated

    def peak_allocated(self) -> int:
        return self.peak()

    peak_reserved = peak_allocated

    def synchronize(self) -> None:
        """Nothing to wait for: CPU ops have finished when they return."""


class NVML:
    """Per-process and whole-device used memory from NVML (None where unavailable)."""

    def __init__(self, index: int) -> None:
        self.handle = None
        try:
            import pynvml

            pynvml.nvmlInit()
            self._nvml = pynvml
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(index)
        except Exception:  # no pynvml, no driver, MIG without rights...
            self.handle = None

    def device_used(self) -> int | None:
        if self.handle is None:
            return None
        return int(self._nvml.nvmlDeviceGetMemoryInfo(self.handle).used)

    def process_used(self) -> int | None:
        if self.handle is None:
            return None
        try:
            for p in self._nvml.nvmlDeviceGetComputeRunningProcesses(self.handle):
                if p.pid == os.getpid() and p.usedGpuMemory is not None:
                    return int(p.usedGpuMemory)
        except Exception:
            return None
        return None

    def driver(self) -> str | None:
        if self.handle is None:
            return None
        v = self._nvml.nvmlSystemGetDriverVersion()
        return v.decode() if isinstance(v, bytes) else str(v)


class CUDAMeter:
    def __init__(self, torch, index: int, nvml: NVML, device_used_before: int | None) -> None:
        self.torch, self.index, self.nvml = torch, index, nvml
        self.device_used_before = device_used_before

    def process_used(self) -> int:
        """This process's device memory: NVML per-process, else device total − free − the baseline."""
        used = self.nvml.process_used()
        if used is not None:
            return used
        free, total = self.torch.cuda.mem_get_info(self.index)
        return total - free - (self.device_used_before or 0)

    def allocated(self) -> int:
        return int(self.torch.cuda.memory_allocated(self.index))

    def reserved(self) -> int:
        return int(self.torch.cuda.memory_reserved(self.index))

    def peak_allocated(self) -> int:
        return int(self.torch.cuda.max_memory_allocated(self.index))

    def peak_reserved(self) -> int:
        return int(self.torch.cuda.max_memory_reserved(self.index))

    def synchronize(self) -> None:
        self.torch.cuda.synchronize(self.index)

    def reset_peak(self) -> None:
        self.torch.cuda.synchronize(self.index)
        self.torch.cuda.empty_cache()
        self.torch.cuda.reset_peak_memory_stats(self.index)

    def sample(self) -> dict[str, int]:
        out = {"allocated": self.allocated(), "reserved": self.reserved()}
        used = self.nvml.process_used()
        if used is not None:
            out["nvml_process_used"] = used
        return out

"""How long memviz takes to refuse hostile GGUF headers (prints figures; no assertions).

    python benchmarks/bench_hostile_gguf.py
"""

import contextlib
import statistics
import struct
import tempfile
import time
from pathlib import Path

from memviz.core.errors import InputError
from memviz.core.importers.gguf_file import read_gguf

CASES = {
    "u8 array of 2**40 elements": (0, 9, struct.pack("<IQ", 0, 2**40)),
    "string array of 50 M entries": (0, 9, struct.pack("<IQ", 8, 50_000_000)),
    "string of 2**60 bytes": (0, 8, struct.pack("<Q", 2**60)),
    "2**40 tensors": (2**40, None, b""),
}


def main() -> None:
    folder = Path(tempfile.mkdtemp())
    for name, (tensors, kind, payload) in CASES.items():
        keys = [] if kind is None else [struct.pack("<Q", 1) + b"a" + struct.pack("<I", kind) + payload]
        path = folder / "m.gguf"
        path.write_bytes(b"GGUF" + struct.pack("<IQQ", 3, tensors, len(keys)) + b"".join(keys) + b"\0" * 64)
        times = []
        for _ in range(20):
            t0 = time.perf_counter()
            with contextlib.suppress(InputError):
                read_gguf(path)
            times.append((time.perf_counter() - t0) * 1e3)
        print(f"{name:32s} refused in {statistics.median(times):.2f} ms median, {max(times):.2f} ms max")


if __name__ == "__main__":
    main()

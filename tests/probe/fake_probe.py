"""A scripted stand-in for the probe, for client tests: python fake_probe.py MODE.

The llamacpp-* modes replay a real llama.cpp probe run (tests/data/probe/llamacpp_qwen2.5-0.5b_q4km.jsonl,
recorded with `memviz probe --engine llamacpp --preset qwen2.5-0.5b --weights Q4_K_M --context 1024
--parallel 2 --prompt 64 --new 8`) whole, or up to a phase where llama.cpp crashes or hangs, or with
garbage between its lines."""

import json
import sys
import threading
from pathlib import Path

RECORDED = Path(__file__).parents[1] / "data" / "probe" / "llamacpp_qwen2.5-0.5b_q4km.jsonl"


def say(event, **data):
    print(json.dumps({"v": 1, "event": event, **data}), flush=True)


mode = sys.argv[1]
say("start", pid=0, argv=sys.argv)
if mode == "ok":
    say("env", device="cpu", device_name="fake", torch="0", transformers="0", threads=1)
    for name in ("baseline", "runtime", "load", "warmup", "prefill", "decode"):
        say("phase", name=name, t_s=0.1, bytes={})
        say("sample", t_s=0.1, rss=100 * 2**20)
    m = {"weights": 100, "kv_cache": 10, "activations": 5, "overhead": 50, "peak": 165}
    say("result", partial=False, measured=m, estimate=m, timings={"ttft_s": 0.1, "decode_tokens_per_s": 5.0}, model="fake")
elif mode == "crash":
    print("Fatal Python error: Segmentation fault", file=sys.stderr, flush=True)
    sys.exit(139)
elif mode == "hang":
    threading.Event().wait()  # silent until the client's watchdog or Stop ends the process
elif mode == "oom":
    say("result", partial=True, phase_failed="prefill", measured={"weights": 100}, estimate={}, timings={},
        message="out of memory during prefill")
    sys.exit(3)
elif mode == "garbage":
    print("\x00\x01 not json at all {{{", flush=True)
    print('{"v": 9, "event": "result"}', flush=True)
    sys.exit(0)
elif mode == "bad_input":
    say("error", kind="bad_input", message="the probe needs torch and transformers", phase="setup")
    sys.exit(2)
elif mode.startswith("llamacpp-"):
    for line in RECORDED.read_text().splitlines()[1:]:
        event = json.loads(line)
        if mode == "llamacpp-crash" and event.get("name") == "prefill":
            print("Segmentation fault in llama_decode", file=sys.stderr, flush=True)
            sys.exit(139)
        if mode == "llamacpp-hang" and event.get("name") == "prefill":
            threading.Event().wait()
        if mode == "llamacpp-garbage":
            print("llama_decode: \x00\x7f {{{ not json", flush=True)
            print(line[: len(line) // 2], flush=True)  # a line cut in half
        print(line, flush=True)


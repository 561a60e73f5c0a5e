"""A stand-in for the probe, for client tests: python fake_probe.py MODE.

"ok" replays a real transformers probe run (tests/data/probe/transformers_gpt2_cpu.jsonl, recorded with
`memviz probe --config tests/data/probe/gpt2.json --device cpu --dtype fp32 --batch 2 --prompt 32 --new 4`);
"oom" replays it to the prefill and ends as the runner does when memory runs out there: a partial result
with the components measured so far (weights). The llamacpp-* modes replay a real llama.cpp probe run
(tests/data/probe/llamacpp_qwen2.5-0.5b_q4km.jsonl, recorded with `memviz probe --engine llamacpp
--preset qwen2.5-0.5b --weights Q4_K_M --context 1024 --parallel 2 --prompt 64 --new 8`) whole, or up to
a phase where llama.cpp crashes or hangs, or with garbage between its lines."""

import json
import sys
import threading
from pathlib import Path

DATA = Path(__file__).parents[1] / "data" / "probe"
RECORDED = DATA / "llamacpp_qwen2.5-0.5b_q4km.jsonl"
TRANSFORMERS = [json.loads(x) for x in (DATA / "transformers_gpt2_cpu.jsonl").read_text().splitlines()]


def replay(until: str | None = None) -> None:
    """The recorded transformers run's lines after its start, up to (not including) phase `until`."""
    for event in TRANSFORMERS[1:]:
        if until and event.get("event") == "phase" and event["name"] == until:
            return
        print(json.dumps(event), flush=True)


def say(event, **data):
    print(json.dumps({"v": 1, "event": event, **data}), flush=True)


mode = sys.argv[1]
say("start", pid=0, argv=sys.argv)
if mode == "ok":
    replay()
elif mode == "crash":
    print("Fatal Python error: Segmentation fault", file=sys.stderr, flush=True)
    sys.exit(139)
elif mode == "hang":
    threading.Event().wait()  # silent until the client's watchdog or Stop ends the process
elif mode == "oom":
    replay(until="prefill")
    final = TRANSFORMERS[-1]
    load = next(e for e in TRANSFORMERS if e.get("event") == "phase" and e["name"] == "load")
    measured = dict.fromkeys(final["measured"]) | {"weights": load["bytes"]["weights_storage"]}
    say("result", partial=True, phase_failed="prefill", measured=measured, timings={}, estimate=final["estimate"],
        scenario=final["scenario"], error_pct={}, message="out of memory during prefill: CPU RAM exhausted")
    sys.exit(3)
elif mode == "garbage":
    print("\x00\x01 not json at all {{{", flush=True)
    print('{"v": 9, "event": "result"}', flush=True)
    sys.exit(0)
elif mode == "bad_input":
    say("error", kind="bad_input", message="the probe needs torch and transformers", phase="setup")
    sys.exit(2)
elif mode == "trickle":  # bytes without a line end, forever: alive to the OS, silent to the protocol
    for _ in range(10_000):
        sys.stdout.write("x")
        sys.stdout.flush()
        threading.Event().wait(0.05)
elif mode == "endless-line":  # 5 MB without a line end, then nothing
    sys.stdout.write("y" * 5_000_000)
    sys.stdout.flush()
    threading.Event().wait()
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


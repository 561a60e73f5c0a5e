"""Write a random-initialised safetensors checkpoint for a config (`python -m memviz.probe.checkpoint`).

The probe runs this in a child process before a bitsandbytes (--quant) measurement of a --config or
--preset source: bitsandbytes quantizes while loading, so the probe needs weights on disk, and building
them in the measured process would leave the random model's freed heap in its RSS.

Usage: python -m memviz.probe.checkpoint CONFIG_JSON DTYPE FOLDER [--trust-remote-code]
"""

from __future__ import annotations

import json
import sys


def main(argv: list[str]) -> int:
    import torch
    from transformers import AutoModelForCausalLM

    from memviz.probe.runner import hf_config

    config_path, dtype, folder = argv[:3]
    with open(config_path, encoding="utf-8") as fh:
        cfg = json.load(fh)
    model = AutoModelForCausalLM.from_config(hf_config(cfg), dtype=getattr(torch, dtype),
                                             trust_remote_code="--trust-remote-code" in argv[3:])
    model.save_pretrained(folder)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))

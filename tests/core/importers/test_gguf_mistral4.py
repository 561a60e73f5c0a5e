"""A Mistral 4 GGUF as llama.cpp's converter writes it (architecture "mistral4", DeepSeek-V2's keys and tensors):
read as the decoder transformers builds, to the element."""

import json
import warnings
from pathlib import Path

import gguf
import numpy as np
import pytest

from memviz.core.importers.gguf_file import read_gguf
from memviz.core.inventory import parameter_count

HEADER = json.loads((Path(__file__).parents[2] / "data" / "llamacpp" / "mistral4_gguf_header.json").read_text())
#: the text config the header's file was converted from (its vision tower left out)
TEXT = dict(model_type="mistral4", vocab_size=1024, hidden_size=256, intermediate_size=512, moe_intermediate_size=128,
            num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=4, n_shared_experts=1, n_routed_experts=8,
            num_experts_per_tok=2, kv_lora_rank=64, q_lora_rank=96, qk_rope_head_dim=16, v_head_dim=32,
            qk_nope_head_dim=32, head_dim=48, qk_head_dim=48, n_group=1, topk_group=1, first_k_dense_replace=0)


def _write(path: Path) -> None:
    """The converter's metadata and tensor headers, the tensors zero."""
    meta = HEADER["metadata"]
    w = gguf.GGUFWriter(str(path), meta["general.architecture"][1], use_temp_file=False)
    for name, (kind, value) in meta.items():
        if name != "general.architecture":
            w.add_key_value(name, value, gguf.GGUFValueType(kind))
    for name, shape, kind in HEADER["tensors"]:
        dtype = np.float16 if kind == gguf.GGMLQuantizationType.F16 else np.float32
        w.add_tensor(name, np.zeros(list(reversed(shape)), dtype=dtype))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def test_a_mistral4_gguf_counts_what_transformers_builds(tmp_path):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    _write(tmp_path / "m4.gguf")
    a = read_gguf(tmp_path / "m4.gguf")
    with warnings.catch_warnings(), torch.device("meta"):
        warnings.simplefilter("ignore")
        model = transformers.Mistral4ForCausalLM(transformers.AutoConfig.for_model(**TEXT))
    assert a.model_type == "deepseek_v2" and parameter_count(a) == sum(p.numel() for p in model.parameters())
    assert not [w for w in a.warnings if "generic rules" in w]

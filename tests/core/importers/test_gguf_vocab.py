"""GGUF files without `{arch}.vocab_size`: the vocabulary comes from where llama.cpp takes it, and says so."""

import gguf
import numpy as np
import pytest

from memviz.core.errors import InputError
from memviz.core.importers.gguf_file import read_gguf


def _write(path, tokens: int | None, vocab_key: int | None, embd_rows: int = 300):
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(1)
    w.add_embedding_length(64)
    w.add_feed_forward_length(128)
    w.add_head_count(4)
    w.add_head_count_kv(4)
    if vocab_key:
        w.add_vocab_size(vocab_key)
    if tokens:
        w.add_tokenizer_model("llama")
        w.add_token_list([f"t{i}" for i in range(tokens)])
    w.add_tensor("token_embd.weight", np.zeros((embd_rows, 64), dtype=np.float16))
    w.add_tensor("blk.0.attn_q.weight", np.zeros((64, 64), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def test_vocabulary_from_the_token_list_as_llamacpp_does(tmp_path):
    a = read_gguf(_write(tmp_path / "m.gguf", tokens=300, vocab_key=None))
    assert a.vocab_size == 300 and not any("vocabulary" in w for w in a.warnings)


def test_vocabulary_from_the_embedding_rows_when_metadata_is_silent(tmp_path):
    a = read_gguf(_write(tmp_path / "m.gguf", tokens=None, vocab_key=None, embd_rows=320))
    assert a.vocab_size == 320
    assert any("rows of token_embd.weight" in w for w in a.warnings)


def test_vocabulary_key_is_used_and_named_without_a_token_list(tmp_path):
    a = read_gguf(_write(tmp_path / "m.gguf", tokens=None, vocab_key=310, embd_rows=320))
    assert a.vocab_size == 310 and any("llama.vocab_size" in w for w in a.warnings)


def test_no_vocabulary_anywhere_is_one_clear_error(tmp_path):
    w = gguf.GGUFWriter(str(tmp_path / "m.gguf"), "llama")
    w.add_block_count(1)
    w.add_embedding_length(64)
    w.add_head_count(4)
    w.add_tensor("blk.0.attn_q.weight", np.zeros((64, 64), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(InputError, match="lacks vocab_size"):
        read_gguf(tmp_path / "m.gguf")

"""Finding a GPU in the catalogue by the name a user types."""

import pytest

from memviz.core.errors import InputError
from memviz.core.gpus import get_gpu, gpu_pool
from memviz.core.units import GiB


@pytest.mark.parametrize(("typed", "key"), [
    ("h100-80g", "h100-80g"), ("H100 80GB", "h100-80g"), ("rtx 4090", "rtx4090"), ("RTX PRO 6000", "rtx-pro-6000"),
    ("A100 80GB", "a100-80g"), ("m4 max", "m4-max-128g"), ("h200", "h200"),
])
def test_a_gpu_is_found_by_its_key_or_the_words_of_its_name(typed, key):
    assert get_gpu(typed).key == key


def test_a_name_that_fits_several_gpus_names_them():
    with pytest.raises(InputError, match="ambiguous: a100-40g, a100-80g"):
        get_gpu("a100")


def test_entered_memory_and_pools():
    assert get_gpu("vram:24GiB").memory_bytes == 24 * GiB
    gpu, n = gpu_pool("h100-80gx4")
    assert (gpu.key, n) == ("h100-80g", 4)
    with pytest.raises(InputError, match="unknown GPU"):
        get_gpu("h999")

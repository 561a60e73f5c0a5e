"""Finding a GPU in the catalogue by the name a user types."""

import pytest

from memviz.core.errors import InputError
from memviz.core.gpus import GPU_GROUPS, GPUS, get_gpu, gpu_group, gpu_pool
from memviz.core.units import GiB, MiB


@pytest.mark.parametrize(("typed", "key"), [
    ("h100-80g", "h100-80g"), ("H100 80GB", "h100-80g"), ("rtx 4090", "rtx4090"), ("RTX PRO 6000", "rtx-pro-6000"),
    ("A100 80GB", "a100-80g"), ("m4 max", "m4-max-128g"), ("h200", "h200"),
    # as nvidia-smi and torch.cuda.get_device_name print them
    ("NVIDIA GeForce RTX 4090", "rtx4090"), ("NVIDIA H100 80GB HBM3", "h100-80g"), ("NVIDIA H100 PCIe", "h100-pcie"),
    ("NVIDIA A100-SXM4-80GB", "a100-80g"), ("Tesla V100-PCIE-32GB", "v100-32g"), ("NVIDIA GH200 480GB", "gh200"),
    ("NVIDIA RTX 6000 Ada Generation", "rtx6000-ada"), ("NVIDIA L40S", "l40s"), ("NVIDIA A10", "a10"),
    # a name that is exactly one GPU's model, beside longer ones
    ("RTX 4070", "rtx4070"), ("RTX 4070 Ti", "rtx4070ti"), ("rtx 3090", "rtx3090"), ("L40", "l40"),
    ("NVIDIA GB10", "dgx-spark"), ("DGX Spark", "dgx-spark"),
    ("RTX 4080", "rtx4080"), ("RTX 4080 SUPER", "rtx4080-super"), ("NVIDIA GeForce RTX 4070 Ti SUPER", "rtx4070ti-super"),
    ("NVIDIA GeForce RTX 4070 SUPER", "rtx4070-super"), ("NVIDIA GeForce RTX 3070", "rtx3070"), ("RTX 3080", "rtx3080-10g"),
    ("NVIDIA GeForce RTX 3080 Ti", "rtx3080ti"), ("NVIDIA RTX A4000", "rtx-a4000"), ("NVIDIA H800", "h800"),
    ("NVIDIA GeForce RTX 4090 D", "rtx4090d"), ("NVIDIA L20", "l20"), ("AMD Radeon RX 7900 XTX", "rx7900xtx"),
    ("NVIDIA RTX PRO 5000 Blackwell", "rtx-pro-5000"), ("NVIDIA RTX PRO 5000 72GB Blackwell", "rtx-pro-5000-72g"),
    ("NVIDIA RTX PRO 4000 Blackwell", "rtx-pro-4000"),
    ("Tesla P40", "p40"), ("Tesla P100-PCIE-16GB", "p100-16g"), ("Tesla V100-PCIE-16GB", "v100-16g"),
    ("NVIDIA A30", "a30"), ("NVIDIA B300 SXM6 AC", "b300"), ("B300", "b300"),
])
def test_a_gpu_is_found_by_its_key_or_the_words_of_its_name(typed, key):
    assert get_gpu(typed).key == key


def test_every_catalogue_gpu_is_found_by_its_key_label_and_device_names():
    for key, gpu in GPUS.items():
        assert {get_gpu(name).key for name in (key, gpu.label, *gpu.names)} == {key}


@pytest.mark.parametrize(("key", "smi_mib"), [
    # the "Memory-Usage" totals of public nvidia-smi outputs
    ("rtx4070", 12282), ("rtx4070ti", 12282), ("rtx5070", 12227), ("rtx5070ti", 16303), ("rtx5080", 16303),
    ("rtx5060ti-16g", 16311), ("rtx4060-8g", 8188), ("rtx3080-10g", 10240), ("rtx2080ti", 11264),
    ("rtx3090ti", 24564), ("rtx-a5000", 24564), ("rtx4000-ada", 20475), ("rtx5000-ada", 32760), ("a10", 23028),
    ("a40", 46068), ("l40", 46068), ("h100-pcie", 81559), ("h100-nvl", 95830), ("h20", 97871), ("gh200", 97871),
    # nvidia-smi --query-gpu=name,memory.total in public notes: "NVIDIA GeForce RTX 4080 SUPER, 16376 MiB", ...
    ("rtx4080-super", 16376), ("rtx4070ti-super", 16376), ("rtx4070-super", 12282), ("rtx3070", 8192),
    ("rtx3080ti", 12288), ("rtx-a4000", 16376), ("h800", 81559), ("p40", 24576), ("p100-16g", 16384),
    ("v100-16g", 16384), ("a30", 24576), ("b300", 275040),
    # "NVIDIA GeForce RTX 4090 D, 24,564 MiB", "NVIDIA L20, 46068 MiB", "NVIDIA RTX PRO 5000 Blackwell, 48935 MiB",
    # "NVIDIA RTX PRO 5000 72GB Blackwell, ..., 73415 MiB", "NVIDIA RTX PRO 4000 Blackwell, 24,467 MiB"
    ("rtx4090d", 24564), ("l20", 46068), ("rtx-pro-5000", 48935), ("rtx-pro-5000-72g", 73415), ("rtx-pro-4000", 24467),
    # "NVIDIA GB200, 189471 MiB", "NVIDIA GB300, 284208 MiB"
    ("gb200", 189471), ("gb300", 284208),
])
def test_totals_are_what_nvidia_smi_prints(key, smi_mib):
    assert get_gpu(key).memory_bytes == smi_mib * MiB


def test_a_name_that_fits_several_gpus_names_them():
    with pytest.raises(InputError, match="ambiguous: a100-40g, a100-80g"):
        get_gpu("a100")
    with pytest.raises(InputError, match="ambiguous: h100-80g, h100-pcie, h100-nvl"):
        get_gpu("h100")
    with pytest.raises(InputError, match="ambiguous: rtx4060ti-8g, rtx4060ti-16g"):
        get_gpu("4060 Ti")  # the 8 GB and the 16 GB card
    with pytest.raises(InputError, match="ambiguous: v100-32g, v100-16g"):
        get_gpu("V100")
    with pytest.raises(InputError, match="ambiguous: rtx-pro-5000, rtx-pro-5000-72g"):
        get_gpu("RTX PRO 5000")  # the 48 GB and the 72 GB card


def test_entered_memory_and_pools():
    assert get_gpu("vram:24GiB").memory_bytes == 24 * GiB
    gpu, n = gpu_pool("h100-80gx4")
    assert (gpu.key, n) == ("h100-80g", 4)
    with pytest.raises(InputError, match="unknown GPU"):
        get_gpu("h999")


def test_a_cuda_total_entered_after_the_gpu_replaces_the_catalogue_one_and_reads_back():
    """WSL2 reports an RTX 4080's whole 16,376 MiB to CUDA (kvcache-lab's vLLM 0.26 log: 15.99 GiB) where Linux
    keeps about half a GiB back: "rtx4080@15.99GiB" is the card with that total, its key and label read back."""
    native, wsl = get_gpu("rtx4080"), get_gpu("rtx4080@15.99GiB")
    assert native.cuda_total_bytes < 15.5 * GiB
    assert wsl.cuda_total_bytes == round(15.99 * GiB)
    assert (wsl.compute_capability, wsl.memory_bytes, wsl.label) == (native.compute_capability, native.memory_bytes,
                                                                     "RTX 4080 16GB @ 15.99GiB")
    assert get_gpu(wsl.key) == get_gpu(wsl.label) == get_gpu("RTX 4080 @ 15.99 GiB") == wsl
    assert gpu_pool("rtx4080@15.99GiBx2") == (wsl, 2)
    with pytest.raises(InputError, match="not within the RTX 4080 16GB's 15.99 GiB"):
        get_gpu("rtx4080@16GiB")
    with pytest.raises(InputError, match="cannot read a memory size"):
        get_gpu("rtx4080@")


@pytest.mark.parametrize(("key", "sms"), [
    # as torch's multi_processor_count prints them in public logs and Inductor kernels
    ("a10g", 80), ("h20", 78), ("b200", 148), ("rtx5090", 170), ("rtx-pro-6000", 188), ("dgx-spark", 48),
    # NVIDIA's whitepapers and datasheets
    ("rtx4090d", 114), ("l20", 92), ("rtx-pro-5000", 110), ("rtx-pro-4000", 70), ("gb200", 152), ("gb300", 152),
    ("b300", 148),
    ("h100-80g", 132), ("h100-pcie", 114), ("a100-80g", 108), ("l40s", 142), ("rtx4090", 128), ("t4", 40),
])
def test_sm_counts_are_torchs(key, sms):
    assert get_gpu(key).sm_count == sms


def test_every_nvidia_gpu_knows_its_sms_and_a_geforce_rate_follows_from_them():
    assert not {k for k, g in GPUS.items() if g.compute_capability and g.sm_count is None}
    assert get_gpu("rtx3070").bf16_flops == pytest.approx(81.25e12, rel=1e-4)  # 46 SMs x 1.725 GHz x 1,024
    assert get_gpu("vram:24GiB").sm_count is None
    assert get_gpu("rtx4090@23.5GiB").sm_count == 128


def test_the_rtx_pro_4500_has_the_cuda_total_torch_printed():
    """vllm-project/vllm PR #51590: nvidia-smi 32623 MiB, torch total_memory 33,689,829,376 B (31.38 GiB)."""
    g = get_gpu("NVIDIA RTX PRO 4500 Blackwell Server Edition")
    assert (g.key, g.memory_bytes, g.cuda_total_bytes, g.sm_count) == ("rtx-pro-4500", 32623 * MiB, 33689829376, 82)
    assert get_gpu("RTX PRO 6000").key == "rtx-pro-6000"


def test_cuda_totals_published_for_the_l20_and_the_rtx_4090_d():
    """torch's out-of-memory message on an L20: "total capacity: 44.53 GiB"; ComfyUI's system stats on an RTX 4090 D:
    vram_total 24,210 MiB (cudaMemGetInfo's total), the RTX 4090's 23.64 GiB to 0.01 GiB."""
    assert get_gpu("l20").cuda_total_bytes == round(44.53 * GiB)
    assert get_gpu("rtx4090d").cuda_total_bytes == 24210 * MiB
    assert round(get_gpu("rtx4090d").cuda_total_bytes / GiB, 2) == round(get_gpu("rtx4090").cuda_total_bytes / GiB, 2)


def test_a_radeon_card_is_on_the_consumer_shelf_with_the_total_rocm_smi_prints():
    """rocm-smi --showmeminfo vram: "VRAM Total Memory (B): 25753026560" on an RX 7900 XTX; ROCm's torch reports the
    same total, so no driver reservation is taken off (unlike an NVIDIA card's nvidia-smi total)."""
    g = get_gpu("rx7900xtx")
    assert (g.memory_bytes, g.cuda_total_bytes, g.compute_capability) == (25753026560, 25753026560, None)
    assert gpu_group(g) == gpu_group(get_gpu("rtx4090")) == GPU_GROUPS[0]
    assert gpu_group(get_gpu("rtx-pro-5000")) == gpu_group(get_gpu("rtx-pro-6000")) == GPU_GROUPS[1]
    assert gpu_group(get_gpu("l20")) == gpu_group(get_gpu("mi300x")) == GPU_GROUPS[2]

"""GPU catalogue: memory in bytes (the GiB/GB distinction kept), bandwidth and FLOP/s.

`memory_bytes` is the total the driver reports (nvidia-smi "MiB" x 2**20) where
known, else the datasheet capacity in its own unit; `label` is the marketing
name, whose "GB" is often neither. `cuda_total` is the smaller total CUDA itself
reports (`cudaMemGetInfo`, which vLLM multiplies by gpu_memory_utilization), taken
from published vLLM start-up logs ("total_gpu_memory (79.22GiB)", printed to 0.01 GiB) or read
on a real GPU by memviz's CUDA checks (benchmarks/cuda_check.sh). Bandwidth and dense tensor FLOP/s
(no sparsity) are the vendors' datasheet figures: BF16 for data-centre and workstation parts; for GeForce
cards the FP16-with-FP16-accumulate rate their whitepapers list, which is twice their BF16 (FP32
accumulate) rate. A higher peak only makes a prefill bound looser: speed bounds built on these figures
are lower bounds on time, never predictions. `compute_capability` is NVIDIA's (CUDA GPUs table,
developer.nvidia.com/cuda-gpus): engines pick their kernels by it (vLLM's MXFP4 MoE backend and its padding;
FP8 arithmetic from `FP8_NATIVE_CAPABILITY` on, below which vLLM runs FP8 weights on Marlin and transformers
dequantizes them). `sm_count` is what torch reports as `multi_processor_count` (engines size per-SM buffers by it):
NVIDIA's architecture whitepapers and datasheets (GeForce: the SMs of the tensor-rate rule), checked against torch's
device properties printed in public logs and Inductor kernels where found (A10G 80, H20 78, B200 148, RTX 5090 170,
RTX PRO 6000 188, GB10 48, GB200 and GB300 152, B300 148); AMD's CDNA 3 whitepaper for the MI300X's 304 compute units
(what ROCm reports).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from memviz.core.errors import InputError
from memviz.core.units import GB, GiB, MiB, parse_bytes

_SMI = "nvidia-smi total"
ENTERED = "entered by the user"  # the memory_source of a "vram:SIZE" GPU, of which nothing else is known

#: Memory the NVIDIA driver reserves on a GPU, outside what CUDA reports as total (`cudaMemGetInfo`): nvidia-smi -q
#: prints it as "FB Memory Usage / Reserved" (free = total - reserved - used). Published outputs: H100 80GB 328, 336,
#: 450, 454, 516, 551 MiB; A100 80GB 557, 763, 834; a 24,564-MiB card 354; a 49,140-MiB card 569; and the catalogue's
#: measured CUDA totals imply 430 (RTX 3090), 438 (H100), 522 (A100 40GB), 615 (H200), 762 (A100 80GB), 768 (A800).
#: The median, 516 MiB, stands in where a GPU's own CUDA total is not known (provenance "constant").
DRIVER_RESERVED_BYTES = 516 * MiB
#: Ada (compute capability 8.9) is the first NVIDIA architecture with FP8 tensor-core arithmetic
#: (vLLM `current_platform.supports_fp8`, transformers `FineGrainedFP8HfQuantizer.validate_environment`)
FP8_NATIVE_CAPABILITY = (8, 9)
#: Turing (7.5) is the oldest architecture the Marlin mixed-precision kernels run on (vLLM 0.33
#: kernels/linear/mixed_precision/marlin.py `get_min_capability` 75; gptqmodel 7.7.0 `_marlin_capability_supported`)
MARLIN_MIN_CAPABILITY = (7, 5)


@dataclass(frozen=True)
class GPU:
    key: str
    label: str
    memory_bytes: int
    bandwidth_bytes_per_s: float
    bf16_flops: float
    memory_source: str
    cuda_total: int | None = None  # torch.cuda.mem_get_info()[1], where a published engine log gives it
    usable_fraction: float = 1.0  # the share a GPU program may take (Apple: Metal's working-set limit)
    compute_capability: tuple[int, int] | None = None  # NVIDIA SM version; None: not an NVIDIA GPU, or unknown
    names: tuple[str, ...] = ()  # device names CUDA / nvidia-smi print where the label's words do not cover them
    sm_count: int | None = None  # streaming multiprocessors (AMD: compute units); None where not known

    @property
    def usable_bytes(self) -> int:
        return int(self.memory_bytes * self.usable_fraction)

    @property
    def cuda_total_bytes(self) -> int:
        """What CUDA reports as total, the most a process can allocate (vLLM budgets from it): measured where
        known; else, for an NVIDIA GPU, nvidia-smi's total less the driver's typical reservation; else the usable
        total."""
        if self.cuda_total:
            return self.cuda_total
        if self.compute_capability is not None and self.memory_source == _SMI:
            return self.usable_bytes - DRIVER_RESERVED_BYTES
        return self.usable_bytes

    def describe(self) -> str:
        usable = f" (usable {self.usable_bytes / GiB:.2f} GiB)" if self.usable_fraction < 1 else ""
        return f"{self.label}: {self.memory_bytes / GiB:.2f} GiB = {self.memory_bytes / GB:.2f} GB{usable}"


#: GeForce tensor rates: SMs x boost clock x 1,024 FP16 FLOP per clock and SM (dense, FP16 accumulate), the rate
#: NVIDIA's Turing, Ampere GA102, Ada and Blackwell whitepapers list (RTX 4090: 128 SMs x 2.52 GHz = 330 TFLOPS;
#: RTX 3090: 82 x 1.695 GHz = 142; RTX 2080 Ti: 68 x 1.545 GHz = 108)
_GEFORCE_FLOP_PER_CLOCK_SM = 1024


def _geforce(key: str, label: str, smi_mib: int, bandwidth: float, sms: int, boost_ghz: float,
             capability: tuple[int, int]) -> GPU:
    """A GeForce card whose tensor rate is its whitepaper's SMs x boost clock x 1,024."""
    return GPU(key, label, smi_mib * MiB, bandwidth, sms * boost_ghz * 1e9 * _GEFORCE_FLOP_PER_CLOCK_SM, _SMI,
               compute_capability=capability, sm_count=sms)


#: nvidia-smi totals are as printed in public nvidia-smi outputs (the "Memory-Usage" column's total); bandwidth is
#: the datasheet's (GeForce: data rate x bus width); `names` are the device names CUDA and nvidia-smi print
GPUS: dict[str, GPU] = {g.key: g for g in (
    # Turing and Volta have no bf16: their FP16 tensor rate (T4 and V100 datasheets); nvidia-smi prints 15360MiB on
    # a Tesla T4 and 32768MiB on a Tesla V100-SXM2-32GB in the public outputs found
    GPU("t4", "Tesla T4 16GB", 15360 * MiB, 320e9, 65e12, _SMI, round(14.56 * GiB),
        compute_capability=(7, 5), sm_count=40),
    GPU("v100-32g", "Tesla V100 32GB", 32768 * MiB, 900e9, 125e12, _SMI, compute_capability=(7, 0),
        names=("Tesla V100-SXM2-32GB", "Tesla V100-PCIE-32GB"), sm_count=80),
    # Pascal has no fast 16-bit arithmetic (P40: FP16 at 1/64 rate), so its FP32 rate stands in: llama.cpp computes
    # in FP32 there; the P100's FP16 is twice its FP32. nvidia-smi prints 24576MiB (Tesla P40) and 16384MiB
    # (Tesla P100-PCIE-16GB, Tesla V100-PCIE-16GB) in public outputs
    GPU("p40", "Tesla P40 24GB", 24576 * MiB, 346e9, 11.8e12, _SMI, compute_capability=(6, 1), sm_count=30),
    GPU("p100-16g", "Tesla P100 16GB", 16384 * MiB, 732e9, 18.7e12, _SMI, compute_capability=(6, 0),
        names=("Tesla P100-PCIE-16GB",), sm_count=56),
    GPU("v100-16g", "Tesla V100 16GB", 16384 * MiB, 900e9, 125e12, _SMI, compute_capability=(7, 0),
        names=("Tesla V100-PCIE-16GB", "Tesla V100-SXM2-16GB"), sm_count=80),
    _geforce("rtx2080ti", "RTX 2080 Ti 11GB", 11264, 616e9, 68, 1.545, (7, 5)),
    GPU("rtx3060-12g", "RTX 3060 12GB", 12288 * MiB, 360e9, 51e12, _SMI, compute_capability=(8, 6), sm_count=28),
    _geforce("rtx3070", "RTX 3070 8GB", 8192, 448e9, 46, 1.725, (8, 6)),
    _geforce("rtx3080-10g", "RTX 3080 10GB", 10240, 760e9, 68, 1.71, (8, 6)),
    _geforce("rtx3080ti", "RTX 3080 Ti 12GB", 12288, 912e9, 80, 1.665, (8, 6)),
    _geforce("rtx4060-8g", "RTX 4060 8GB", 8188, 272e9, 24, 2.46, (8, 9)),
    _geforce("rtx4060ti-8g", "RTX 4060 Ti 8GB", 8188, 288e9, 34, 2.535, (8, 9)),
    GPU("rtx4060ti-16g", "RTX 4060 Ti 16GB", 16380 * MiB, 288e9, 88e12, _SMI, compute_capability=(8, 9), sm_count=34),
    _geforce("rtx4070", "RTX 4070 12GB", 12282, 504e9, 46, 2.475, (8, 9)),
    _geforce("rtx4070ti", "RTX 4070 Ti 12GB", 12282, 504e9, 60, 2.61, (8, 9)),
    _geforce("rtx4070-super", "RTX 4070 SUPER 12GB", 12282, 504e9, 56, 2.475, (8, 9)),
    _geforce("rtx4070ti-super", "RTX 4070 Ti SUPER 16GB", 16376, 672e9, 66, 2.61, (8, 9)),
    GPU("rtx4080", "RTX 4080 16GB", 16376 * MiB, 717e9, 195e12, _SMI, compute_capability=(8, 9), sm_count=76),
    _geforce("rtx4080-super", "RTX 4080 SUPER 16GB", 16376, 736e9, 80, 2.55, (8, 9)),
    _geforce("rtx5060ti-16g", "RTX 5060 Ti 16GB", 16311, 448e9, 36, 2.572, (12, 0)),
    _geforce("rtx5070", "RTX 5070 12GB", 12227, 672e9, 48, 2.512, (12, 0)),
    _geforce("rtx5070ti", "RTX 5070 Ti 16GB", 16303, 896e9, 70, 2.452, (12, 0)),
    _geforce("rtx5080", "RTX 5080 16GB", 16303, 960e9, 84, 2.617, (12, 0)),
    # vllm #10517, PR #14447
    GPU("rtx3090", "RTX 3090 24GB", 24576 * MiB, 936e9, 142e12, _SMI, round(23.58 * GiB),
        compute_capability=(8, 6), sm_count=82),
    _geforce("rtx3090ti", "RTX 3090 Ti 24GB", 24564, 1008e9, 84, 1.86, (8, 6)),
    # CUDA totals where torch's out-of-memory message names the card ("GPU 0 has a total capacity of 23.64 GiB" on a
    # 24GB RTX 4090, 31.36 GiB on RTX 5090s, 14.56 GiB on a T4, 44.42 GiB on an A40, in public notes): to 0.01 GiB
    GPU("rtx4090", "RTX 4090 24GB", 24564 * MiB, 1008e9, 330e12, _SMI, round(23.64 * GiB),
        compute_capability=(8, 9), sm_count=128),
    GPU("rtx5090", "RTX 5090 32GB", 32607 * MiB, 1792e9, 419e12, _SMI, round(31.36 * GiB),
        compute_capability=(12, 0), sm_count=170),
    # the RTX 4090 sold in China: 114 of the AD102's SMs at the RTX 4090's 2.52 GHz boost and memory; nvidia-smi
    # prints 24,564 MiB on it (four cards, driver 580.105.08, in a public hardware inventory) and ComfyUI's system
    # stats 24,210 MiB as torch's total (cudaMemGetInfo), the RTX 4090's 23.64 GiB
    GPU("rtx4090d", "RTX 4090 D 24GB", 24564 * MiB, 1008e9, 114 * 2.52e9 * _GEFORCE_FLOP_PER_CLOCK_SM, _SMI,
        24210 * MiB, compute_capability=(8, 9), names=("NVIDIA GeForce RTX 4090 D",), sm_count=114),
    GPU("l4", "L4 24GB", 23034 * MiB, 300e9, 121e12, _SMI, compute_capability=(8, 9), sm_count=58),
    GPU("a10", "A10 24GB", 23028 * MiB, 600e9, 125e12, _SMI, compute_capability=(8, 6), sm_count=72),
    GPU("a10g", "A10G 24GB", 23028 * MiB, 600e9, 125e12, _SMI, compute_capability=(8, 6), sm_count=80),
    # workstation cards: NVIDIA's datasheets give tensor throughput as sparse FP16 (Ampere), sparse FP8 (Ada) or
    # FP4 (Blackwell); dense 16-bit is a half (Ampere), a quarter (Ada) or an eighth (Blackwell) of it
    GPU("rtx-a4000", "RTX A4000 16GB", 16376 * MiB, 448e9, 76.7e12, _SMI, compute_capability=(8, 6), sm_count=48),
    GPU("rtx-a5000", "RTX A5000 24GB", 24564 * MiB, 768e9, 111e12, _SMI, compute_capability=(8, 6), sm_count=64),
    GPU("rtx4000-ada", "RTX 4000 Ada 20GB", 20475 * MiB, 360e9, 76.7e12, _SMI, compute_capability=(8, 9),
        names=("NVIDIA RTX 4000 Ada Generation", "NVIDIA RTX 4000 SFF Ada Generation"), sm_count=48),
    GPU("rtx5000-ada", "RTX 5000 Ada 32GB", 32760 * MiB, 576e9, 261e12, _SMI, compute_capability=(8, 9),
        names=("NVIDIA RTX 5000 Ada Generation",), sm_count=100),
    GPU("rtx-a6000", "RTX A6000 48GB", 49140 * MiB, 768e9, 155e12, _SMI, compute_capability=(8, 6), sm_count=84),
    GPU("a40", "A40 48GB", 46068 * MiB, 696e9, 149.7e12, _SMI, round(44.42 * GiB),
        compute_capability=(8, 6), sm_count=84),
    GPU("l40", "L40 48GB", 46068 * MiB, 864e9, 181e12, _SMI, compute_capability=(8, 9), sm_count=142),
    # CUDA total: a vLLM 0.10.2 start-up on eight L40S ("Free memory on device (43.93/44.42 GiB)", found in an index
    # without its repository; nvidia-smi printed 46068MiB on the same cards), the A40's total on the same board size
    GPU("l40s", "L40S 48GB", 46068 * MiB, 864e9, 362e12, _SMI, round(44.42 * GiB),
        compute_capability=(8, 9), sm_count=142),
    GPU("rtx6000-ada", "RTX 6000 Ada 48GB", 49140 * MiB, 960e9, 364e12, _SMI, compute_capability=(8, 9),
        names=("NVIDIA RTX 6000 Ada Generation",), sm_count=142),
    # nvidia-smi 32623 MiB and CUDA's total 33,689,829,376 B (torch total_memory), as vllm-project/vllm PR #51590 prints
    # them for eight Server Edition cards; 16-bit rate: 82 SMs x 2.617 GHz x 1,024, an eighth of the FP4 sparse figure
    GPU("rtx-pro-4500", "RTX PRO 4500 Blackwell 32GB", 32623 * MiB, 896e9, 220e12, _SMI, 33689829376,
        compute_capability=(12, 0), sm_count=82, names=("NVIDIA RTX PRO 4500 Blackwell",
                                                        "NVIDIA RTX PRO 4500 Blackwell Server Edition")),
    # nvidia-smi prints 24467 MiB on RTX PRO 4000 Blackwell cards (driver 580.159.04, public benchmark notes): GB203
    # with 70 SMs, 672 GB/s; 16-bit rate 70 SMs x 2.617 GHz boost x 1,024
    GPU("rtx-pro-4000", "RTX PRO 4000 Blackwell 24GB", 24467 * MiB, 672e9, 70 * 2.617e9 * _GEFORCE_FLOP_PER_CLOCK_SM, _SMI,
        compute_capability=(12, 0), sm_count=70, names=("NVIDIA RTX PRO 4000 Blackwell",)),
    # GB202 with 110 SMs, 1,344 GB/s in both sizes; NVIDIA's 2,064 AI TOPS (FP4 sparse) / 8 for dense 16 bit.
    # nvidia-smi: 48935 MiB (drivers 580.126 - 590.48, several public notes) and 73415 MiB on the 72GB card
    GPU("rtx-pro-5000", "RTX PRO 5000 Blackwell 48GB", 48935 * MiB, 1344e9, 258e12, _SMI, compute_capability=(12, 0),
        sm_count=110, names=("NVIDIA RTX PRO 5000 Blackwell",)),
    GPU("rtx-pro-5000-72g", "RTX PRO 5000 Blackwell 72GB", 73415 * MiB, 1344e9, 258e12, _SMI,
        compute_capability=(12, 0), sm_count=110, names=("NVIDIA RTX PRO 5000 72GB Blackwell",)),
    GPU("rtx-pro-6000", "RTX PRO 6000 Blackwell 96GB", 97887 * MiB, 1792e9, 500e12, _SMI, compute_capability=(12, 0),
        names=("NVIDIA RTX PRO 6000 Blackwell Workstation Edition",
               "NVIDIA RTX PRO 6000 Blackwell Server Edition"), sm_count=188),
    # the AD102 part sold in China for servers: 92 SMs, 864 GB/s, 119.5 TFLOPS dense FP16 / BF16 tensor; nvidia-smi
    # prints 46068 MiB (drivers 550.127 - 580.65, public notes) and torch's out-of-memory message a total capacity of
    # 44.53 GiB
    GPU("l20", "L20 48GB", 46068 * MiB, 864e9, 119.5e12, _SMI, round(44.53 * GiB), compute_capability=(8, 9),
        sm_count=92),
    # nvidia-smi prints 24576MiB on an A30 (HBM2, 933 GB/s; BF16 165 TFLOPS dense in its datasheet)
    GPU("a30", "A30 24GB", 24576 * MiB, 933e9, 165e12, _SMI, compute_capability=(8, 0), sm_count=56),
    # vLLM logs: 39.49 GiB
    GPU("a100-40g", "A100 40GB", 40960 * MiB, 1555e9, 312e12, _SMI, round(39.49 * GiB), compute_capability=(8, 0),
        names=("NVIDIA A100-SXM4-40GB", "NVIDIA A100-PCIE-40GB"), sm_count=108),
    # CUDA total of an A100-SXM4-80GB: deviceQuery, CUDA 12.5 driver (thamada/nvidia-smi nvsim/A100SXMx4_deviceQuery.py);
    # other drivers report 79.15-79.32 GiB
    GPU("a100-80g", "A100 80GB", 81920 * MiB, 2039e9, 312e12, _SMI, 85100068864, compute_capability=(8, 0),
        names=("NVIDIA A100-SXM4-80GB", "NVIDIA A100 80GB PCIe"), sm_count=108),
    # the A100 sold in China (NVLink cut to 400 GB/s), 80 GB HBM2e; bandwidth of NVIDIA's A800 SXM4 datasheet;
    # CUDA total: vLLM 0.11.0 on an eight-GPU A800 server, CUDA driver 13.0 ("Free memory on device (78.64/79.25
    # GiB)", github.com/yuy4o/llm inference/logs/Seed-OSS-36B-Instruct_vllm.log); the same server's vLLM 0.9 logs
    # of August 2025, an older driver, printed total_gpu_memory 79.14 GiB
    GPU("a800-80g", "A800 80GB", 81920 * MiB, 2039e9, 312e12, _SMI, round(79.25 * GiB), compute_capability=(8, 0),
        names=("NVIDIA A800-SXM4-80GB", "NVIDIA A800 80GB PCIe"), sm_count=108),
    # vllm PR #10511
    GPU("h100-80g", "H100 SXM 80GB", 81559 * MiB, 3350e9, 989e12, _SMI, round(79.22 * GiB), compute_capability=(9, 0),
        names=("NVIDIA H100 80GB HBM3",), sm_count=132),
    # the H100 sold in China (NVLink cut), memory and compute as the SXM part's; nvidia-smi prints 81559MiB
    GPU("h800", "H800 80GB", 81559 * MiB, 3350e9, 989e12, _SMI, compute_capability=(9, 0), sm_count=132),
    # the PCIe card's label leaves out its 80 GB so that "H100 80GB" keeps naming the SXM part
    GPU("h100-pcie", "H100 PCIe", 81559 * MiB, 2000e9, 756e12, _SMI, compute_capability=(9, 0), sm_count=114),
    GPU("h100-nvl", "H100 NVL 94GB", 95830 * MiB, 3900e9, 835e12, _SMI, compute_capability=(9, 0), sm_count=132),
    # the H100 sold in China with its compute cut: 96 GB HBM3, 148 TFLOPS BF16
    GPU("h20", "H20 96GB", 97871 * MiB, 4000e9, 148e12, _SMI, compute_capability=(9, 0), sm_count=78),
    # the Grace Hopper superchip's GPU: 96 GB HBM3 (its LPDDR5X is host memory); nvidia-smi names it after the
    # superchip's total
    GPU("gh200", "GH200 96GB", 97871 * MiB, 4000e9, 989e12, _SMI, compute_capability=(9, 0),
        names=("NVIDIA GH200 480GB", "NVIDIA GH200 120GB"), sm_count=132),
    # torch.cuda.mem_get_info on an H200 SXM (driver 580.159.04, CUDA 13.0; docs/accuracy-cuda.md)
    GPU("h200", "H200 141GB", 143771 * MiB, 4800e9, 989e12, _SMI, 150109880320,
        compute_capability=(9, 0), sm_count=132),
    # nvidia-smi on B200s (driver 570.172.08, CUDA 12.8): 183,359 MiB = 179.06 GiB; the datasheet's "180GB" is binary
    GPU("b200", "B200 180GB", 183359 * MiB, 8000e9, 2250e12, _SMI, compute_capability=(10, 0), sm_count=148),
    # Blackwell Ultra: nvidia-smi prints 275040MiB on B300 SXM6 AC boards (CUDA compute capability 10.3); 16-bit
    # rate and bandwidth taken as the B200's (its gains are in FP4); 148 SMs as a published kernel note measured
    # them ("B300 (148 SMs)", cudaOccupancyMaxActiveClusters)
    GPU("b300", "B300 288GB", 275040 * MiB, 8000e9, 2250e12, _SMI, compute_capability=(10, 3),
        names=("NVIDIA B300 SXM6 AC",), sm_count=148),
    # the Grace Blackwell superchips' GPUs: nvidia-smi prints 189471 MiB on GB200 (drivers 580.95 - 590.48) and
    # 284208 MiB on GB300 in public notes; 152 SMs each ("NVIDIA GB200 (152 SMs)", "GB300 (152 SMs)", from torch's
    # device properties); NVIDIA's GB200 NVL72 figures (360 PFLOPS FP16 / BF16 with sparsity for 72 GPUs) give 2.5
    # PFLOPS dense a GPU, the same for GB300; 8 TB/s of HBM3e each
    GPU("gb200", "GB200 186GB", 189471 * MiB, 8000e9, 2500e12, _SMI, compute_capability=(10, 0),
        names=("NVIDIA GB200",), sm_count=152),
    GPU("gb300", "GB300 288GB", 284208 * MiB, 8000e9, 2500e12, _SMI, compute_capability=(10, 3),
        names=("NVIDIA GB300",), sm_count=152),
    # DGX Spark: GB10 with 128 GiB of LPDDR5x shared with its CPU; CUDA reports 121.69 GiB in published vLLM and torch
    # messages ("Free memory on device (115.95/121.69 GiB)"; some GB10 systems print 121.63 or 119.6-119.7), which is
    # what a process can take; NVIDIA's "1 petaFLOP" is sparse FP4, dense 16-bit an eighth of it
    GPU("dgx-spark", "DGX Spark GB10 128GB (unified)", 128 * GiB, 273e9, 125e12, "NVIDIA spec, unified",
        round(121.69 * GiB), compute_capability=(12, 1), names=("NVIDIA GB10",), sm_count=48),
    # rocm-smi "VRAM Total Memory (B)" of an MI300X, the total torch.cuda.mem_get_info reports on ROCm too
    GPU("mi300x", "MI300X 192GB", 205822885888, 5300e9, 1307e12, "rocm-smi total", sm_count=304),
    # rocm-smi "VRAM Total Memory (B)" of a Radeon RX 7900 XTX as most public outputs print it (others 25,752,035,328
    # to 25,757,220,864); AMD's 96 compute units, 960 GB/s and 123 TFLOPS FP16 (RDNA 3 launch specifications)
    GPU("rx7900xtx", "Radeon RX 7900 XTX 24GB", 25753026560, 960e9, 123e12, "rocm-smi total", sm_count=96,
        names=("AMD Radeon RX 7900 XTX",)),
    # Apple unified memory: Metal lets one process keep 3/4 of it resident by default on these sizes
    # (MTLDevice.recommendedMaxWorkingSetSize, which llama.cpp's Metal backend prints at start-up: 51539.61 MB on an M2
    # Max with 64 GB, 103079.22 MB on an M4 Max with 128 GB; 16 and 24 GB Macs print 2/3); the 38-core M2 Max: Apple's
    # 13.6 FP32 TFLOPS, FP16 twice it as for the other Apple entries
    GPU("m2-max-64g", "Apple M2 Max 64GB (unified)", 64 * GiB, 400e9, 27.2e12, "Apple spec, unified", None, 0.75),
    GPU("m3-max-128g", "Apple M3 Max 128GB (unified)", 128 * GiB, 400e9, 28e12, "Apple spec, unified", None, 0.75),
    GPU("m4-max-128g", "Apple M4 Max 128GB (unified)", 128 * GiB, 546e9, 34e12, "Apple spec, unified", None, 0.75),
    GPU("m2-ultra-192g", "Apple M2 Ultra 192GB (unified)", 192 * GiB, 800e9, 54e12, "Apple spec, unified", None, 0.75),
    # plain CPU RAM: dual-channel DDR5-5600 (2 x 8 bytes x 5.6e9 transfers/s); FLOP/s of 8 AVX-512 cores
    GPU("cpu-ram-64g", "CPU RAM 64 GiB (DDR5 dual channel)", 64 * GiB, 89.6e9, 2e12, "DDR5-5600 x 2 channels"),
    GPU("cpu-ram-128g", "CPU RAM 128 GiB (DDR5 dual channel)", 128 * GiB, 89.6e9, 2e12, "DDR5-5600 x 2 channels"),
)}
#: words a typed or printed device name carries that no catalogue label needs
_VENDOR_WORDS = frozenset({"nvidia", "geforce"})
_SIZE_WORD = re.compile(r"\d+(gb|gib)$")


#: the shelves of the app's GPU menu, in its order
GPU_GROUPS = ("GeForce and Radeon", "Workstation", "Data centre", "Unified memory and CPU RAM")


def gpu_group(g: GPU) -> str:
    """The shelf (one of `GPU_GROUPS`) a GPU sits on: GeForce and Radeon cards, workstation cards, data-centre parts, and
    memory shared with a CPU (Apple, DGX Spark, plain RAM)."""
    if g.usable_fraction < 1 or g.memory_source != _SMI and "rocm" not in g.memory_source:
        return GPU_GROUPS[3]
    if g.key.startswith("rx"):
        return GPU_GROUPS[0]
    if g.key.startswith("rtx"):
        return GPU_GROUPS[1] if any(w in g.key for w in ("-a", "ada", "pro")) else GPU_GROUPS[0]
    return GPU_GROUPS[2]


def get_gpu(key: str) -> GPU:
    """A catalogue GPU by key, by the device name CUDA prints, or by a unique part of its name (a name that is
    exactly one GPU's model wins over longer ones), or a memory size entered as "vram:24GiB" (no bandwidth known:
    speed bounds are left out); "GPU@TOTAL" is that GPU with the CUDA total a log of the user's printed
    (`with_cuda_total`)."""
    if "@" in key:
        name, _, total = key.rpartition("@")
        return with_cuda_total(get_gpu(name), parse_bytes(total))
    k = key.strip().lower()
    if k.startswith("vram:"):
        size = parse_bytes(key.strip()[5:])
        if not 0 < size <= 1 << 50:
            raise InputError(f"entered VRAM must be between 1 byte and 1 PiB, got {key!r}")
        return GPU(k, f"{key.strip()[5:]} entered", size, float("nan"), float("nan"), ENTERED)
    if k in GPUS:
        return GPUS[k]
    words = _words(key)
    named = [g for g in GPUS if any(_words(n) == words for n in GPUS[g].names)]
    matches = named or [g for g in GPUS if k in g or k in GPUS[g].label.lower()]
    if not matches:  # "H100 80GB", "NVIDIA GeForce RTX 4090": every word of the name within the key, label or names
        matches = [g for g in GPUS if words and all(w in _text(GPUS[g]) for w in words)]
    if len(matches) > 1:  # "RTX 4070" is the RTX 4070, not the RTX 4070 Ti; "B300 288GB" the B300, not the GB300
        exact = [g for g in matches if set(words) in (set(_words(GPUS[g].label)), _model_words(GPUS[g]))]
        matches = exact if len(exact) == 1 else matches
    if len(matches) == 1:
        return GPUS[matches[0]]
    if matches:
        raise InputError(f"GPU {key!r} is ambiguous: {', '.join(matches)}")
    raise InputError(f"unknown GPU {key!r}; known: {', '.join(GPUS)}, or vram:SIZE (e.g. vram:24GiB); GPU@TOTAL "
                     "sets the CUDA total a log printed (rtx4080@15.99GiB)")


def with_cuda_total(g: GPU, total_bytes: int) -> GPU:
    """`g` as a machine whose CUDA reports `total_bytes` as total: vLLM's "Free memory on device (F/T GiB)" prints
    it. It is not one figure per GPU model: under WSL2 CUDA reports the whole 16,376 MiB of an RTX 4080 (15.99 GiB,
    kvcache-lab's vLLM 0.26 runs) where Linux drivers keep about 0.5 GiB back, and DGX Spark systems print 119.6 to
    121.69 GiB. The key and label carry the total ("rtx4080@15.99GiB", "RTX 4080 16GB @ 15.99GiB"), which
    `get_gpu` reads back."""
    if not 0 < total_bytes <= g.memory_bytes:
        raise InputError(f"a CUDA total of {total_bytes / GiB:.2f} GiB is not within the {g.label}'s "
                         f"{g.memory_bytes / GiB:.2f} GiB")
    total = f"{total_bytes / GiB:.2f}GiB"
    return replace(g, key=f"{g.key}@{total}", label=f"{g.label} @ {total}", cuda_total=total_bytes)


def _words(name: str) -> list[str]:
    return [w for w in re.split(r"[\s_-]+", name.strip().lower()) if w and w not in _VENDOR_WORDS]


def _text(g: GPU) -> str:
    return " ".join((g.key, g.label.lower(), *(n.lower() for n in g.names)))


def _model_words(g: GPU) -> set[str]:
    """The label's words without its memory size: {"rtx", "4070"} for "RTX 4070 12GB"."""
    return {w for w in _words(g.label) if not _SIZE_WORD.fullmatch(w)}


def gpu_pool(spec: str) -> tuple[GPU, int]:
    """"h100-80gx4" -> (the H100, 4): N of the same GPU in one machine; a plain key is one."""
    k = spec.strip().lower()
    head, sep, count = k.rpartition("x")
    if sep and head and count.isdigit() and not k.startswith("vram:") and k not in GPUS:
        n = int(count)
        if not 1 <= n <= 64:
            raise InputError(f"{spec!r}: between 1 and 64 GPUs")
        return get_gpu(head), n
    return get_gpu(spec), 1

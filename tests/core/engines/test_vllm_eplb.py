"""vLLM's expert-parallel load balancer: redundant experts spread evenly over the EP ranks, the balancer's maps and
one layer's expert buffer on every GPU, inside the weights vLLM reports; its refusals as vLLM's."""

import numpy as np
import pytest

from memviz.core.engines import get_engine, vllm_eplb
from memviz.core.errors import InputError
from memviz.core.estimate import Scenario, estimate, inputs
from memviz.core.formats import get_weight_format, tensor_bytes
from memviz.core.inventory import Role
from memviz.core.presets import get_preset

DSV3 = get_preset("deepseek-v3").architecture()
EP8 = {"data_parallel_size": 8, "enable_expert_parallel": True}


def _scenario(a=DSV3, **options):
    return Scenario(engine="vllm", gpu="h200", weight_format=a.native_format, context_tokens=32768,
                    options={**EP8, **options})


def _eplb(**options) -> dict:
    return get_engine("vllm").resolve({**EP8, "enable_eplb": True, **options})


def test_state_holds_replica_slots_and_a_thousand_steps_of_load_per_moe_layer():
    layers = sum(DSV3.moe_layers)  # 58 of 61
    per_layer = 256 * 1024 * 8 + 1000 * 288 * 4 + 288 * 8 + 288 * 4 + 256 * 8 + 256 * 8
    assert vllm_eplb.state_bytes(DSV3, layers, _eplb(num_redundant_experts=32)) == layers * per_layer


def test_a_longer_load_window_keeps_more_steps():
    """--eplb-config window_size: an int32 per physical expert, MoE layer and step (EplbState.add_model)."""
    layers = sum(DSV3.moe_layers)
    longer = vllm_eplb.state_bytes(DSV3, layers, _eplb(eplb_window_size=10_000))
    assert longer - vllm_eplb.state_bytes(DSV3, layers, _eplb()) == layers * 9_000 * 256 * 4
    e = estimate(DSV3, _scenario(enable_eplb=True, eplb_window_size=10_000, num_redundant_experts=32))
    assert "--eplb-config '{\"num_redundant_experts\": 32, \"window_size\": 10000}'" in e.launch_command()
    with pytest.raises(InputError, match="eplb_window_size is set but EPLB is not enabled"):
        estimate(DSV3, _scenario(eplb_window_size=10))


def _layer_expert_bytes() -> int:
    """One MoE layer's 256 experts as the checkpoint stores them (FP8 with block scales: about 11.3 GB)."""
    first = DSV3.moe_layers.index(True)
    return sum(nbytes for t, _, nbytes in tensor_bytes(DSV3, get_weight_format(DSV3.native_format))
               if t.role is Role.EXPERT and t.layer == first)


def test_redundant_experts_and_the_buffer_join_the_weights():
    plain = estimate(DSV3, _scenario()).bytes["weights"]
    balanced = estimate(DSV3, _scenario(enable_eplb=True)).bytes["weights"]
    redundant = estimate(DSV3, _scenario(enable_eplb=True, num_redundant_experts=32)).bytes["weights"]
    x = inputs(DSV3, _scenario(enable_eplb=True, num_redundant_experts=32), np.int64(32768), np.int64(1))
    assert get_engine("vllm").expert_share(x) * 256 == 36  # (256 + 32) / 8 whole experts a GPU
    layer, moe = _layer_expert_bytes(), sum(DSV3.moe_layers)
    state = {r: vllm_eplb.state_bytes(DSV3, moe, _eplb(num_redundant_experts=r)) for r in (0, 32)}
    assert balanced - plain == pytest.approx(state[0] + layer * 32 / 256)  # the state and a 32-expert buffer
    # four more experts in each of the 58 MoE layers and in the buffer, and a wider load window
    assert redundant - balanced == pytest.approx(layer * 4 / 256 * (moe + 1) + state[32] - state[0])


def test_models_vllm_does_not_balance_run_without_it():
    a = get_preset("gpt-oss-120b").architecture()
    sc = Scenario(engine="vllm", gpu="h200", weight_format=a.native_format, context_tokens=8192,
                  options={**EP8, "enable_eplb": True})
    assert a.model_type not in vllm_eplb.MODEL_TYPES
    assert estimate(a, sc).bytes["weights"] == estimate(a, sc.with_changes(options=EP8)).bytes["weights"]


@pytest.mark.parametrize("options, message", [
    ({"num_redundant_experts": 32}, "EPLB is not enabled"),
    ({"enable_eplb": True, "enable_expert_parallel": False}, "needs enable_expert_parallel"),
    ({"enable_eplb": True, "data_parallel_size": 1}, "more than one GPU"),
    ({"enable_eplb": True, "num_redundant_experts": 4}, "260 experts .* over 8 EP ranks"),
])
def test_vllm_refusals(options, message):
    with pytest.raises(InputError, match=message):
        estimate(DSV3, _scenario(**options))


def test_launch_command_and_label_say_so():
    e = estimate(DSV3, _scenario(enable_eplb=True, num_redundant_experts=32))
    assert "--enable-expert-parallel --enable-eplb --eplb-config '{\"num_redundant_experts\": 32}'" in e.launch_command()
    vllm = get_engine("vllm")
    assert vllm.split_labels(vllm.resolve({**EP8, "enable_eplb": True})) == ("DP8", "EP", "EPLB")
    assert vllm.split_labels(vllm.resolve({**EP8, "enable_eplb": True, "num_redundant_experts": 32}))[-1] == "EPLB R32"


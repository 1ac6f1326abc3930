"""One device rule for every op and operator, torch's: tensors of different devices raise
DeviceError, never move implicitly; a 0-dim cpu tensor joins any device as a scalar."""

import pytest

import mpsim

C = mpsim.randn(3)
M = mpsim.randn(3, device="mps")

MIXED = {
    "+": lambda a, b: a + b,
    "*": lambda a, b: a * b,
    "-": lambda a, b: a - b,
    "/": lambda a, b: a / b,
    ">": lambda a, b: a > b,
    "==": lambda a, b: a == b,
    "**": lambda a, b: a ** b,
    "@": lambda a, b: a @ b,
    "add": lambda a, b: mpsim.add(a, b),
    "where": lambda a, b: mpsim.where(a > 0, a, b),
    "maximum": lambda a, b: mpsim.maximum(a, b),
    "clamp": lambda a, b: mpsim.clamp(a, b, b),
    "cat": lambda a, b: mpsim.cat([a, b]),
    "stack": lambda a, b: mpsim.stack([a, b]),
    "layer_norm weight": lambda a, b: mpsim.layer_norm(a, [3], weight=b),
    "layer_norm bias": lambda a, b: mpsim.layer_norm(a, [3], bias=b),
    "rms_norm weight": lambda a, b: mpsim.rms_norm(a, [3], weight=b),
    "group_norm weight": lambda a, b: mpsim.group_norm(a.reshape(1, 3), 1, weight=b),
    "batch_norm stats": lambda a, b: mpsim.batch_norm(a.reshape(1, 3), b, b),
    "linear": lambda a, b: mpsim.linear(a.reshape(1, 3), b.reshape(1, 3)),
    "gather index": lambda a, b: mpsim.gather(a, 0, (b > 10).to(mpsim.int64)),
    "index_select index": lambda a, b: mpsim.index_select(a, 0, (b > 10).to(mpsim.int64)),
}


@pytest.mark.parametrize("name", sorted(MIXED))
@pytest.mark.parametrize("order", ["cpu-mps", "mps-cpu"])
def test_mixed_devices_raise(name, order):
    a, b = (C, M) if order == "cpu-mps" else (M, C)
    with pytest.raises(mpsim.DeviceError, match="device"):
        MIXED[name](a, b)


@pytest.mark.parametrize("name", ["+", "*", ">", "add", "where", "maximum"])
def test_a_zero_dim_cpu_tensor_joins_any_device(name):
    out = MIXED[name](M, mpsim.tensor(0.5))
    assert out.device == M.device

"""DLPack exchange with torch and NumPy: zero-copy both ways (same data pointer)."""

import gc

import numpy as np
import pytest
import torch

import mpsim


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32",
                                   "int64", "uint8"])
def test_torch_from_mpsim_shares_memory(dtype):
    t = mpsim.arange(12).to(getattr(mpsim, dtype)).reshape(3, 4)
    tt = torch.from_dlpack(t)
    assert tt.data_ptr() == t.data_ptr()
    assert str(tt.dtype) == f"torch.{dtype}"
    assert tuple(tt.shape) == t.shape and tt.stride() == t.stride()
    np.testing.assert_array_equal(tt.float().numpy(), t.to(mpsim.float32).numpy())
    tt[0, 0] = 100  # one buffer: writes through torch are seen by mpsim
    assert t[0, 0].item() == 100


def test_strided_view_round_trip():
    base = mpsim.arange(24.0).reshape(4, 6)
    view = base[1:, ::2]
    tt = torch.from_dlpack(view)
    assert tt.data_ptr() == view.data_ptr() and tt.stride() == view.stride() == (6, 2)
    back = mpsim.from_dlpack(tt)
    assert back.data_ptr() == view.data_ptr() and back.stride() == view.stride()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16, torch.int64])
def test_mpsim_from_torch_shares_memory(dtype):
    tt = torch.arange(10).to(dtype)
    t = mpsim.from_dlpack(tt)
    assert t.data_ptr() == tt.data_ptr()
    assert t.dtype is getattr(mpsim, str(dtype).replace("torch.", ""))
    tt[3] = 42
    assert t[3].item() == 42


def test_torch_memory_outlives_the_torch_tensor():
    t = mpsim.from_dlpack(torch.full((1000,), 2.0))
    gc.collect()
    assert t.sum().item() == 2000.0


def test_mpsim_memory_outlives_the_mpsim_tensor():
    tt = torch.from_dlpack(mpsim.full((1000,), 3.0))
    gc.collect()
    assert tt.sum().item() == 3000.0


def test_numpy_both_ways():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = mpsim.from_dlpack(a)
    assert t.data_ptr() == a.ctypes.data
    back = np.from_dlpack(t)
    assert back.ctypes.data == a.ctypes.data
    np.testing.assert_array_equal(back, a)
    r = a[:, ::-1]  # mpsim has no negative strides: a reversed NumPy view is copied
    np.testing.assert_array_equal(mpsim.from_dlpack(r).numpy(), r)


def test_legacy_capsule():
    tt = torch.arange(4.0)
    t = mpsim.from_dlpack(torch.utils.dlpack.to_dlpack(tt))
    assert t.data_ptr() == tt.data_ptr()
    cap = t.__dlpack__()
    assert torch.utils.dlpack.from_dlpack(cap).data_ptr() == tt.data_ptr()
    with pytest.raises(ValueError):
        mpsim.from_dlpack(cap)  # a capsule is consumed once


def test_mps_tensors_export_as_host_memory():
    x = mpsim.randn((64, 64), device="mps")
    y = mpsim.exp(x)  # queued
    assert y.__dlpack_device__() == (1, 0)  # kDLCPU: unified memory
    ty = torch.from_dlpack(y)  # synchronizes first
    assert ty.data_ptr() == y.data_ptr()
    np.testing.assert_array_equal(ty.numpy(), y.numpy())


def test_dlpack_rejects_bad_input():
    with pytest.raises(TypeError):
        mpsim.from_dlpack(42)
    with pytest.raises(BufferError):
        mpsim.zeros(2).__dlpack__(stream=5)

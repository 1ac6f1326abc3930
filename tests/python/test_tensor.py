"""mpsim.Tensor: construction, NumPy conversion, dtypes, devices, indexing, operators."""

import numpy as np
import pytest
import torch

import mpsim
from mpsim.testing import assert_close

ALL_DTYPES = ["float32", "float16", "bfloat16", "float64", "int32", "int64", "uint8", "bool"]


def test_dtype_objects():
    for name in ALL_DTYPES:
        d = getattr(mpsim, name)
        assert isinstance(d, mpsim.dtype)
        assert repr(d) == f"mpsim.{name}"
    assert mpsim.float is mpsim.float32 and mpsim.half is mpsim.float16
    assert mpsim.long is mpsim.int64 and mpsim.double is mpsim.float64
    assert mpsim.float16.is_floating_point and not mpsim.int32.is_floating_point
    assert mpsim.bfloat16.itemsize == 2


def test_tensor_dtype_inference_follows_torch():
    assert mpsim.tensor([1.5, 2]).dtype is mpsim.float32  # Python floats: float32
    assert mpsim.tensor([1, 2]).dtype is mpsim.int64
    assert mpsim.tensor([True, False]).dtype is mpsim.bool
    assert mpsim.tensor(np.zeros(3)).dtype is mpsim.float64  # NumPy arrays keep theirs
    assert mpsim.tensor(np.float16(1)).dtype is mpsim.float16
    assert mpsim.tensor(2.5).shape == ()
    # With a dtype: one rounding, from the float64 values, by mpsim
    t = mpsim.tensor([0.1], dtype=mpsim.float64)
    assert t.numpy()[0] == 0.1
    assert mpsim.tensor([0.1], dtype="float16").numpy()[0] == np.float16(0.1)


# The mps device has no float64, as the real one (test_errors checks the error).
@pytest.mark.parametrize("name,device", [(n, d) for n in ALL_DTYPES for d in ["cpu", "mps"]
                                         if (n, d) != ("float64", "mps")])
def test_numpy_round_trip(name, device):
    rng = np.random.default_rng(0)
    np_dtype = "float32" if name == "bfloat16" else name
    a = (rng.standard_normal((3, 4)) * 10).astype(np_dtype)
    t = mpsim.tensor(a, dtype=getattr(mpsim, name), device=device)
    assert t.dtype is getattr(mpsim, name)
    assert t.device == device and t.device.type == device
    back = t.numpy()
    if name == "bfloat16":  # the convention: float32 values, exactly the bfloat16 ones
        assert back.dtype == np.float32
        expected = torch.from_numpy(a).bfloat16().float().numpy()
        np.testing.assert_array_equal(back, expected)
    else:
        assert back.dtype == np.dtype(name)
        np.testing.assert_array_equal(back, a)


def test_from_numpy_shares_memory():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = mpsim.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data
    a[0, 0] = 42
    assert t[0, 0].item() == 42
    t[1, 1] = -1  # and writes go back
    assert a[1, 1] == -1
    v = a[:, 1::2]  # a strided view is shared too
    tv = mpsim.from_numpy(v)
    assert tv.stride() == (4, 2) and tv.data_ptr() == v.ctypes.data
    n = t.numpy()  # and numpy() of a cpu tensor shares back
    assert n.ctypes.data == a.ctypes.data


def test_from_numpy_keeps_the_array_alive():
    t = mpsim.from_numpy(np.full(1000, 3.0))
    import gc
    gc.collect()
    assert t.sum().item() == 3000.0


def test_from_numpy_copies_what_it_cannot_share():
    a = np.arange(6, dtype=np.float32)
    r = a[::-1]  # negative stride
    t = mpsim.from_numpy(r)
    np.testing.assert_array_equal(t.numpy(), r)
    assert t.data_ptr() != r.ctypes.data
    ro = np.arange(3.0)
    ro.setflags(write=False)
    assert mpsim.from_numpy(ro).data_ptr() != ro.ctypes.data
    with pytest.raises(TypeError):
        mpsim.from_numpy(np.zeros(3, np.clongdouble))  # complex256: not an mpsim dtype
    with pytest.raises(TypeError):
        mpsim.from_numpy(np.zeros(3, np.uint16))
    for dtype, name in ((np.int8, "int8"), (np.int16, "int16")):  # shared, as torch
        a = np.array([-3, 0, 5], dtype)
        t = mpsim.from_numpy(a)
        assert t.dtype is getattr(mpsim, name) and t.data_ptr() == a.ctypes.data
        assert t.tolist() == [-3, 0, 5]


def test_to_and_devices():
    x = mpsim.tensor([[1.0, 2.0], [3.0, 4.0]])
    m = x.to("mps")
    assert m.is_mps and m.device == mpsim.device("mps:0") and str(m.device) == "mps:0"
    h = m.to(mpsim.float16)
    assert h.dtype is mpsim.float16 and h.is_mps
    c = h.to("cpu", mpsim.float32)
    assert c.is_cpu and c.dtype is mpsim.float32
    np.testing.assert_array_equal(c.numpy(), x.numpy())
    assert x.to(dtype=mpsim.int32).dtype is mpsim.int32
    assert x.to(torch.float16).dtype is mpsim.float16  # torch dtypes are understood
    assert x.to(np.float64).dtype is mpsim.float64
    assert x.to("mps").cpu().numpy().tolist() == [[1, 2], [3, 4]]


def test_repr_shape_and_attributes():
    x = mpsim.tensor([[1.0, 2.0, 3.0]])
    assert repr(x) == "tensor([[1., 2., 3.]])"
    assert "device='mps:0'" in repr(x.to("mps"))
    assert "dtype=float16" in repr(x.half())
    assert x.shape == (1, 3) and x.size() == (1, 3) and x.size(1) == 3
    assert x.ndim == 2 and x.dim() == 2 and x.numel() == 3 and len(x) == 1
    assert x.is_contiguous() and x.T.shape == (3, 1)


def test_indexing_and_slicing():
    a = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    t = mpsim.from_numpy(a)
    for index in [1, -1, (1, 2), (slice(None), 1), (slice(0, 3, 2), slice(1, None, 2)),
                  (Ellipsis, 0), (None, 1), (1, None, Ellipsis, slice(None, None, 3)),
                  slice(5, 9), (slice(-2, None), -1, slice(None, -1))]:
        np.testing.assert_array_equal(t[index].numpy(), a[index], err_msg=str(index))
    np.testing.assert_array_equal(t[:, [3, 0]].numpy(), a[:, [3, 0]])
    assert t[1, 2, 3].item() == a[1, 2, 3]
    with pytest.raises(IndexError):
        t[3]
    with pytest.raises(IndexError):
        t[0, 0, 0, 0]
    with pytest.raises(ValueError):
        t[::-1]
    assert [row.shape for row in t] == [(4, 5)] * 3


def test_setitem():
    t = mpsim.zeros(3, 4)
    t[1] = 5
    t[:, 0] = mpsim.tensor([1.0, 2.0, 3.0])
    t[2, 1:3] = np.array([7.0, 8.0], np.float32)
    expected = np.zeros((3, 4), np.float32)
    expected[1] = 5
    expected[:, 0] = [1, 2, 3]
    expected[2, 1:3] = [7, 8]
    np.testing.assert_array_equal(t.numpy(), expected)


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_operators(device):
    a_np = np.array([[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]], np.float32)
    b_np = np.array([2.0, 4.0, -1.0], np.float32)
    a = mpsim.tensor(a_np, device=device)
    b = mpsim.tensor(b_np, device=device)
    assert_close(a + b, a_np + b_np)
    assert_close(a - b, a_np - b_np)
    assert_close(a * b, a_np * b_np)
    assert_close(a / b, a_np / b_np)
    assert_close(-a, -a_np)
    assert_close(abs(a), np.abs(a_np))
    assert_close(a ** 2, a_np ** 2)
    assert_close(a + 1, a_np + 1)
    assert_close(2 - a, 2 - a_np)
    assert_close(1 / b, 1 / b_np)
    assert_close(3 * a, 3 * a_np)
    assert_close(a * b_np, a_np * b_np)  # NumPy operands convert
    assert_close(b_np * a, a_np * b_np)  # and NumPy defers to mpsim
    for op in ["__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__"]:
        got = getattr(a, op)(b)
        assert got.dtype is mpsim.bool
        np.testing.assert_array_equal(got.numpy(), getattr(a_np, op)(b_np))
        np.testing.assert_array_equal(getattr(a, op)(2.0).numpy(), getattr(a_np, op)(2.0))
    np.testing.assert_array_equal((1 < a).numpy(), 1 < a_np)
    assert (a == None) is False  # noqa: E711  (no tensor for an unrelated operand)
    assert {a: 1}[a] == 1  # hashable by identity, as torch tensors
    with pytest.raises(TypeError):
        a + "x"


def test_scalar_conversions():
    assert float(mpsim.tensor(2.5)) == 2.5
    assert int(mpsim.tensor(7)) == 7
    assert bool(mpsim.tensor([True]))
    assert mpsim.tensor(3).item() == 3 and isinstance(mpsim.tensor(3).item(), int)
    assert [1, 2, 3][mpsim.tensor(1)] == 2
    with pytest.raises(RuntimeError):
        bool(mpsim.tensor([1.0, 2.0]))


def test_precision_scope_and_settings():
    assert mpsim.get_precision() == "golden"
    with mpsim.precision("fast"):
        assert mpsim.get_precision() == "fast"
        with mpsim.precision("golden"):
            assert mpsim.get_precision() == "golden"
        assert mpsim.get_precision() == "fast"
    assert mpsim.get_precision() == "golden"
    mpsim.set_precision("fast")
    try:
        assert mpsim.get_precision() == "fast"
    finally:
        mpsim.set_precision("golden")
    with pytest.raises(ValueError):
        mpsim.precision("sloppy")
    n = mpsim.get_num_threads()
    mpsim.set_num_threads(1)
    assert mpsim.get_num_threads() == 1
    mpsim.set_num_threads(n)


def test_precision_scope_is_per_thread():
    import threading
    seen = []
    with mpsim.precision("fast"):
        t = threading.Thread(target=lambda: seen.append(mpsim.get_precision()))
        t.start()
        t.join()
    assert seen == ["golden"]


def test_fast_precision_stays_within_one_ulp():
    x = mpsim.tensor(np.linspace(-5, 5, 1001, dtype=np.float32))
    golden = mpsim.exp(x)
    with mpsim.precision("fast"):
        fast = mpsim.exp(x)
    ulp = np.spacing(np.abs(golden.numpy()))
    assert np.all(np.abs(fast.numpy() - golden.numpy()) <= ulp)


# Note [elementwise output layout] (core/tensor.cc): an elementwise result takes the layout torch
# gives it from the same operands (channels-last, transposed, permuted, sliced, broadcast).
def test_elementwise_results_keep_torch_layout():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 4, 5)).astype(np.float32)
    b = rng.standard_normal((1, 3, 1, 1)).astype(np.float32)
    m = rng.standard_normal((4, 6)).astype(np.float32)
    p = rng.standard_normal((2, 3, 4)).astype(np.float32)

    def layouts(lib, tensor):
        xt = tensor(x)
        xc = xt.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
        bt, mt, pt = tensor(b), tensor(m).t(), tensor(p).permute(2, 0, 1)
        return {
            "relu(xc)": lib.relu(xc),
            "abs(xc) + xc": lib.abs(xc) + xc,
            "xc + x": xc + xt,
            "x + xc": xt + xc,
            "b + xc": bt + xc,
            "where(xc > 0, xc, b)": lib.where(xc > 0, xc, bt),
            "xc[:, :, ::2] * 2": xc[:, :, ::2] * 2,
            "t * t": mt * mt,
            "relu(p)": lib.relu(pt),
        }

    ours = layouts(mpsim, mpsim.tensor)
    theirs = layouts(torch, torch.from_numpy)
    for name, t in theirs.items():
        assert ours[name].stride() == t.stride(), name
        assert np.array_equal(ours[name].numpy(), t.numpy()), name


# Note [pad layout] (core/movement_ops.cc): pad's result layout and values are torch's:
# constant padding keeps a channels-last input channels-last, the other modes and layouts are
# row-major.
def test_pad_layout_matches_torch():
    x = np.random.default_rng(6).standard_normal((2, 3, 4, 5)).astype(np.float32)
    mx = mpsim.tensor(x).permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    tx = torch.from_numpy(x).contiguous(memory_format=torch.channels_last)
    cases = [((1, 1, 1, 1), "constant"), ((0, 1, 0, 1), "constant"), ((1, 1, 2, 2), "reflect"),
             ((2, 1, 0, 0), "replicate"), ((1, 1, 1, 1, 1, 1), "constant"),
             ((-1, 1, 0, 2), "constant")]
    for pads, mode in cases:
        ours = mpsim.pad(mx, pads, mode)
        theirs = torch.nn.functional.pad(tx, pads, mode=mode)
        assert ours.stride() == theirs.stride(), (pads, mode)
        assert np.array_equal(ours.numpy(), theirs.numpy()), (pads, mode)
    t = mpsim.tensor(x[0, 0]).t()
    assert mpsim.pad(t, (1, 2)).stride() == torch.nn.functional.pad(
        torch.from_numpy(x[0, 0]).t(), (1, 2)).stride()


# flip and cat keep channels-last as torch does (cat: when every part is channels-last).
def test_flip_and_cat_layouts_match_torch():
    x = np.random.default_rng(7).standard_normal((2, 3, 4, 5)).astype(np.float32)
    m, t = mpsim.tensor(x), torch.from_numpy(x)
    mc = m.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    tc = t.contiguous(memory_format=torch.channels_last)
    for dims in [(1,), (2,), (3,), (1, 2)]:
        ours, theirs = mpsim.flip(mc, dims), torch.flip(tc, dims)
        assert ours.stride() == theirs.stride() and np.array_equal(ours.numpy(), theirs.numpy())
    for ours, theirs in [((mc, mc), (tc, tc)), ((mc, m), (tc, t)), ((m, mc), (t, tc))]:
        for dim in (1, 3):
            a, b = mpsim.cat(list(ours), dim), torch.cat(list(theirs), dim)
            assert a.stride() == b.stride() and np.array_equal(a.numpy(), b.numpy()), dim


def test_view_as_another_dtype_is_torchs():
    """x.view(dtype) reinterprets the bytes as torch's: the last dim scales by the size ratio
    (stride 1 needed), and torch's errors where the layout does not allow it."""
    import torch
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7.5
    t, m = torch.from_numpy(x.copy()), mpsim.tensor(x.copy())
    for td, md in ((torch.int32, mpsim.int32), (torch.int16, mpsim.int16),
                   (torch.uint8, mpsim.uint8), (torch.float64, mpsim.float64),
                   (torch.complex64, mpsim.complex64), (torch.bfloat16, mpsim.bfloat16)):
        want = t.view(td)
        got = m.view(md)
        assert tuple(got.shape) == tuple(want.shape) and got.dtype is md
        assert got.to("cpu").view(mpsim.uint8).numpy().tobytes() == \
            want.view(torch.uint8).numpy().tobytes()
    assert m.view(dtype=mpsim.int32).dtype is mpsim.int32
    assert m.view(np.int32).dtype is mpsim.int32 and m.view(torch.int32).dtype is mpsim.int32
    v = m.view(mpsim.int32)
    v[0, 0, 0] = 0  # shares the storage: float 0.0 is all zero bits
    assert m.numpy()[0, 0, 0] == 0.0
    # torch's refusals: stride(-1) != 1, 0-dim, size(-1) / offset / strides not divisible
    for bad in (lambda a: a.transpose(1, 2).view(torch.int16 if isinstance(a, torch.Tensor)
                                                 else mpsim.int16),
                lambda a: a[0, 0, 0].view(torch.int16 if isinstance(a, torch.Tensor)
                                          else mpsim.int16),
                lambda a: a[:, :, :3].view(torch.float64 if isinstance(a, torch.Tensor)
                                           else mpsim.float64),
                lambda a: a[:, :, 1:3].view(torch.float64 if isinstance(a, torch.Tensor)
                                            else mpsim.float64)):
        with pytest.raises(RuntimeError):
            bad(t)
        with pytest.raises(mpsim.Error, match=r"\[view\]"):
            bad(m)

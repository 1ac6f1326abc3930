"""int8 and int16 tensors and the integer and bool forms of ops, against torch doing the same
(PyTorch 1.13 on the cpu is the oracle): promotion, conversions, wrapping arithmetic, integer
products (python/mpsim/_integer_products.py), integer ranges, and the bool ops torch defines
(clamp_min/clamp_max with a tensor bound, heaviside, square, sign, nan_to_num, sum/prod with
dtype=bool, any/all of uint8)."""

import warnings

import numpy as np
import pytest
import torch

import mpsim

RNG = np.random.default_rng(11)
INTS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64]


def m(t):
    """torch tensor -> mpsim tensor of the same dtype and values."""
    return mpsim.from_dlpack(t.contiguous()) if t.dtype != torch.bool else \
        mpsim.tensor(t.numpy())


def same(ours, theirs):
    assert str(ours.dtype) == str(theirs.dtype).replace("torch.", "mpsim."), \
        (ours.dtype, theirs.dtype)
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_array_equal(ours.to("cpu").numpy(), theirs.numpy())


def ints(dtype, *shape, low=-9, high=10):
    info = torch.iinfo(dtype)
    return torch.from_numpy(RNG.integers(max(low, info.min), min(high, info.max + 1),
                                         shape)).to(dtype)


def test_names_promotion_and_conversions():
    assert mpsim.char is mpsim.int8 and mpsim.short is mpsim.int16
    for a in INTS + [torch.bool]:
        for b in INTS + [torch.bool]:
            got = (mpsim.zeros(2, dtype=m(torch.zeros(1, dtype=a)).dtype) +
                   mpsim.zeros(2, dtype=m(torch.zeros(1, dtype=b)).dtype)).dtype
            assert str(got) == str(torch.promote_types(a, b)).replace("torch.", "mpsim."), (a, b)
    special = torch.tensor([200.0, -1.0, -2.5, 300.0, 2.0**32 + 5, float("nan"), float("inf"),
                            -float("inf"), 40000.0, -40000.0, 2.0**31, 3e9, 70000.5])
    for dtype in (torch.int8, torch.int16):
        ours = mpsim.tensor(special.numpy()).to(m(torch.zeros(1, dtype=dtype)).dtype)
        same(ours, special.to(dtype))  # the low byte/word of the int32 conversion
    t = torch.tensor([1, -2, 3])
    same(m(t).char(), t.char())
    same(m(t).short(), t.short())


@pytest.mark.parametrize("dtype", [torch.int8, torch.int16])
@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_arithmetic_wraps_as_torch(dtype, device):
    info = torch.iinfo(dtype)
    a = ints(dtype, 64, low=info.min, high=info.max + 1)
    b = ints(dtype, 64, low=info.min, high=info.max + 1)
    b[b == 0] = 1
    x, y = m(a).to(device), m(b).to(device)
    same(x + y, a + b)
    same(x - y, a - b)
    same(x * y, a * b)
    same(mpsim.div(x, y, rounding_mode="floor"), torch.div(a, b, rounding_mode="floor"))
    same(mpsim.div(x, y, rounding_mode="trunc"), torch.div(a, b, rounding_mode="trunc"))
    same(-x, -a)
    same(mpsim.abs(x), torch.abs(a))
    same(mpsim.sum(x), torch.sum(a))
    same(mpsim.amax(x), torch.amax(a))


def test_integer_products():
    for dtype in INTS:
        a, b = ints(dtype, 3, 4), ints(dtype, 4, 5)
        same(mpsim.matmul(m(a), m(b)), torch.matmul(a, b))
        same(m(a) @ m(b), a @ b)
        same(m(a).mm(m(b)), a.mm(b))
        c = ints(dtype, 3, 5)
        same(mpsim.addmm(m(c), m(a), m(b), beta=2, alpha=3), torch.addmm(c, a, b, beta=2, alpha=3))
        same(mpsim.addmm(m(c), m(a), m(b), beta=0.6), torch.addmm(c, a, b, beta=0.6))  # -> 0
        v = ints(dtype, 4)
        same(mpsim.mv(m(a), m(v)), torch.mv(a, v))
        same(mpsim.dot(m(v), m(v)), torch.dot(v, v))
        same(mpsim.einsum("ij,jk->ik", m(a), m(b)), torch.einsum("ij,jk->ik", a, b))
        same(mpsim.einsum("ij->i", m(a)), torch.einsum("ij->i", a))  # summed alone: int64
        same(mpsim.nn.functional.linear(m(a), m(b.T)), torch.nn.functional.linear(a, b.T))
    big = torch.full((2, 2), 2**40, dtype=torch.int64)
    same(mpsim.mm(m(big), m(big)), torch.mm(big, big))  # wraps modulo 2^64
    with pytest.raises(TypeError, match="same dtype"):
        mpsim.mm(m(ints(torch.int32, 2, 2)), m(ints(torch.int64, 2, 2)))
    with pytest.raises(ValueError):
        mpsim.mm(m(ints(torch.int32, 2, 3)), m(ints(torch.int32, 2, 3)))
    u = torch.tensor([True, False])
    same(mpsim.addr(m(torch.tensor([[False, True], [False, False]])), m(u), m(u)),
         torch.addr(torch.tensor([[False, True], [False, False]]), u, u))


def test_integer_ranges():
    for dtype in INTS:
        md = m(torch.zeros(1, dtype=dtype)).dtype
        for args in [(1.0, 5.000001, 2.0), (0.0, -8.000001, -4.0), (1.7, 9.2, 2.9)]:
            if dtype == torch.uint8 and args[2] < 0:
                continue
            same(mpsim.arange(*args, dtype=md), torch.arange(*args, dtype=dtype))
        with pytest.raises(ValueError, match="nonzero"):
            mpsim.arange(0.5, 3, 0.5, dtype=md)
        same(mpsim.linspace(0.7, 4.9, 5, dtype=md), torch.linspace(0.7, 4.9, 5, dtype=dtype))
        same(mpsim.logspace(0, 1.2, 2, dtype=md), torch.logspace(0, 1.2, 2, dtype=dtype))


def test_bool_forms():
    b = torch.tensor([True, False, True, False])
    c = torch.tensor([False, True, True, False])
    same(mpsim.clamp_min(m(b), m(c)), torch.clamp_min(b, c))
    same(mpsim.clamp_max(m(b), m(c)), torch.clamp_max(b, c))
    with pytest.raises(TypeError, match="bool"):
        mpsim.clamp(m(b), m(c), m(c))  # torch: not implemented for Bool
    same(mpsim.heaviside(m(b), m(c)), torch.heaviside(b, c))
    same(mpsim.square(m(b)), torch.square(b))
    same(mpsim.sign(m(b)), torch.sign(b))
    same(mpsim.sum(m(b), dtype=mpsim.bool), torch.sum(b, dtype=torch.bool))
    same(mpsim.prod(m(b), dtype=mpsim.bool), torch.prod(b, dtype=torch.bool))
    i = torch.tensor([3, 0, -2])
    same(mpsim.nan_to_num(m(i)), torch.nan_to_num(i))
    u = torch.tensor([[0, 3], [0, 0]], dtype=torch.uint8)
    same(mpsim.any(m(u)), torch.any(u))
    same(mpsim.all(m(u), 1), torch.all(u, 1))


def test_integer_forms_of_float_style_ops():
    F, nnF = torch.nn.functional, mpsim.nn.functional
    x = torch.tensor([-3, 0, 1, 3])
    same(nnF.hardtanh(m(x), 0.5, -0.5), F.hardtanh(x, 0.5, -0.5))
    same(nnF.hardtanh(m(x), -1.5, 2.5), F.hardtanh(x, -1.5, 2.5))
    same(nnF.threshold(m(x), 0.5, -3.7), F.threshold(x, 0.5, -3.7))
    xu = x.to(torch.uint8)
    same(nnF.threshold(m(xu), 1, 20), F.threshold(xu, 1, 20))
    same(mpsim.addcmul(m(x), m(x), m(x), value=3.14), torch.addcmul(x, x, x, value=3.14))
    img = ints(torch.uint8, 1, 2, 3, 3, low=0, high=256)
    same(nnF.interpolate(m(img), scale_factor=2), F.interpolate(img, scale_factor=2))


def test_integer_convolutions_and_average_pools():
    F, nnF = torch.nn.functional, mpsim.nn.functional
    x, w, b = ints(torch.int64, 2, 4, 7, 6), ints(torch.int64, 6, 2, 3, 2), ints(torch.int64, 6)
    for kw in [dict(), dict(stride=2, padding=1), dict(dilation=(2, 1), groups=2, padding=(2, 0))]:
        same(nnF.conv2d(m(x), m(w), m(b), **{"groups": 2, **kw}),
             F.conv2d(x, w, b, **{"groups": 2, **kw}))
    with warnings.catch_warnings():  # torch: 'same' with an even kernel pads a copy
        warnings.simplefilter("ignore")
        same(nnF.conv2d(m(x), m(w), None, padding="same", groups=2),
             F.conv2d(x, w, None, padding="same", groups=2))
    wt = ints(torch.int64, 4, 3, 3, 2)
    same(nnF.conv_transpose2d(m(x), m(wt), None, stride=2, padding=1, output_padding=1),
         F.conv_transpose2d(x, wt, None, stride=2, padding=1, output_padding=1))
    x1, w1 = ints(torch.int64, 2, 3, 9), ints(torch.int64, 5, 3, 3)
    same(nnF.conv1d(m(x1), m(w1), stride=2), F.conv1d(x1, w1, stride=2))
    same(nnF.conv_transpose1d(m(x1), m(w1.transpose(0, 1).contiguous())),
         F.conv_transpose1d(x1, w1.transpose(0, 1).contiguous()))
    for kw in [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
               dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
               dict(kernel_size=2, divisor_override=-3)]:
        same(nnF.avg_pool2d(m(x), **kw), F.avg_pool2d(x, **kw))  # truncating division
    same(nnF.avg_pool1d(m(x1), 3, 2, 1), F.avg_pool1d(x1, 3, 2, 1))


def test_integer_paths_refuse_bad_inputs_as_the_op_does():
    nnF = mpsim.nn.functional
    x, w = m(ints(torch.int64, 1, 2, 5, 5)), m(ints(torch.int64, 3, 2, 2, 2))
    with pytest.raises(TypeError, match="conv2d.*one dtype"):
        nnF.conv2d(x, w.to(mpsim.int32))
    with pytest.raises(ValueError):  # the op's own shape check: 3 input channels expected
        nnF.conv2d(m(ints(torch.int64, 1, 3, 5, 5)), w)
    with pytest.raises(TypeError, match="conv_transpose2d.*one dtype"):
        nnF.conv_transpose2d(x, m(ints(torch.int32, 2, 3, 2, 2)))
    with pytest.raises(ValueError):
        nnF.avg_pool2d(x, 9)  # a window larger than the padded input
    with pytest.raises(TypeError, match="einsum.*same dtype"):
        mpsim.einsum("i,i->", m(ints(torch.int64, 3)), m(ints(torch.int32, 3)))

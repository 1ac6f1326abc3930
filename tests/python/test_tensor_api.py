"""torch's everyday Tensor API on mpsim tensors (python/mpsim/_tensor_api.py), each against
torch doing the same: in-place variants writing through views, the bitwise operators,
advanced indexing and assignment, 3-d .T, detach, repeat(*sizes), to("float16"), torch bool
tensors from DLPack, and the errors torch raises."""

import warnings

import numpy as np
import pytest
import torch

import mpsim


def both(a):
    return mpsim.tensor(np.asarray(a)), torch.tensor(np.asarray(a))


def same(m, t):
    np.testing.assert_array_equal(m.to("cpu").numpy(), t.numpy())


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_inplace_writes_through_views(device):
    m = mpsim.zeros(2, 3).to(device)
    t = torch.zeros(2, 3)
    v, w = m[0], t[0]
    v += 1
    w += 1
    m[1].mul_(3).add_(2)
    t[1].mul_(3).add_(2)
    m[:, 1].clamp_(0, 1.5)
    t[:, 1].clamp_(0, 1.5)
    same(m, t)
    x, tx = both([0.5, 1.0, 2.0])
    for name in ("sin_", "exp_", "sqrt_", "neg_", "reciprocal_", "round_"):
        getattr(x, name)()
        getattr(tx, name)()
    np.testing.assert_allclose(x.numpy(), tx.numpy().astype(np.float32), rtol=2e-7)


def test_inplace_errors():
    with pytest.raises(mpsim.DTypeError, match="can't be cast"):
        mpsim.tensor([1, 2]).add_(0.5)
    with pytest.raises(mpsim.ShapeError, match="doesn't match the broadcast shape"):
        mpsim.ones(3).add_(mpsim.ones(2, 3))


def test_bitwise_operators():
    m, t = both(np.array([5, 6, -7], dtype=np.int64))
    for op in (lambda a: a & 3, lambda a: a | 8, lambda a: a ^ 1, lambda a: ~a,
               lambda a: a << 2, lambda a: a >> 1, lambda a: a // 2, lambda a: a % 4,
               lambda a: 3 & a, lambda a: a & a):
        same(op(m), op(t))
    b, tb = both([True, False])
    same(b & True, tb & True)
    same(~b, ~tb)
    same(mpsim.gcd(m, mpsim.tensor([10, 4, 14])), torch.gcd(t, torch.tensor([10, 4, 14])))
    with pytest.raises(mpsim.DTypeError, match="integer and bool"):
        mpsim.ones(2) & 1


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_advanced_indexing(device):
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    m, t = mpsim.tensor(base).to(device), torch.from_numpy(base.copy())
    for key in ([-1, 0], [], True, (slice(None), [2, 0]), (0, [1, 2], [3, 0]),
                (Ellipsis, [1]), ([1, 0], slice(1, 3), [0, 3])):
        same(m[key], t[key])
    same(m[m > 10], t[t > 10])
    mi, ti = mpsim.tensor([0, 1]).to(device), torch.tensor([0, 1])
    same(m[mi, mi], t[ti, ti])
    m[[0], [2]] = 0
    t[[0], [2]] = 0
    m[m > 20] = -1
    t[t > 20] = -1
    v, w = m[:, 1:], t[:, 1:]
    v[[1]] = 7
    w[[1]] = 7
    same(m, t)
    with pytest.raises(IndexError, match="out of bounds"):
        m[[5]]


def test_tensor_conveniences():
    m, t = both(np.ones((2, 3, 4), np.float32))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert m.T.shape == tuple(t.T.shape)
    assert any("deprecated" in str(c.message) for c in caught)
    assert m.detach().shape == (2, 3, 4) and m.is_floating_point()
    assert mpsim.ones(2).repeat(2, 1, 1).shape == tuple(torch.ones(2).repeat(2, 1, 1).shape)
    assert m.to("float16").dtype is mpsim.float16
    same(mpsim.from_dlpack(torch.tensor([True, False])), torch.tensor([True, False]))
    same(m.pow(2), t.pow(2))


def test_out_argument():
    out = mpsim.zeros(3)
    assert mpsim.add(mpsim.ones(3), 1, out=out) is out
    same(out, torch.full((3,), 2.0))
    values, indices = mpsim.zeros(2), mpsim.zeros(2, dtype=mpsim.int64)
    mpsim.sort(mpsim.tensor([3.0, 1.0]), out=(values, indices))
    same(values, torch.tensor([1.0, 3.0]))
    same(indices, torch.tensor([1, 0]))
    with pytest.raises(mpsim.ShapeError, match="does not resize out"):
        mpsim.exp(mpsim.ones(3), out=mpsim.zeros(2))
    with pytest.raises(mpsim.DTypeError, match="can't be cast"):
        mpsim.exp(mpsim.ones(3), out=mpsim.zeros(3, dtype=mpsim.int64))


def test_torch_aliases_and_tensor_properties():
    m, t = both(np.array([[1.5, -2.0], [3.0, 0.25]], np.float32))
    for name, args in (("clip", (-1, 1)), ("divide", (2,)), ("multiply", (3,)),
                       ("subtract", (1,)), ("negative", ()), ("absolute", ()), ("fix", ()),
                       ("greater", (0,)), ("less_equal", (1,)), ("moveaxis", (0, 1)),
                       ("swapaxes", (0, 1))):
        same(getattr(mpsim, name)(m, *args), getattr(torch, name)(t, *args))
        same(getattr(m, name)(*args), getattr(t, name)(*args))
    idx = mpsim.tensor([0, 1, 1, 3])
    same(mpsim.bincount(idx), torch.bincount(torch.tensor([0, 1, 1, 3])))
    same(mpsim.bincount(idx, mpsim.tensor([0.5, 1.0, 2.0, 4.0]), minlength=6),
         torch.bincount(torch.tensor([0, 1, 1, 3]), torch.tensor([0.5, 1.0, 2.0, 4.0]),
                        minlength=6))
    with pytest.raises(mpsim.InvalidArgumentError, match="non-negative"):
        mpsim.bincount(mpsim.tensor([-1, 2]))
    assert not m.is_cuda and m.is_leaf and not m.requires_grad and m.grad is None
    assert m.ndimension() == 2 and m.nelement() == 4 and m.get_device() == -1
    assert mpsim.is_same_size(m, m) and m.is_signed() and not m.is_complex()
    assert m.new_tensor([1, 2]).dtype is mpsim.float32


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_set_and_resize_as_torch(device):
    base = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for shape in [(6, 4), (2, 2), (), (24,)]:
        m, t = mpsim.tensor(base).to(device), torch.tensor(base)
        m2, t2 = m.resize_(shape), t.resize_(shape)
        assert m2 is m
        same(m, t)
    m, t = mpsim.tensor(base).to(device), torch.tensor(base)
    m.resize_(3, 10)  # larger than the storage: the old elements first
    t.resize_(3, 10)
    got = m.to("cpu").numpy().reshape(-1)[:24]
    np.testing.assert_array_equal(got, t.numpy().reshape(-1)[:24])
    tr_m, tr_t = mpsim.tensor(base[0]).to(device).t(), torch.tensor(base[0]).t()
    tr_m.resize_(2, 2)  # the storage read C-contiguously, the strides ignored
    tr_t.resize_(2, 2)
    same(tr_m, tr_t)
    m = mpsim.tensor(base).to(device)
    m.resize_as_(mpsim.zeros(4, 6))
    assert m.shape == (4, 6)
    src = mpsim.tensor(base).to(device)
    v = mpsim.zeros(1).to(device).set_(src[1])
    src[1, 0, 0] = 100.0
    assert v.shape == (3, 4) and v[0, 0].item() == 100.0  # shares src's storage
    with pytest.raises(ValueError, match="negative"):
        m.resize_(-1, 2)

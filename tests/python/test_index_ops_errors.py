"""Bad inputs of the scatter, mask, view, split, search and unique ops: each an mpsim error
naming the op and what was expected (docs/ops.md); and the values of the Python forms that
the op cases cannot reach (as_tuple, return_inverse, tensor indices_or_sections)."""

import numpy as np
import pytest
import torch

import mpsim

X = mpsim.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
I = mpsim.tensor(np.zeros((2, 4), dtype=np.int64))
S = mpsim.tensor(np.ones((2, 4), dtype=np.float32))
V = mpsim.tensor(np.arange(4, dtype=np.float32))


@pytest.mark.parametrize("call, error, text", [
    (lambda: mpsim.scatter(X, 0, I.to(mpsim.int32), S), mpsim.DTypeError,
     r"\[scatter\] expected an index of dtype int64"),
    (lambda: mpsim.scatter(X, 2, I, S), mpsim.ShapeError, r"\[scatter\] dim 2 is out of range"),
    (lambda: mpsim.scatter(X, 0, I, S, reduce="max"), mpsim.InvalidArgumentError,
     r"\[scatter\] reduce must be 'add' or 'multiply'"),
    (lambda: mpsim.scatter_add(X, 0, mpsim.full([2, 4], 3, dtype=mpsim.int64), S),
     mpsim.ShapeError, r"\[scatter_add\] index 3 is out of bounds for dimension 0 with size 3"),
    (lambda: mpsim.scatter_reduce(X, 0, I, S, "max"), mpsim.InvalidArgumentError,
     r"\[scatter_reduce\] reduce must be one of"),
    (lambda: mpsim.index_add(X, 0, I, S), mpsim.ShapeError, r"\[index_add\] index must be 0-d"),
    (lambda: mpsim.index_copy(X, 0, I[0, :1], S.to(mpsim.float64)),
     mpsim.DTypeError,
     r"\[index_copy\] expected source of input's dtype float32"),
    (lambda: mpsim.index_fill(X, 1, I[0], mpsim.ones([2])), mpsim.ShapeError,
     r"\[index_fill\] only supports a 0-dimensional value tensor"),
    (lambda: mpsim.index_reduce(X, 0, I[0, :2], S, "sum"), mpsim.InvalidArgumentError,
     r"\[index_reduce\] reduce must be one of 'prod'"),
    (lambda: mpsim.index_put(X, [I[0, :1] + 5], S[0]), mpsim.ShapeError,
     r"\[index_put\] index 5 is out of bounds for dimension 0 with size 3"),
    (lambda: mpsim.put(X, I[0], S[0, :3]), mpsim.ShapeError,
     r"\[put\] expected source and index to have the same number of elements"),
    (lambda: mpsim.masked_select(X, X), mpsim.DTypeError,
     r"\[masked_select\] expected a bool mask"),
    (lambda: mpsim.masked_scatter(X, X > -1, V), mpsim.ShapeError,
     r"\[masked_scatter\] source has 4 elements, fewer than the mask's 12"),
    (lambda: mpsim.diagonal(X, 0, 1, 1), mpsim.InvalidArgumentError,
     r"\[diagonal\] dimensions cannot be identical"),
    (lambda: mpsim.diag(mpsim.zeros([2, 2, 2])), mpsim.ShapeError, r"\[diag\] supports 1-d or 2-d"),
    (lambda: mpsim.trace(V), mpsim.ShapeError, r"\[trace\] expected a matrix"),
    (lambda: mpsim.select_scatter(X, V[:3], 0, 0), mpsim.ShapeError,
     r"\[select_scatter\] expected src to have the shape of the written slice \[4\]"),
    (lambda: mpsim.slice_scatter(X, X, 1, 0, 2), mpsim.ShapeError, r"\[slice_scatter\]"),
    (lambda: mpsim.as_strided(X, [4, 4], [4, 1]), mpsim.ShapeError,
     r"\[as_strided\] .*out of bounds"),
    (lambda: mpsim.tensor_split(X, 0), mpsim.InvalidArgumentError,
     r"\[tensor_split\] number of sections must be larger than 0"),
    (lambda: mpsim.hsplit(X, 3), mpsim.ShapeError,
     r"\[hsplit\] .*not divisible by the split_size 3"),
    (lambda: mpsim.dsplit(X, 2), mpsim.ShapeError, r"\[dsplit\] requires a tensor with at least 3"),
    (lambda: mpsim.block_diag(mpsim.zeros([1, 1, 1])), mpsim.ShapeError,
     r"\[block_diag\] input tensors must have 2 or fewer dimensions"),
    (lambda: mpsim.repeat_interleave(V, mpsim.tensor(np.array([1, 2], dtype=np.int64))),
     mpsim.ShapeError, r"\[repeat_interleave\] repeats must have the same size"),
    (lambda: mpsim.repeat_interleave(V, -1), mpsim.InvalidArgumentError,
     r"\[repeat_interleave\] repeats can not be negative"),
    (lambda: mpsim.combinations(X), mpsim.ShapeError, r"\[combinations\] expect a 1D vector"),
    (lambda: mpsim.searchsorted(X, V), mpsim.ShapeError,
     r"\[searchsorted\] the first N-1 dimensions"),
    (lambda: mpsim.searchsorted(V, V, right=True, side="left"), mpsim.InvalidArgumentError,
     r"\[searchsorted\] side and right can't be set to opposites"),
    (lambda: mpsim.bucketize(V, X), mpsim.ShapeError, r"\[bucketize\] boundaries tensor must be 1"),
    (lambda: mpsim.histc(I), mpsim.DTypeError, r"\[histc\] expected a floating point input"),
    (lambda: mpsim.histc(X, bins=0), mpsim.InvalidArgumentError, r"\[histc\] bins must be > 0"),
    (lambda: mpsim.histc(X, min=2, max=1), mpsim.InvalidArgumentError, r"\[histc\] max must be"),
    (lambda: mpsim.unique(X, dim=2), mpsim.ShapeError, r"\[unique\] dim 2 is out of range"),
])
def test_bad_input_is_a_clear_error(call, error, text):
    with pytest.raises(error, match=text):
        call()


def t(a):
    return torch.from_numpy(np.asarray(a.numpy()))


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_python_forms_match_torch(device):
    rng = np.random.default_rng(0)
    a = rng.integers(0, 4, (5, 3)).astype(np.float32)
    a[0, 0] = np.nan
    m, ta = mpsim.tensor(a).to(device), torch.from_numpy(a)
    for got, want in zip(mpsim.nonzero(m, as_tuple=True), torch.nonzero(ta, as_tuple=True)):
        assert torch.equal(t(got), want)
    b = np.array([3, 1, 1, 2, 3, 3, 0], dtype=np.int64)
    mb, tb = mpsim.tensor(b).to(device), torch.from_numpy(b)
    for got, want in zip(mpsim.unique(mb, return_inverse=True, return_counts=True),
                         torch.unique(tb, return_inverse=True, return_counts=True)):
        assert torch.equal(t(got), want)
    for got, want in zip(mpsim.unique_consecutive(mb, return_inverse=True, return_counts=True),
                         torch.unique_consecutive(tb, return_inverse=True, return_counts=True)):
        assert torch.equal(t(got), want)
    rows = np.array([[1, 2], [0, 5], [1, 2], [0, 1]], dtype=np.int64)
    for got, want in zip(mpsim.unique(mpsim.tensor(rows).to(device), dim=0, return_inverse=True),
                         torch.unique(torch.from_numpy(rows), dim=0, return_inverse=True)):
        assert torch.equal(t(got), want)
    cuts = mpsim.tensor(np.array([1, 3], dtype=np.int64))
    for got, want in zip(mpsim.tensor_split(m, cuts), torch.tensor_split(ta, torch.tensor([1, 3]))):
        assert np.array_equal(got.numpy(), want.numpy(), equal_nan=True)
    assert len(mpsim.tensor_split(m, mpsim.tensor(np.array(2, dtype=np.int64)))) == 2


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_in_place_methods_write_into_self_as_torch(device):
    rng = np.random.default_rng(1)
    base = rng.standard_normal((4, 5)).astype(np.float32)
    src = rng.standard_normal((3, 5)).astype(np.float32)
    idx = np.array([[0, 1, 2, 2, 0]], dtype=np.int64)
    rows = np.array([2, 0], dtype=np.int64)
    mask = base[1:] > 0
    calls = [  # applied to the view x[1:] of a [4, 5] tensor x
        ("index_add_", (0, rows, src[:2]), {"alpha": 2}),
        ("index_copy_", (0, rows, src[:2]), {}),
        ("index_fill_", (1, rows, -1.5), {}),
        ("index_reduce_", (0, rows, src[:2], "amax"), {"include_self": False}),
        ("index_put_", ((rows,), src[0]), {"accumulate": True}),
        ("scatter_", (0, idx, src), {}),
        ("scatter_add_", (0, idx, src), {}),
        ("scatter_reduce_", (0, idx, src, "mean"), {}),
        ("masked_scatter_", (mask, src), {}),
        ("put_", (rows, src[0, :2]), {"accumulate": True}),
        ("masked_fill_", (mask, 0.5), {}),
    ]

    def convert(a, to_mpsim):
        if isinstance(a, np.ndarray):
            return mpsim.tensor(a).to(device) if to_mpsim else torch.from_numpy(a.copy())
        if isinstance(a, tuple):
            return tuple(convert(b, to_mpsim) for b in a)
        return a

    for name, args, kwargs in calls:
        m, tm = mpsim.tensor(base).to(device), torch.from_numpy(base.copy())
        view = m[1:]
        assert getattr(view, name)(*convert(args, True), **kwargs) is view
        getattr(tm[1:], name)(*convert(args, False), **kwargs)
        np.testing.assert_allclose(m.to("cpu").numpy(), tm.numpy(), rtol=1e-6, err_msg=name)


NAN, INF = float("nan"), float("inf")


def f32(*values):
    return np.array(values, dtype=np.float32)


def test_histc_does_not_count_nan():
    """torch 1.13's cpu counts NaN in the first bin (pytorch/pytorch#85853, fixed by #85870 to
    skip them, as its cuda kernel does): mpsim skips them."""
    got = mpsim.histc(mpsim.tensor(f32(0, NAN, 2, NAN)), bins=2, min=0, max=2)
    np.testing.assert_array_equal(got.numpy(), f32(1, 1))


@pytest.mark.parametrize("name, args, kwargs", [
    ("searchsorted", (f32(3, -1, 2, NAN, 1, 0), f32(0.5, 2, NAN)), {}),
    ("searchsorted", (f32(3, -1, 2, NAN, 1, 0), f32(0.5, 2, NAN)), {"side": "right"}),
    ("searchsorted", (np.array([[1, 3, 5], [2, 2, 2]], np.float32), f32(2, 4).reshape(2, 1)), {}),
    ("searchsorted", (f32(-INF, 1, 2, 2, NAN), f32(NAN, 2, -INF, INF, 0)), {}),
    ("searchsorted", (f32(-INF, 1, 2, 2, NAN), f32(NAN, 2, -INF, INF, 0)), {"right": True}),
    ("searchsorted", (f32(3, 1, 2), f32(2.5, 0)), {"sorter": np.array([1, 2, 0])}),
    ("searchsorted", (np.zeros((0,), np.float32), f32(1, 2)), {}),
    ("bucketize", (f32(-0.0, 0, 1, 5), f32(0, 1)), {"right": True}),
    ("histc", (f32(0, 1, 2, 3, INF, -1, 4),), {"bins": 3, "min": 0, "max": 3}),
    ("histc", (f32(1, 1, 1),), {"bins": 4}),
    ("histc", (np.zeros((0,), np.float32),), {"bins": 2}),
    ("isin", (f32(NAN, 1, -0.0, 2), f32(0, NAN, 2)), {}),
    ("isin", (f32(1, 2), f32(1)), {"invert": True}),
    ("unique", (f32(2, -0.0, 0, 1, 1, -INF),), {"return_counts": True}),
    ("unique", (np.zeros((0, 3), np.float32),), {"return_inverse": True}),
    ("unique_consecutive", (f32(1, 1, 2, 2, 1),), {"return_inverse": True}),
    ("kron", (np.arange(8, dtype=np.float32).reshape(2, 2, 2), f32(1, -1)), {}),
    ("diag_embed", (np.arange(6, dtype=np.float32).reshape(2, 3),), {"offset": -2}),
    ("diagonal", (np.arange(24, dtype=np.float32).reshape(2, 3, 4),), {"offset": -5}),
    ("combinations", (f32(1, 2, 3),), {"r": 0}),
    ("combinations", (f32(1, 2),), {"r": 3}),
    ("repeat_interleave", (np.arange(4, dtype=np.float32).reshape(2, 2), np.array([0, 3])),
     {"dim": 0}),
    ("tensor_split", (np.arange(5, dtype=np.float32), [3, 1, 7]), {}),
    ("scatter_reduce", (f32(1, 2, 3), 0, np.array([0, 0, 2]), f32(NAN, 5, -INF), "amin"),
     {"include_self": False}),
    ("put", (f32(1, 2, 3), np.array([-1, -3]), f32(7, 8)), {}),
    ("nonzero", (f32(0, -0.0, NAN, INF),), {}),
    ("masked_select", (f32(NAN, 1), np.array([[True], [False]])), {}),
])
@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_special_values_match_torch(name, args, kwargs, device):
    def m(a):
        return mpsim.tensor(a).to(device) if isinstance(a, np.ndarray) else a

    def t(a):
        return torch.from_numpy(a.copy()) if isinstance(a, np.ndarray) else a

    got = getattr(mpsim, name)(*[m(a) for a in args], **{k: m(v) for k, v in kwargs.items()})
    want = getattr(torch, name)(*[t(a) for a in args], **{k: t(v) for k, v in kwargs.items()})
    got = got if isinstance(got, (tuple, list)) else (got,)
    want = want if isinstance(want, (tuple, list)) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g = g.to("cpu").numpy()
        assert g.shape == tuple(w.shape) and str(g.dtype) == str(w.numpy().dtype), name
        np.testing.assert_array_equal(g, w.numpy(), err_msg=name)

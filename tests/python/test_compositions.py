"""The Python compositions (mpsim.nn.functional's losses and distances, the float64
compositions of mpsim/_compositions.py, mpsim.masked) beyond op_db's samples
(tests/python/conformance.py runs those): float16 and bfloat16 results within an ulp of torch's
float64 on the same rounded inputs, mps giving the cpu's bytes, non-contiguous inputs, and the
error each bad input raises."""

import numpy as np
import pytest
import torch

import mpsim
import mpsim.nn.functional as F

RNG = np.random.default_rng(11)


def pair(*shape, dtype="float32", lo=-2.0, hi=2.0):
    a = RNG.uniform(lo, hi, shape)
    m = mpsim.tensor(a, dtype=getattr(mpsim, dtype))
    return m, torch.from_numpy(m.to(mpsim.float64).numpy())


def within_ulp(got, want):
    dtype = str(got.dtype).replace("mpsim.", "")
    g = got.to(mpsim.float64).to("cpu").numpy()
    w = want.numpy()
    t = {"float16": np.float16, "float32": np.float32}.get(dtype)
    if t is not None:
        spacing = np.spacing(np.abs(w).astype(t)).astype(np.float64)
    else:  # bfloat16: 8 significant bits
        spacing = np.abs(w) * 2.0 ** -7 + 1e-38
    assert g.shape == w.shape
    assert np.all(np.abs(g - w) <= spacing), (g, w)


LOSSES = [
    ("mse_loss", lambda F, x, t: F.mse_loss(x, t)),
    ("l1_loss", lambda F, x, t: F.l1_loss(x, t, reduction="sum")),
    ("smooth_l1_loss", lambda F, x, t: F.smooth_l1_loss(x, t, beta=0.5)),
    ("huber_loss", lambda F, x, t: F.huber_loss(x, t, reduction="none", delta=0.75)),
    ("soft_margin_loss", lambda F, x, t: F.soft_margin_loss(x, t)),
    ("kl_div", lambda F, x, t: F.kl_div(x, t, reduction="none", log_target=True)),
    ("poisson_nll_loss", lambda F, x, t: F.poisson_nll_loss(x, t, reduction="none")),
    ("binary_cross_entropy_with_logits",
     lambda F, x, t: F.binary_cross_entropy_with_logits(x, t, reduction="none")),
]


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("name,call", LOSSES, ids=[n for n, _ in LOSSES])
def test_losses_round_once_from_double(name, call, dtype):
    x, tx = pair(4, 6, dtype=dtype)
    t, tt = pair(4, 6, dtype=dtype)
    got = call(F, x, t)
    assert got.dtype == x.dtype
    within_ulp(got, call(torch.nn.functional, tx, tt))


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_non_contiguous_inputs_and_mps_bytes(device):
    x, tx = pair(6, 4)
    t, tt = pair(6, 4)
    xs, ts = x.to(device).transpose(0, 1), t.to(device).transpose(0, 1)
    got = F.cross_entropy(xs, F.softmax(ts, 1))
    assert got.device == device
    within_ulp(got.to("cpu"), torch.nn.functional.cross_entropy(tx.T, tt.T.softmax(1)))
    cpu = F.cross_entropy(x.transpose(0, 1), F.softmax(t.transpose(0, 1), 1))
    assert cpu.numpy().tobytes() == got.to("cpu").numpy().tobytes()
    within_ulp(mpsim.cdist(xs, ts).to("cpu"), torch.cdist(tx.T, tt.T))
    within_ulp(mpsim.addcmul(x, t, t, value=0.5), torch.addcmul(tx, tt, tt, value=0.5))
    within_ulp(mpsim.lerp(x, t, 0.25), torch.lerp(tx, tt, 0.25))


def test_masked_reductions_match_torch():
    x, tx = pair(3, 5)
    mask = RNG.random((3, 5)) < 0.5
    m, tm = mpsim.tensor(mask), torch.from_numpy(mask)
    within_ulp(mpsim.masked.sum(x, 1, mask=m), torch.masked.sum(tx, 1, mask=tm))
    within_ulp(mpsim.masked.var(x, 1, mask=m), torch.masked.var(tx, 1, mask=tm))
    got = mpsim.masked.amax(x, 1, mask=mpsim.zeros(3, 5, dtype=mpsim.bool))
    assert np.all(np.isneginf(got.numpy()))  # nothing kept: the identity, as torch


BAD = [
    (lambda: F.mse_loss(mpsim.ones(3), mpsim.ones(3), reduction="avg"),
     mpsim.InvalidArgumentError, "not a valid value for reduction"),
    (lambda: F.nll_loss(mpsim.ones(2, 3), mpsim.tensor([0, 3])), IndexError, "Target out of"),
    (lambda: F.nll_loss(mpsim.ones(2, 3), mpsim.ones(2)), mpsim.DTypeError, "integer dtype"),
    (lambda: F.binary_cross_entropy(mpsim.full([2], 1.5), mpsim.ones(2)),
     mpsim.InvalidArgumentError, "between 0 and 1"),
    (lambda: F.gaussian_nll_loss(mpsim.ones(2), mpsim.ones(2), -mpsim.ones(2)),
     mpsim.InvalidArgumentError, "negative"),
    (lambda: F.pixel_shuffle(mpsim.ones(1, 5, 2, 2), 2), mpsim.InvalidArgumentError,
     "not divisible"),
    (lambda: F.prelu(mpsim.ones(2, 3), mpsim.ones(2)), mpsim.ShapeError, "weight"),
    (lambda: mpsim.cdist(mpsim.ones(2, 3), mpsim.ones(2, 4)), mpsim.ShapeError, "one M"),
    (lambda: mpsim.quantile(mpsim.ones(3), 1.5), mpsim.InvalidArgumentError, "range [0, 1]"),
    (lambda: mpsim.addcdiv(mpsim.ones(2), mpsim.ones(2, dtype=mpsim.int64),
                           mpsim.ones(2, dtype=mpsim.int64)), mpsim.DTypeError, "integer"),
    (lambda: mpsim.frexp(mpsim.ones(2, dtype=mpsim.int32)), mpsim.DTypeError, "floating"),
    (lambda: mpsim.masked.sum(mpsim.ones(2), mask=mpsim.ones(1, 2, dtype=mpsim.bool)),
     IndexError, "broadcastable mask"),
    (lambda: mpsim.einsum("ij,jk->ik", mpsim.ones(2, 3), mpsim.ones(2, 3)), mpsim.ShapeError,
     "einsum"),
]


@pytest.mark.parametrize("call,error,message", BAD, ids=[str(i) for i in range(len(BAD))])
def test_bad_inputs_raise_clear_errors(call, error, message):
    with pytest.raises(error, match=message.replace("[", r"\[").replace("]", r"\]")):
        call()


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_pools_resize_and_sampling_against_torch(device):
    x, tx = pair(2, 3, 6, 7, 5)
    within_ulp(F.avg_pool3d(x.to(device), 3, 2, 1, count_include_pad=False).to("cpu"),
               torch.nn.functional.avg_pool3d(tx, 3, 2, 1, count_include_pad=False))
    v, i = F.max_pool3d(x.to(device), 2, return_indices=True)
    tv, ti = torch.nn.functional.max_pool3d(tx, 2, return_indices=True)
    within_ulp(v.to("cpu"), tv)
    np.testing.assert_array_equal(i.to("cpu").numpy(), ti.numpy())
    within_ulp(F.adaptive_avg_pool3d(x, (2, 3, 4)),
               torch.nn.functional.adaptive_avg_pool3d(tx, (2, 3, 4)))
    y, ty = pair(2, 3, 5, 6)
    for mode, align in (("bicubic", True), ("bicubic", False), ("area", None)):
        within_ulp(F.interpolate(y.to(device), size=(7, 4), mode=mode,
                                 align_corners=align).to("cpu"),
                   torch.nn.functional.interpolate(ty, size=(7, 4), mode=mode,
                                                   align_corners=align))
    grid, tgrid = pair(2, 4, 3, 2, lo=-1.2, hi=1.2)
    for padding in ("zeros", "border", "reflection"):
        within_ulp(F.grid_sample(y, grid, padding_mode=padding, align_corners=False),
                   torch.nn.functional.grid_sample(ty, tgrid, padding_mode=padding,
                                                   align_corners=False))


def test_non_contiguous_and_half_inputs_of_the_compositions():
    x, tx = pair(5, 8, dtype="float16")
    xt = x.transpose(0, 1)
    within_ulp(mpsim.nanmean(xt, 1), torch.nanmean(tx.T, 1))
    within_ulp(mpsim.quantile(x.to(mpsim.float32), 0.3, dim=0),
               torch.quantile(tx.float().double(), 0.3, dim=0))
    got = mpsim.fft.fftshift(xt)
    assert got.numpy().tobytes() == torch.fft.fftshift(
        torch.from_numpy(xt.numpy())).numpy().tobytes()
    u = xt.unfold(1, 2, 2)
    np.testing.assert_array_equal(u.to(mpsim.float32).numpy(),
                                  tx.T.unfold(1, 2, 2).float().numpy())


BAD_MORE = [
    (lambda: F.grid_sample(mpsim.ones(1, 1, 2, 2, 2), mpsim.ones(1, 2, 2, 2, 3),
                           mode="bicubic"), mpsim.InvalidArgumentError, "only supports 4D"),
    (lambda: F.interpolate(mpsim.ones(1, 1, 4), size=3, mode="bilinear"),
     mpsim.UnsupportedError, "needs a 4-d input"),
    (lambda: F.max_pool3d(mpsim.ones(1, 1, 4, 4, 4), 2, padding=2), mpsim.InvalidArgumentError,
     "at most half"),
    (lambda: mpsim.ones(3).unfold(0, 4, 1), mpsim.ShapeError, "maximum size"),
    (lambda: mpsim.histogram(mpsim.ones(3, dtype=mpsim.int64), 4), mpsim.DTypeError,
     "floating point"),
    (lambda: mpsim.broadcast_shapes((2, 3), (4,)), mpsim.ShapeError, "broadcast_shapes"),
]


@pytest.mark.parametrize("call,error,message", BAD_MORE,
                         ids=[str(i) for i in range(len(BAD_MORE))])
def test_more_bad_inputs(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_with_negative_pads_and_circular(mode):
    x, tx = pair(1, 2, 5, 6)
    for pads in ((-1, 2, 1, -2), (2, 1, 1, 0), (-2, -1, 0, 0)):
        got = F.pad(x, pads, mode=mode)
        want = torch.nn.functional.pad(tx, pads, mode=mode)
        np.testing.assert_array_equal(got.to(mpsim.float64).numpy(), want.numpy())


def test_gather_of_a_0d_input():
    x, tx = pair(1)
    x, tx = x.reshape([]), tx.reshape([])
    idx = mpsim.tensor([0, 0])
    within_ulp(mpsim.gather(x, 0, idx), torch.gather(tx, 0, torch.tensor([0, 0])))

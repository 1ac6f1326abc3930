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

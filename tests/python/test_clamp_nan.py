"""A NaN bound of clamp gives NaN everywhere (docs/ops.md, Selection): IEEE propagation, and what
PyTorch 1.13 gives on every path but one. Its CPU kernel for a single scalar NaN bound (min only
or max only) returns x instead; mpsim does not copy that inconsistency."""

import numpy as np
import torch

import mpsim

X = [-1.0, 0.5, 2.0, float("nan")]
NAN = float("nan")


def _np(t):
    return np.array(t.tolist(), dtype=np.float64)


def test_a_nan_bound_gives_nan_as_torch_on_its_consistent_paths():
    x, tx = mpsim.tensor(X), torch.tensor(X)
    tn = torch.full((4,), NAN)
    cases = [
        (mpsim.clamp(x, min=NAN, max=1.0), torch.clamp(tx, min=NAN, max=1.0)),
        (mpsim.clamp(x, min=0.0, max=NAN), torch.clamp(tx, min=0.0, max=NAN)),
        (mpsim.clamp(x, min=mpsim.full((4,), NAN)), torch.clamp(tx, min=tn)),
        (mpsim.clamp(x, max=mpsim.full((4,), NAN)), torch.clamp(tx, max=tn)),
        (mpsim.clamp_min(x, NAN), torch.clamp_min(tx, NAN)),
        (mpsim.clamp_max(x, NAN), torch.clamp_max(tx, NAN)),
    ]
    for got, want in cases:
        assert np.array_equal(_np(got), _np(want), equal_nan=True)
        assert np.isnan(_np(got)).all()


def test_a_single_scalar_nan_bound_gives_nan_where_torch_1_13_cpu_gives_x():
    x = mpsim.tensor(X)
    for out in (mpsim.clamp(x, min=NAN), mpsim.clamp(x, max=NAN)):
        assert np.isnan(_np(out)).all()

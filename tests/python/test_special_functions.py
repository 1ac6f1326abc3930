"""The special functions of the math family added with torch.special's names (K0/K1 and their
scaled forms, zeta, igamma/igammac, the orthogonal polynomials, polygamma) at their special
values and across their domains, against torch's float64 (Cephes' algorithms, accurate to a
few double ULPs there), in float32 on cpu and mps."""

import numpy as np
import pytest
import torch

import mpsim

INF, NAN = float("inf"), float("nan")


def check(got, want, ulps=1):
    g = got.to("cpu").numpy().astype(np.float64)
    w = want.numpy()
    w32 = w.astype(np.float32).astype(np.float64)
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg="NaN pattern")
    fin = np.isfinite(w)
    np.testing.assert_array_equal(g[~fin & ~np.isnan(w)], w[~fin & ~np.isnan(w)])
    spacing = np.spacing(np.abs(w32[fin]).astype(np.float32)).astype(np.float64)
    assert np.all(np.abs(g[fin] - w[fin]) <= ulps * spacing + 1e-45), (g, w)


@pytest.mark.parametrize("device", ["cpu", "mps"])
@pytest.mark.parametrize("name", ["modified_bessel_k0", "modified_bessel_k1",
                                  "scaled_modified_bessel_k0", "scaled_modified_bessel_k1"])
def test_bessel_k(name, device):
    x = np.concatenate([[0.0, -0.0, -1.0, INF, NAN, 1e-30, 1e-7, 700.0],
                        np.geomspace(1e-3, 80, 200)]).astype(np.float32)
    got = getattr(mpsim.special, name)(mpsim.tensor(x).to(device))
    check(got, getattr(torch.special, name)(torch.from_numpy(x).double()))


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_zeta_and_incomplete_gamma(device):
    rng = np.random.default_rng(3)
    s = np.concatenate([[1.0, 0.5, 2.0, 2.0, 3.0, NAN, INF],
                        rng.uniform(1.01, 30, 300)]).astype(np.float32)
    q = np.concatenate([[2.0, 2.0, 0.0, -2.0, -1.5, 1.0, 1.0],
                        rng.uniform(0.01, 50, 300)]).astype(np.float32)
    got = mpsim.special.zeta(mpsim.tensor(s).to(device), mpsim.tensor(q).to(device))
    check(got, torch.special.zeta(torch.from_numpy(s).double(), torch.from_numpy(q).double()))
    a = np.concatenate([[0.0, 0.0, -1.0, 1.0, 2.0, INF, 3.0],
                        rng.uniform(0.01, 60, 300)]).astype(np.float32)
    x = np.concatenate([[1.0, 0.0, 1.0, -1.0, 0.0, 1.0, INF],
                        rng.uniform(0.0, 80, 300)]).astype(np.float32)
    for name in ("igamma", "igammac"):
        got = getattr(mpsim, name)(mpsim.tensor(a).to(device), mpsim.tensor(x).to(device))
        want = getattr(torch, name)(torch.from_numpy(a).double(), torch.from_numpy(x).double())
        # where the result is 1 - (something below 2^-24) it rounds to 1 either way; elsewhere
        # within 2 ulp (the series or fraction plus exp(log prefix) in double)
        check(got, want, ulps=2)


POLYS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
         "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
         "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
         "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
         "laguerre_polynomial_l", "legendre_polynomial_p"]


@pytest.mark.parametrize("device", ["cpu", "mps"])
@pytest.mark.parametrize("name", POLYS)
def test_polynomials(name, device):
    rng = np.random.default_rng(5)
    x = np.concatenate([[1.0, -1.0, 0.0, 1.0, -1.0, 0.5, NAN],
                        rng.uniform(-1.2, 1.2, 200)]).astype(np.float32)
    n = np.concatenate([[3, 3, 2, -1, 4, 0, 2], rng.integers(0, 12, 200)]).astype(np.int64)
    got = getattr(mpsim.special, name)(mpsim.tensor(x).to(device), mpsim.tensor(n).to(device))
    want = getattr(torch.special, name)(torch.from_numpy(x).double(), torch.from_numpy(n))
    # torch's float64 recurrence and mpsim's agree to a few double ULPs; where the polynomial
    # cancels to near 0 both are accurate in absolute terms only
    g = got.to("cpu").numpy().astype(np.float64)
    w = want.numpy()
    np.testing.assert_array_equal(np.isnan(g), np.isnan(w))
    ok = np.isnan(w) | (np.abs(g - w) <= np.spacing(np.abs(w).astype(np.float32)) + 1e-12)
    assert ok.all(), (x[~ok], n[~ok], g[~ok], w[~ok])


def test_high_degree_chebyshev_closed_form():
    x = torch.linspace(-0.99, 0.99, 101, dtype=torch.float64)
    n = torch.full((101,), 200, dtype=torch.int64)
    for name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u"):
        got = getattr(mpsim.special, name)(mpsim.tensor(x.numpy()), mpsim.tensor(n.numpy()))
        want = getattr(torch.special, name)(x, n)  # torch's trig form above degree 6
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-10, atol=1e-10)


def test_polygamma():
    x = torch.tensor([0.25, 1.0, 3.5, 10.0, -0.5], dtype=torch.float64)
    for n in (0, 1, 2, 3):
        got = mpsim.polygamma(n, mpsim.tensor(x.numpy().astype(np.float32)))
        check(got, torch.polygamma(n, x.float().double()))
    with pytest.raises(mpsim.InvalidArgumentError, match="negative n"):
        mpsim.special.polygamma(-1, mpsim.ones(2))

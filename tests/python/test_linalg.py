"""mpsim.linalg's Python layer against torch (float64 on the same float32 inputs): the named
tuples, the numeric orders of norm/vector_norm/matrix_norm/cond, torch's older names and
Tensor methods, the errors torch raises. The kernels' values: tests/lapack_test.cc and the
cases of tests/cases/op_cases.json."""

import numpy as np
import pytest
import torch

import mpsim

RNG = np.random.default_rng(7)


def pair(*shape, shift=0.0):
    a = RNG.uniform(-1, 1, shape).astype(np.float32)
    if shift:
        a = a + np.float32(shift) * np.eye(shape[-1], dtype=np.float32)
    return mpsim.tensor(a), torch.from_numpy(a.astype(np.float64))


def ulp_close(got, want, ulps=1):
    g = np.asarray(got.numpy(), dtype=np.float64)
    w = want.numpy().astype(np.float32).astype(np.float64)
    spacing = np.spacing(np.abs(want.numpy().astype(np.float32))).astype(np.float64)
    assert g.shape == w.shape
    assert np.all(np.abs(g - want.numpy()) <= ulps * spacing + 1e-30), (g, want.numpy())


def test_named_tuples_have_torchs_fields():
    a, t = pair(4, 3)
    svd = mpsim.linalg.svd(a, full_matrices=False)
    assert svd.U.shape == (4, 3) and svd.S.shape == (3,) and svd.Vh.shape == (3, 3)
    ulp_close(svd.S, torch.linalg.svdvals(t))
    qr = mpsim.linalg.qr(a)
    assert qr.Q.shape == (4, 3) and qr.R.shape == (3, 3)
    lst = mpsim.linalg.lstsq(a, mpsim.tensor(np.ones((4, 2), np.float32)), driver="gelsd")
    assert lst.rank.dtype is mpsim.int64 and lst.singular_values.shape == (3,)
    assert lst.residuals.shape == (2,)
    s, m = pair(3, 3, shift=2.0)
    sign, logabs = mpsim.linalg.slogdet(s)
    ts, tl = torch.linalg.slogdet(m)
    assert float(sign.item()) == float(ts) and abs(float(logabs.item()) - float(tl)) < 1e-6
    assert mpsim.linalg.lu_factor(s).pivots.dtype is mpsim.int32
    assert mpsim.svd(s).V.shape == (3, 3)
    assert mpsim.geqrf(s).tau.shape == (3,)


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, float("inf"), -float("inf")])
def test_matrix_norm_orders(ord):
    a, t = pair(2, 3, 4)
    ulp_close(mpsim.linalg.matrix_norm(a, ord), torch.linalg.matrix_norm(t, ord))
    ulp_close(mpsim.linalg.matrix_norm(a, ord, dim=(0, 2), keepdim=True),
              torch.linalg.matrix_norm(t, ord, dim=(0, 2), keepdim=True))


@pytest.mark.parametrize("ord", [None, 1, 3.5, float("inf"), 0])
def test_vector_norm_and_norm(ord):
    a, t = pair(3, 5)
    o = 2 if ord is None else ord
    ulp_close(mpsim.linalg.vector_norm(a, o, dim=1), torch.linalg.vector_norm(t, o, dim=1))
    ulp_close(mpsim.linalg.norm(a, ord, dim=1), torch.linalg.norm(t, ord, dim=1))
    if ord is None:
        ulp_close(mpsim.linalg.norm(a), torch.linalg.norm(t))


@pytest.mark.parametrize("p", [None, 2, -2, 1, "fro", "nuc", float("inf")])
def test_cond(p):
    a, t = pair(2, 4, 4, shift=1.5)
    ulp_close(mpsim.linalg.cond(a, p), torch.linalg.cond(t, p), ulps=2)


def test_torch_names_and_methods():
    a, t = pair(3, 3, shift=2.0)
    ulp_close(a.det(), torch.det(t))
    ulp_close(a.inverse(), torch.inverse(t))
    ulp_close(mpsim.matrix_power(a, 3), torch.matrix_power(t, 3))
    ulp_close(a.matrix_exp(), torch.matrix_exp(t))
    x, y = pair(3)
    ulp_close(mpsim.dot(x, x), torch.dot(y, y))
    ulp_close(mpsim.mv(a, x), torch.mv(t, y))
    assert not hasattr(a, "linalg_det")  # torch has no such method


def test_errors_are_torchs_kinds():
    singular = mpsim.zeros(2, 3, 3)
    with pytest.raises(mpsim.linalg.LinAlgError, match=r"\(Batch element 0\): The diagonal "
                       r"element 1 is zero"):
        mpsim.linalg.inv(singular)
    assert issubclass(mpsim.linalg.LinAlgError, RuntimeError)
    with pytest.raises(RuntimeError, match="not positive-definite"):
        mpsim.linalg.cholesky(-mpsim.ones(2, 2))
    with pytest.raises(ValueError, match="square"):
        mpsim.linalg.det(mpsim.ones(2, 3))
    with pytest.raises(TypeError, match="floating point"):
        mpsim.linalg.inv(mpsim.ones(2, 2, dtype=mpsim.int64))
    with pytest.raises(ValueError, match="Order 3 not supported"):
        mpsim.linalg.matrix_norm(mpsim.ones(2, 2), 3)


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_batches_broadcast_and_mps_gives_cpus_bits(device):
    a, t = pair(2, 1, 3, 3, shift=2.0)
    b, u = pair(4, 3, 2)
    x = mpsim.linalg.solve(a.to(device), b.to(device))
    assert x.shape == (2, 4, 3, 2) and x.device == device
    ulp_close(x.to("cpu"), torch.linalg.solve(t, u))
    cpu = mpsim.linalg.solve(a, b).numpy()
    assert cpu.tobytes() == x.to("cpu").numpy().tobytes()


def test_verdicts_bound_the_vector_products_and_refuse_conditioned_ops():
    from mpsim.testing import error_bound
    a, t = pair(4, 6)
    v, u = pair(6)
    bound = error_bound("mv", a, v)  # per element, against the exact product
    got = mpsim.mv(a, v).numpy().astype(np.float64)
    exact = torch.mv(t, u).numpy()
    assert bound.shape == (4,) and np.all(np.abs(got - exact) <= bound)
    with pytest.raises(ValueError, match="condition"):
        error_bound("linalg_inv", a[:4, :4])


def _ldl_reconstruct(ld, piv):
    """P^T L D L^T P from LAPACK's compact lower LDL^T (float64 NumPy), written for the test
    from LAPACK's documentation of sytrf: A = L D L^T with L = P(1) L(1) ... P(k) L(k)."""
    n = ld.shape[0]
    a = np.zeros((n, n))
    u = np.eye(n)  # the product of P(k) L(k) so far
    d = np.zeros((n, n))
    k = 0
    while k < n:
        s = 1 if piv[k] > 0 else 2
        kp = abs(int(piv[k])) - 1
        lk = np.eye(n)
        lk[k + s:, k:k + s] = ld[k + s:, k:k + s]
        d[k:k + s, k:k + s] = ld[k:k + s, k:k + s]
        if s == 2:
            d[k, k + 1] = d[k + 1, k]
        p = np.eye(n)
        r = k + s - 1
        p[[r, kp]] = p[[kp, r]]
        u = u @ p @ lk
        k += s
    return u @ d @ u.T


@pytest.mark.parametrize("n", [1, 2, 5, 9])
def test_ldl_factor_reconstructs_and_takes_lapacks_pivots(n):
    sym = RNG.uniform(-1, 1, (3, n, n))
    sym = sym + np.swapaxes(sym, -1, -2)
    sym[0] = np.diag(np.arange(1.0, n + 1))  # no interchange
    sym[1, np.arange(n), np.arange(n)] *= 1e-3  # small diagonal: 2x2 pivots
    a32 = sym.astype(np.float32)
    LD, piv = mpsim.linalg.ldl_factor(mpsim.tensor(a32))
    tLD, tpiv = torch.linalg.ldl_factor(torch.from_numpy(a32.astype(np.float64)))
    assert LD.dtype is mpsim.float32 and piv.dtype is mpsim.int32
    np.testing.assert_array_equal(piv.numpy(), tpiv.numpy())  # LAPACK's pivots, 1-based
    ulp_close(LD, tLD, ulps=2)
    for b in range(3):
        rebuilt = _ldl_reconstruct(LD.numpy()[b].astype(np.float64), piv.numpy()[b])
        assert np.allclose(rebuilt, a32[b], atol=1e-5 * np.abs(a32[b]).max())
    assert np.all(np.triu(LD.numpy(), 1) == 0)


def test_ldl_solve_and_errors():
    a, _ = pair(2, 4, 4)
    a = a + a.mT
    LD, piv = mpsim.linalg.ldl_factor(a)
    b = mpsim.tensor(RNG.uniform(-1, 1, (4, 3)).astype(np.float32))
    x = mpsim.linalg.ldl_solve(LD, piv, b)  # b broadcasts against the batch
    assert x.shape == (2, 4, 3)
    # the oracle: the matrix the float32 factors represent, solved in float64 by torch
    rebuilt = np.stack([_ldl_reconstruct(LD.numpy()[i].astype(np.float64), piv.numpy()[i])
                        for i in range(2)])
    want = torch.linalg.solve(torch.from_numpy(rebuilt),
                              torch.from_numpy(b.numpy().astype(np.float64)))
    ulp_close(x, want, ulps=1)
    ex = mpsim.linalg.ldl_factor_ex(mpsim.zeros(3, 3))
    assert ex.info.item() == 1 and ex.pivots.numpy().tolist() == [1, 2, 3]
    with pytest.raises(mpsim.linalg.LinAlgError, match="ldl_factor"):
        mpsim.linalg.ldl_factor(mpsim.zeros(3, 3))
    with pytest.raises(RuntimeError, match="square"):
        mpsim.linalg.ldl_factor(mpsim.zeros(3, 4))
    with pytest.raises(TypeError, match="floating"):
        mpsim.linalg.ldl_factor(mpsim.zeros(3, 3, dtype=mpsim.int64))
    with pytest.raises(ValueError, match="Incompatible"):
        mpsim.linalg.ldl_solve(LD, piv, mpsim.zeros(5, 2))
    with pytest.raises(TypeError, match="same dtype"):
        mpsim.linalg.ldl_solve(LD, piv, mpsim.zeros(4, 2, dtype=mpsim.float64))
    assert mpsim.linalg.ldl_factor(mpsim.zeros(0, 3, 3)).LD.shape == (0, 3, 3)

"""mpsim.linalg: torch.linalg's functions under their torch names (docs/ops.md, "Linear
algebra in double"). Each matrix is computed in double and every output rounded once; results
with several parts are named tuples with torch's field names (svd(A).U, eigh(A).eigenvalues).
The ops are mpsim's `linalg_<name>` (cpu and mps); norm, vector_norm, matrix_norm and cond take
torch's numeric orders here."""

import collections
import math

from . import _C

LinAlgError = _C.LinAlgError


def _named(function, type_name, fields):
    result = collections.namedtuple(type_name, fields)

    def call(*args, **kwargs):
        return result(*function(*args, **kwargs))

    call.__name__ = function.__name__
    call.__doc__ = function.__doc__
    return call


cholesky = _C.linalg_cholesky
cholesky_ex = _named(_C.linalg_cholesky_ex, "linalg_cholesky_ex", ["L", "info"])
det = _C.linalg_det
slogdet = _named(_C.linalg_slogdet, "linalg_slogdet", ["sign", "logabsdet"])
inv = _C.linalg_inv
inv_ex = _named(_C.linalg_inv_ex, "linalg_inv_ex", ["inverse", "info"])
solve = _C.linalg_solve
solve_ex = _named(_C.linalg_solve_ex, "linalg_solve_ex", ["result", "info"])
solve_triangular = _C.linalg_solve_triangular
lu = _named(_C.linalg_lu, "linalg_lu", ["P", "L", "U"])
lu_factor = _named(_C.linalg_lu_factor, "linalg_lu_factor", ["LU", "pivots"])
lu_factor_ex = _named(_C.linalg_lu_factor_ex, "linalg_lu_factor_ex", ["LU", "pivots", "info"])
lu_solve = _C.linalg_lu_solve
qr = _named(_C.linalg_qr, "linalg_qr", ["Q", "R"])
eigh = _named(_C.linalg_eigh, "linalg_eigh", ["eigenvalues", "eigenvectors"])
eigvalsh = _C.linalg_eigvalsh
eig = _named(_C.linalg_eig, "linalg_eig", ["eigenvalues", "eigenvectors"])
eigvals = _C.linalg_eigvals
svd = _named(_C.linalg_svd, "linalg_svd", ["U", "S", "Vh"])
svdvals = _C.linalg_svdvals
lstsq = _named(_C.linalg_lstsq, "linalg_lstsq",
               ["solution", "residuals", "rank", "singular_values"])
householder_product = _C.linalg_householder_product
matrix_power = _C.linalg_matrix_power
matrix_exp = _C.linalg_matrix_exp
multi_dot = _C.linalg_multi_dot
tensorinv = _C.linalg_tensorinv
tensorsolve = _C.linalg_tensorsolve
vander = _C.linalg_vander
vecdot = _C.linalg_vecdot
cross = _C.linalg_cross
matmul = _C.matmul


def _per_matrix(op, A, atol, rtol, hermitian):
    """op(A, atol, rtol, hermitian) where atol or rtol is a tensor broadcast against A's batch
    dims (torch's): one call per matrix with its own tolerances, the results stacked."""
    import itertools

    import numpy as np
    tensors = [t for t in (atol, rtol) if isinstance(t, _C.Tensor)]
    shape = list(np.broadcast_shapes(tuple(A.shape[:-2]), *(tuple(t.shape) for t in tensors)))
    a = A.broadcast_to(shape + list(A.shape[-2:])).contiguous()
    if not shape:
        return op(a, *(float(t.item()) if isinstance(t, _C.Tensor) else t
                       for t in (atol, rtol)), hermitian)
    if any(n == 0 for n in shape):
        return op(a, None, None, hermitian)

    def values(t):
        if not isinstance(t, _C.Tensor):
            return None
        return t.broadcast_to(shape).to("cpu").to(_C.float64).contiguous().numpy()
    atols, rtols = values(atol), values(rtol)
    outs = []
    for idx in itertools.product(*[range(n) for n in shape]):
        m = a
        for i in idx:
            m = m[i]
        outs.append(op(m, atol if atols is None else float(atols[idx]),
                       rtol if rtols is None else float(rtols[idx]), hermitian))
    return _C.stack(outs).reshape(shape + list(outs[0].shape))


def pinv(A, rcond=None, hermitian=False, *, atol=None, rtol=None):
    """The pseudoinverse; rcond (torch's older name) is rtol; tolerances may be tensors
    broadcast against the batch."""
    if rcond is not None:
        rtol = rcond
    if isinstance(atol, _C.Tensor) or isinstance(rtol, _C.Tensor):
        return _per_matrix(_C.linalg_pinv, A, atol, rtol, hermitian)
    return _C.linalg_pinv(A, atol, rtol, hermitian)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The numerical rank; tol (torch's older name) is atol with rtol 0; tolerances may be
    tensors broadcast against the batch."""
    if tol is not None:
        atol, rtol = tol, 0.0
    if isinstance(atol, _C.Tensor) or isinstance(rtol, _C.Tensor):
        return _per_matrix(_C.linalg_matrix_rank, A, atol, rtol, hermitian)
    return _C.linalg_matrix_rank(A, atol, rtol, hermitian)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    return _C.diagonal(A, offset, dim1, dim2)


def _ord_text(op, ord):
    if isinstance(ord, str):
        return ord
    if isinstance(ord, bool) or not isinstance(ord, (int, float)):
        raise _C.InvalidArgumentError(f"[{op}] ord must be a number or a string, got {ord!r}")
    if math.isinf(ord):
        return "inf" if ord > 0 else "-inf"
    if ord in (1, -1, 2, -2):
        return str(int(ord))
    raise _C.InvalidArgumentError(
        f"[{op}] Order {ord} not supported (expected 'fro', 'nuc', 1, -1, 2, -2, inf or -inf)")


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """A matrix norm over dim: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf, in double."""
    if dtype is not None:
        A = A.to(dtype)
    return _C.linalg_matrix_norm(A, _ord_text("linalg.matrix_norm", ord), list(dim), keepdim)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """(sum |x|^ord)^(1/ord) over dim (None: every element); inf, -inf: max, min |x|; 0: the
    count of nonzeros (mpsim's norm)."""
    from ._forms import norm
    if dtype is not None:
        x = x.to(dtype)
    if isinstance(dim, int):
        dim = [dim]
    return norm(x, float(ord), dim, keepdim)


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a vector norm over one dim (or all, ord None), a matrix norm over two
    dims (or of a 2-d input with ord given)."""
    if isinstance(dim, int):
        dim = (dim,)
    if dim is not None and len(dim) == 2 or (dim is None and ord is not None and A.dim() == 2):
        return matrix_norm(A, "fro" if ord is None else ord, (-2, -1) if dim is None else dim,
                           keepdim, dtype=dtype)
    if dim is None and ord is not None and A.dim() != 1:
        raise _C.ShapeError("[linalg.norm] input must be 1-D or 2-D when ord is given and dim "
                            f"is None, got {A.dim()}-D")
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cond(A, p=None):
    """The condition number: s_max / s_min for p None or 2 (-2: s_min / s_max), else
    |A|_p |A^-1|_p (inf for a singular A)."""
    return _C.linalg_cond(A, None if p is None else _ord_text("linalg.cond", p))


# torch's older names at module level (mpsim.svd, mpsim.qr, ...), with their named tuples.
TORCH_LEVEL = {
    "svd": _named(_C.svd, "svd", ["U", "S", "V"]),
    "qr": _named(_C.qr, "qr", ["Q", "R"]),
    "slogdet": _named(_C.slogdet, "slogdet", ["sign", "logabsdet"]),
    "geqrf": _named(_C.geqrf, "geqrf", ["a", "tau"]),
    "lu_unpack": _named(_C.lu_unpack, "lu_unpack", ["P", "L", "U"]),
    "symeig": _named(_C.symeig, "symeig", ["eigenvalues", "eigenvectors"]),
    "triangular_solve": _named(_C.triangular_solve, "triangular_solve",
                               ["solution", "cloned_coefficient"]),
}


# --- LDL^T (Bunch-Kaufman) ------------------------------------------------------------------
# torch.linalg.ldl_factor is LAPACK's sytrf with the lower triangle: P A P^T = L D L^T with D
# of 1x1 and 2x2 blocks, L unit lower triangular, stored compactly in LD (L below the diagonal,
# D on it and, for a 2x2 block, just below it; the upper triangle zero) with LAPACK's 1-based
# pivots (a 2x2 block's two entries both -kp). mpsim runs the same pivoting in float64 on each
# matrix (LAPACK's unblocked sytf2, which sytrf uses for matrices below its block size of 64)
# and rounds LD once. ldl_solve solves with the given factors in float64, rounded once.

_LDL_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _first_argmax(v):
    import numpy as np
    a = np.abs(v)
    return int(np.argmax(a)), float(a.max())


def _sytf2_lower(a):
    """Factors the float64 matrix a in place; returns (pivots, info) as LAPACK's dsytf2 with
    uplo 'L' (1-based pivots, info the first zero pivot)."""
    import numpy as np
    n = a.shape[0]
    piv = np.zeros(n, dtype=np.int64)
    info, k = 0, 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k])
        if k < n - 1:
            i, colmax = _first_argmax(a[k + 1:, k])
            imax = k + 1 + i
        else:
            imax, colmax = k, 0.0
        if max(absakk, colmax) == 0.0 or math.isnan(absakk):
            if info == 0:
                info = k + 1
            kp = k
        else:
            if absakk >= _LDL_ALPHA * colmax:
                kp = k
            else:
                j, rowmax = _first_argmax(a[imax, k:imax])
                if imax < n - 1:
                    _, m2 = _first_argmax(a[imax + 1:, imax])
                    rowmax = max(rowmax, m2)
                if absakk >= _LDL_ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif abs(a[imax, imax]) >= _LDL_ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:  # interchange rows and columns kk and kp of the trailing part
                if kp < n - 1:
                    t = a[kp + 1:, kk].copy()
                    a[kp + 1:, kk] = a[kp + 1:, kp]
                    a[kp + 1:, kp] = t
                t = a[kk + 1:kp, kk].copy()
                a[kk + 1:kp, kk] = a[kp, kk + 1:kp]
                a[kp, kk + 1:kp] = t
                a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
                if kstep == 2:
                    a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
            if kstep == 1:
                if k < n - 1:
                    d11 = 1.0 / a[k, k]
                    x = a[k + 1:, k].copy()
                    a[k + 1:, k + 1:] -= np.tril(d11 * np.outer(x, x))
                    a[k + 1:, k] *= d11
            elif k < n - 2:
                d21 = a[k + 1, k]
                d11 = a[k + 1, k + 1] / d21
                d22 = a[k, k] / d21
                t = 1.0 / (d11 * d22 - 1.0)
                d21 = t / d21
                for j in range(k + 2, n):
                    wk = d21 * (d11 * a[j, k] - a[j, k + 1])
                    wkp1 = d21 * (d22 * a[j, k + 1] - a[j, k])
                    a[j:, j] -= a[j:, k] * wk + a[j:, k + 1] * wkp1
                    a[j, k] = wk
                    a[j, k + 1] = wkp1
        if kstep == 1:
            piv[k] = kp + 1
        else:
            piv[k] = piv[k + 1] = -(kp + 1)
        k += kstep
    return piv, info


def _ldl_check(op, A):
    if A.dim() < 2:
        raise _C.ShapeError(f"[{op}] The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise _C.ShapeError(f"[{op}] A must be batches of square matrices, but they are "
                            f"{A.shape[-2]} by {A.shape[-1]} matrices")
    if not A.dtype.is_floating_point:
        raise _C.DTypeError(f"[{op}] Expected a floating point tensor as input. Got {A.dtype}")


def _ldl(op, A, check_errors):
    import numpy as np
    _ldl_check(op, A)
    shape = tuple(A.shape)
    count = int(np.prod(shape[:-2], dtype=np.int64))
    a = A.to("cpu").to(_C.float64).contiguous().numpy().reshape((count,) + shape[-2:]).copy()
    pivots = np.zeros(a.shape[:2], dtype=np.int32)
    infos = np.zeros(a.shape[0], dtype=np.int32)
    for b in range(a.shape[0]):
        m = np.tril(a[b])
        piv, info = _sytf2_lower(m)
        a[b] = np.tril(m)
        pivots[b], infos[b] = piv, info
    if check_errors and infos.any():
        b = int(np.flatnonzero(infos)[0])
        where = f" (batch element {b})" if len(shape) > 2 else ""
        raise LinAlgError(f"[{op}] The factorization could not be completed because the input "
                          f"is not invertible{where}: D[{infos[b]}, {infos[b]}] is zero")
    device = A.device
    LD = _C.tensor(a.reshape(shape)).to(A.dtype).to(device)
    return (LD, _C.tensor(pivots.reshape(shape[:-1])).to(device),
            _C.tensor(infos.reshape(shape[:-2])).to(device))


def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """(LD, pivots, info): the Bunch-Kaufman LDL^T factorization of symmetric A's lower
    triangle, as LAPACK's sytrf, in float64 (for real A, hermitian changes nothing)."""
    return _LDL_EX(*_ldl("linalg.ldl_factor_ex", A, check_errors))


def ldl_factor(A, *, hermitian=False):
    """(LD, pivots) of ldl_factor_ex; raises LinAlgError where a pivot block is singular."""
    LD, pivots, _ = _ldl("linalg.ldl_factor", A, True)
    return _LDL(LD, pivots)


_LDL_EX = collections.namedtuple("linalg_ldl_factor_ex", ["LD", "pivots", "info"])
_LDL = collections.namedtuple("linalg_ldl_factor", ["LD", "pivots"])


def _sytrs_lower(ld, piv, b):
    """Solves A x = b (b [n, k], float64) from dsytf2's lower factors, as LAPACK's dsytrs."""
    import numpy as np
    n = ld.shape[0]
    b = b.copy()
    k = 0
    while k < n:  # L D y = P b, forward
        if piv[k] > 0:
            kp = piv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.outer(ld[k + 1:, k], b[k])
            b[k] /= ld[k, k]
            k += 1
        else:
            kp = -piv[k] - 1
            b[[k + 1, kp]] = b[[kp, k + 1]]
            if k < n - 2:
                b[k + 2:] -= np.outer(ld[k + 2:, k], b[k]) + np.outer(ld[k + 2:, k + 1], b[k + 1])
            akm1k = ld[k + 1, k]
            akm1 = ld[k, k] / akm1k
            ak = ld[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1 = b[k] / akm1k
            bk = b[k + 1] / akm1k
            b[k] = (ak * bkm1 - bk) / denom
            b[k + 1] = (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T x = y, backward, then the interchanges
        if piv[k] > 0:
            b[k] -= ld[k + 1:, k] @ b[k + 1:]
            kp = piv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k] -= ld[k + 1:, k] @ b[k + 1:]
            b[k - 1] -= ld[k + 1:, k - 1] @ b[k + 1:]
            kp = -piv[k] - 1
            b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def ldl_solve(LD, pivots, B, *, hermitian=False):
    """X with A X = B from ldl_factor's (LD, pivots), in float64, rounded once; the batch
    dimensions of LD and B broadcast."""
    import numpy as np
    op = "linalg.ldl_solve"
    _ldl_check(op, LD)
    if B.dim() < 2:
        raise _C.ShapeError(f"[{op}] The input tensor B must have at least 2 dimensions.")
    if pivots.dtype.is_floating_point or pivots.dtype == _C.bool:
        raise _C.DTypeError(f"[{op}] Expected pivots to be integers. Got {pivots.dtype}")
    if B.dtype != LD.dtype:
        raise _C.DTypeError(f"[{op}] Expected B and LD to have the same dtype, but found B of "
                            f"type {B.dtype} and LD of type {LD.dtype} instead.")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise _C.ShapeError(f"[{op}] Incompatible matrix sizes: each A matrix is {n} by {n} "
                            f"but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise _C.ShapeError(f"[{op}] Expected pivots of shape {list(LD.shape[:-1])}, got "
                            f"{list(pivots.shape)}")
    batch = tuple(np.broadcast_shapes(tuple(LD.shape[:-2]), tuple(B.shape[:-2])))
    ld = np.broadcast_to(LD.to("cpu").to(_C.float64).contiguous().numpy(), batch + (n, n))
    pv = np.broadcast_to(pivots.to("cpu").to(_C.int64).contiguous().numpy(), batch + (n,))
    b = np.broadcast_to(B.to("cpu").to(_C.float64).contiguous().numpy(),
                        batch + tuple(B.shape[-2:]))
    out = np.empty(b.shape)
    for idx in np.ndindex(*batch):
        out[idx] = _sytrs_lower(ld[idx], pv[idx], b[idx])
    return _C.tensor(out).to(B.dtype).to(B.device)

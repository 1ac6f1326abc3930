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

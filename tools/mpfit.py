"""Least-squares polynomial fits that give the same coefficients on every machine, for the table
generators (tools/gen_cr_tables.py, tools/gen_precision_fast_tables.py).

numpy's lstsq and its vectorized cos differ in their last bits between CPUs and BLAS kernels,
and a last-bit difference in a fitted coefficient can round the float coefficient the other way.
Here the nodes come from mpmath's cos and the fit solves the normal equations in 50-digit
arithmetic: the same tables on every machine.
"""
import mpmath as mp


def chebyshev_nodes(a, b, n=600):
    """n Chebyshev nodes of [a, b] as doubles, computed in mpmath (a and b: floats or mpf)."""
    with mp.workdps(50):
        a, b = mp.mpf(a), mp.mpf(b)
        return [float((a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / n))
                for k in range(n)]


def fit_powers(nodes, values, powers, weights=None):
    """{j: coefficient of x^j} for j in powers: the fit minimizing the sum over the nodes of
    (weight (sum_j c_j x^j - value))^2, by the normal equations in 50-digit arithmetic."""
    with mp.workdps(50):
        xs = [mp.mpf(x) for x in nodes]
        w2 = [mp.mpf(1)] * len(xs) if weights is None else [mp.mpf(w) ** 2 for w in weights]
        cols = [[x**j for x in xs] for j in powers]
        wcols = [[w * v for w, v in zip(w2, c)] for c in cols]
        ata = mp.matrix([[mp.fsum(a * b for a, b in zip(ci, cj)) for cj in cols] for ci in wcols])
        aty = mp.matrix([mp.fsum(a * mp.mpf(b) for a, b in zip(ci, values)) for ci in wcols])
        return dict(zip(powers, mp.lu_solve(ata, aty)))

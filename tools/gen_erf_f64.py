#!/usr/bin/env python3
"""Prints the polynomials of the float64 erf rows (Note [float64 erf rows],
kernels_simd/unary_f64.cc): Chebyshev interpolants at 60 digits (mpmath), as monomials about
the interval's centre, each coefficient rounded to double, with the interpolant's own maximum
relative error.

    S(u) = erf(sqrt u) / sqrt u on u in [0, 1], degree 12 about u = 1/2 (the constant term as a
        double pair);
    R(t) = e^{x^2} erfc(x), x = 2 (1 + t) / (1 - t), on t in [-1/3, 1/2] (x in [1, 6]),
        degree 18 about t = 1/12.

Usage: /usr/bin/python3 tools/gen_erf_f64.py
"""
import mpmath as mp

mp.mp.dps = 60


def interpolant(f, a, b, n):
    """Degree-n Chebyshev interpolant of f on [a, b] as monomial coefficients in x - (a+b)/2."""
    nodes = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / (n + 1))
             for k in range(n + 1)]
    c = (a + b) / 2
    vandermonde = mp.matrix([[(x - c) ** j for j in range(n + 1)] for x in nodes])
    coef = mp.lu_solve(vandermonde, mp.matrix([f(x) for x in nodes]))
    return c, [coef[j] for j in range(n + 1)]


def max_relative_error(f, a, b, c, coef):
    worst = mp.mpf(0)
    for i in range(2001):
        x = a + (b - a) * i / 2000
        p = mp.mpf(0)
        for cj in reversed(coef):
            p = p * (x - c) + cj
        worst = max(worst, abs(p / f(x) - 1))
    return worst


def main():
    s = lambda u: mp.erf(mp.sqrt(u)) / mp.sqrt(u) if u != 0 else 2 / mp.sqrt(mp.pi)
    r = lambda t: mp.erfc(2 * (1 + t) / (1 - t)) * mp.exp((2 * (1 + t) / (1 - t)) ** 2)
    c, co = interpolant(s, mp.mpf(0), mp.mpf(1), 12)
    print(f"S about {c}: 2^{float(mp.log(max_relative_error(s, 0, 1, c, co), 2)):.1f}")
    hi = float(co[0])
    print(f"  a0 = {hi.hex()} + {float(co[0] - mp.mpf(hi)).hex()}")
    print("  a1..a12:", ", ".join(float(x).hex() for x in co[1:]))
    a, b = mp.mpf(-1) / 3, mp.mpf(1) / 2
    c, co = interpolant(r, a, b, 18)
    print(f"R about {c}: 2^{float(mp.log(max_relative_error(r, a, b, c, co), 2)):.1f}")
    print("  r0..r18:", ", ".join(float(x).hex() for x in co))


if __name__ == "__main__":
    main()

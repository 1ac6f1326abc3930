#!/usr/bin/python3
"""Prints the polynomial of the double-lane asin and acos rows (Note [asin and acos in double
lanes], kernels_simd/math_lanes.cc): asin(x) = x + x^3 Q(x^2), Q(z) = (asin(sqrt z) - sqrt z) /
z^(3/2) on z in [0, 1/4], a Chebyshev interpolant at 60 digits (mpmath) as monomials in z, each
coefficient rounded to double, with its maximum relative error measured on 4001 points.

Usage: /usr/bin/python3 tools/gen_asin_lanes.py [DEGREE]
"""
import sys

import mpmath as mp

mp.mp.dps = 60


def q(z):
    if z == 0:
        return mp.mpf(1) / 6
    s = mp.sqrt(z)
    return (mp.asin(s) - s) / (z * s)


def interpolant(f, a, b, n):
    """The degree-n Chebyshev interpolant of f on [a, b] (at 60 digits) as monomial
    coefficients, each rounded to double as the kernels hold them (gen_sin_lanes.py uses it)."""
    nodes = [(a + b) / 2 + (b - a) / 2 * mp.cos(mp.pi * (k + mp.mpf(1) / 2) / (n + 1))
             for k in range(n + 1)]
    vandermonde = mp.matrix([[x ** j for j in range(n + 1)] for x in nodes])
    coef = mp.lu_solve(vandermonde, mp.matrix([f(x) for x in nodes]))
    return [mp.mpf(float(coef[j])) for j in range(n + 1)]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    a, b = mp.mpf(0), mp.mpf(1) / 4
    coef = interpolant(q, a, b, n)
    worst = mp.mpf(0)
    for i in range(4001):
        z = b * i / 4000
        p = mp.mpf(0)
        for c in reversed(coef):
            p = p * z + c
        worst = max(worst, abs(p / q(z) - 1))
    print(f"Q, degree {n}, on [0, 1/4]: relative error 2^{float(mp.log(worst, 2)):.1f}; "
          f"sum of |coefficients| 4^-j: {float(sum(abs(c) / 4 ** j for j, c in enumerate(coef))):.3f}")
    print("  q0..q%d: " % n + ", ".join(float(c).hex() for c in coef))


if __name__ == "__main__":
    main()

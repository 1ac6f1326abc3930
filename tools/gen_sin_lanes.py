#!/usr/bin/python3
"""Prints the polynomials of the double-lane sin, cos and tan (Note [correctly rounded float
lanes], sin and cos, and tan, kernels_simd/unary_cr.cc): sin r = r (1 + r^2 G(r^2)),
G(s) = (sin(sqrt s) - sqrt s) / s^(3/2), and cos r = 1 + r^2 C(r^2), C(s) = (cos(sqrt s) - 1)/s,
on |r| <= R: a Chebyshev interpolant at 60 digits (mpmath) in s, converted to monomials, each
coefficient rounded to double; then the maximum relative error of the approximation against
sin r (cos r), measured on 4001 points.

Usage: /usr/bin/python3 tools/gen_sin_lanes.py sin|cos DEGREE R
  sin and cos: sin 5 1.5708 (pi/2 and the reduction's slack); tan: sin 5 0.7854, cos 5 0.7854
"""
import sys

import mpmath as mp

from gen_asin_lanes import interpolant

mp.mp.dps = 60


def g(s):
    if s == 0:
        return -mp.mpf(1) / 6
    r = mp.sqrt(s)
    return (mp.sin(r) - r) / (s * r)


def c(s):
    if s == 0:
        return -mp.mpf(1) / 2
    return (mp.cos(mp.sqrt(s)) - 1) / s


def main():
    kind, n, R = sys.argv[1], int(sys.argv[2]), mp.mpf(sys.argv[3])
    f = g if kind == "sin" else c
    b = R * R
    coef = interpolant(f, mp.mpf(0), b, n)
    worst = mp.mpf(0)
    for i in range(1, 4001):
        r = R * i / 4000
        p = mp.mpf(0)
        for k in reversed(coef):
            p = p * r * r + k
        approx, exact = (r * (1 + r * r * p), mp.sin(r)) if kind == "sin" else \
            (1 + r * r * p, mp.cos(r))
        worst = max(worst, abs(approx / exact - 1))
    name = "G" if kind == "sin" else "C"
    print(f"{kind}, {name} of degree {n}, |r| <= {R}: relative error "
          f"2^{float(mp.log(worst, 2)):.2f}; sum of |coefficients| R^2j: "
          f"{float(sum(abs(k) * b ** j for j, k in enumerate(coef))):.3f}")
    print(f"  {name.lower()}0..{name.lower()}{n}: " + ", ".join(float(k).hex() for k in coef))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Constants of randn's Box-Muller transform (kernels_simd/normal.cc, Note [normal transform]):
Taylor coefficients, each correctly rounded to double, of
  log(m) = 2 atanh(f) = 2 f (1 + s/3 + s^2/5 + ...),  s = f^2, |f| <= 0.1716,
  cos(pi/2 t) and sin(pi/2 t) for |t| <= 1/2,
and ln 2 split in a 46-bit head (so e * head is exact for |e| < 2^7) and a tail. Prints C++
and each series' truncation bound. 40-digit mpmath.

Run: /usr/bin/python3 tools/gen_normal_constants.py
"""
import mpmath as mp

mp.mp.dps = 40


def hexd(v):
    return float(v).hex()


def main():
    f_max = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)
    s_max = f_max**2
    q = [mp.mpf(1) / (2 * k + 1) for k in range(1, 10)]  # s/3 + s^2/5 + ... = s Q(s)
    print("// log: Q(s) = 1/3 + s/5 + ... + s^8/19; truncation s^10/21 <= %s relative"
          % mp.nstr(s_max**10 / 21, 3))
    print("constexpr double kLogQ[] = {" + ", ".join(hexd(c) for c in q) + "};")
    h = mp.pi / 2
    cos_c = [(-1)**k * h**(2 * k) / mp.factorial(2 * k) for k in range(9)]
    sin_c = [(-1)**k * h**(2 * k + 1) / mp.factorial(2 * k + 1) for k in range(9)]
    a = mp.pi / 4
    print("// cos(pi/2 t) to t^16: truncation %s; sin(pi/2 t) to t^17: %s (|t| <= 1/2)"
          % (mp.nstr(a**18 / mp.factorial(18), 3), mp.nstr(a**19 / mp.factorial(19), 3)))
    print("constexpr double kCosC[] = {" + ", ".join(hexd(c) for c in cos_c) + "};")
    print("constexpr double kSinC[] = {" + ", ".join(hexd(c) for c in sin_c) + "};")
    ln2 = mp.log(2)
    head = mp.floor(ln2 * 2**46) / 2**46
    print("constexpr double kLn2Hi = %s, kLn2Lo = %s;" % (hexd(head), hexd(ln2 - head)))


if __name__ == "__main__":
    main()

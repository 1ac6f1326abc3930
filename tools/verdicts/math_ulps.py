"""The errors of PyTorch's float32 kernels of the math family (core/math_op_list.h), on CUDA and
on the CPU: the budgets behind mpsim.testing's compute models for these ops (docs/verdicts.md,
"The math family").

On a machine with a CUDA GPU and PyTorch (torch and NumPy only):

    python3 tools/verdicts/math_ulps.py record OUT.npz

stores, per op, 16384 float32 inputs across the op's domain (uniform and log-spaced) and the
GPU's float32 results. Here, with mpsim built:

    OPENBLAS_CORETYPE=SkylakeX ATEN_CPU_CAPABILITY=avx512 PYTHONPATH=build/python \\
        /usr/bin/python3 tools/verdicts/math_ulps.py judge OUT.npz

prints, for CUDA and for torch's CPU kernels (run here on the same inputs), the largest error
in float32 ULPs of the exact value (mpsim's float64 evaluation) and the largest absolute error
where |exact| is below float32's smallest normal or, for a function with zeros in its domain,
below 2^-6 (kernels are accurate in absolute terms only there; the ULP figure leaves those
points out)."""

import math
import sys

import numpy as np
import torch
import torch.nn.functional as F

# op (mpsim's name): (torch function, [(low, high, "lin" | "log")])
OPS = {
    "acos": (torch.acos, [(-1, 1, "lin")]),
    "asin": (torch.asin, [(-1, 1, "lin")]),
    "atan": (torch.atan, [(1e-30, 1e30, "log")]),
    "acosh": (torch.acosh, [(1, 1e30, "logpos")]),
    "asinh": (torch.asinh, [(1e-30, 1e30, "log")]),
    "atanh": (torch.atanh, [(-1, 1, "lin")]),
    "cosh": (torch.cosh, [(-89, 89, "lin")]),
    "sinh": (torch.sinh, [(-89, 89, "lin"), (1e-20, 1, "log")]),
    "tan": (torch.tan, [(-10, 10, "lin"), (1e-20, 1e4, "log")]),
    "exp2": (torch.exp2, [(-126, 127, "lin")]),
    "log2": (torch.log2, [(1e-37, 1e38, "logpos")]),
    "log10": (torch.log10, [(1e-37, 1e38, "logpos")]),
    "erfc": (torch.erfc, [(-4, 10, "lin")]),
    "erfinv": (torch.erfinv, [(-1, 1, "lin"), (1e-30, 1, "log")]),
    "lgamma": (torch.lgamma, [(-20, 40, "lin"), (1, 1e30, "logpos")]),
    "digamma": (torch.digamma, [(-20, 40, "lin"), (1, 1e30, "logpos")]),
    "i0": (torch.i0, [(-88, 88, "lin")]),
    "sinc": (torch.sinc, [(-20, 20, "lin")]),
    "deg2rad": (torch.deg2rad, [(1e-30, 1e30, "log")]),
    "rad2deg": (torch.rad2deg, [(1e-30, 1e30, "log")]),
    "special_ndtr": (torch.special.ndtr, [(-13, 8, "lin")]),
    "special_ndtri": (torch.special.ndtri, [(0, 1, "lin"), (1e-37, 0.5, "logpos")]),
    "special_log_ndtr": (torch.special.log_ndtr, [(-1e3, 8, "lin"), (-10, 5, "lin")]),
    "special_erfcx": (torch.special.erfcx, [(-9, 30, "lin"), (1, 1e30, "logpos")]),
    "special_entr": (torch.special.entr, [(0, 10, "lin"), (1e-37, 1e30, "logpos")]),
    "special_i0e": (torch.special.i0e, [(-200, 200, "lin")]),
    "special_i1": (torch.special.i1, [(-88, 88, "lin")]),
    "special_i1e": (torch.special.i1e, [(-200, 200, "lin")]),
    "special_bessel_j0": (torch.special.bessel_j0, [(-60, 60, "lin")]),
    "special_bessel_j1": (torch.special.bessel_j1, [(-60, 60, "lin")]),
    "special_bessel_y0": (torch.special.bessel_y0, [(1e-6, 60, "lin")]),
    "special_bessel_y1": (torch.special.bessel_y1, [(1e-6, 60, "lin")]),
    "special_spherical_bessel_j0": (torch.special.spherical_bessel_j0, [(-100, 100, "lin")]),
    "softsign": (F.softsign, [(1e-30, 1e30, "log")]),
    "tanhshrink": (F.tanhshrink, [(-5, 5, "lin"), (1e-10, 1, "log")]),
    "selu": (F.selu, [(-20, 20, "lin")]),
    "mish": (F.mish, [(-20, 20, "lin")]),
    "hardsigmoid": (F.hardsigmoid, [(-4, 4, "lin")]),
    "hardswish": (F.hardswish, [(-4, 4, "lin")]),
    "logsigmoid": (F.logsigmoid, [(-100, 100, "lin")]),
    "elu": (F.elu, [(-20, 20, "lin")]),
    "celu": (F.celu, [(-20, 20, "lin")]),
    "logit": (torch.logit, [(0, 1, "lin"), (1e-30, 0.5, "logpos")]),
}
POINTS = 16384


def inputs(ranges, rng):
    parts = []
    each = POINTS // len(ranges)
    for low, high, kind in ranges:
        if kind == "lin":
            parts.append(rng.uniform(low, high, each))
        else:
            v = np.exp(rng.uniform(math.log(low), math.log(high), each))
            parts.append(v if kind == "logpos" else v * rng.choice([-1.0, 1.0], each))
    return np.concatenate(parts).astype(np.float32)


def record(path):
    rng = np.random.default_rng(0)
    arrays = {}
    for name, (fn, ranges) in OPS.items():
        x = inputs(ranges, rng)
        arrays[f"{name}.x"] = x
        arrays[f"{name}.cuda"] = fn(torch.from_numpy(x).cuda()).cpu().numpy()
    arrays["meta"] = np.frombuffer(
        f"{torch.__version__} {torch.cuda.get_device_name(0)}".encode(), dtype=np.uint8)
    np.savez_compressed(path, **arrays)
    print(bytes(arrays["meta"]).decode())


# Functions with zeros inside their domain, near which kernels are accurate in absolute terms
# only: their ULP figure is taken where |exact| >= NEAR_ZERO, the absolute one below.
WITH_ZEROS = {"tan", "lgamma", "digamma", "sinc", "special_bessel_j0", "special_bessel_j1",
              "special_bessel_y0", "special_bessel_y1", "special_spherical_bessel_j0"}
NEAR_ZERO = 2.0 ** -6


def errors(name, got, exact):
    """(largest error in float32 ULPs of the exact value, largest absolute error where
    |exact| < NEAR_ZERO for a function with zeros, else 0)"""
    from mpsim.testing._model import ulp
    got = got.astype(np.float64)
    fin = np.isfinite(exact) & (np.abs(exact) <= np.finfo(np.float32).max)
    same = (got == exact.astype(np.float32)) | (np.isnan(got) & np.isnan(exact))
    err = np.where(same | ~fin, 0.0, np.abs(got - exact))
    err = np.where(np.isnan(err), np.inf, err)
    near = (np.abs(exact) < NEAR_ZERO) if name in WITH_ZEROS else \
        np.abs(exact) < np.finfo(np.float32).tiny  # below the smallest normal: absolute
    ulps = err / ulp(exact, "float32")
    return float(np.max(np.where(~near & fin, ulps, 0.0))), \
        float(np.max(np.where(near & fin, err, 0.0)))


def judge(path):
    import mpsim
    z = np.load(path)
    print("device:", bytes(z["meta"]).decode())
    print(f"{'op':28s} {'CUDA ulps':>10s} {'CUDA abs':>10s} {'CPU ulps':>10s} {'CPU abs':>10s}")
    for name, (fn, _) in OPS.items():
        x = z[f"{name}.x"]
        exact = getattr(mpsim, name)(mpsim.tensor(x.astype(np.float64))).numpy()
        cpu = fn(torch.from_numpy(x)).numpy()
        cu, ca = errors(name, z[f"{name}.cuda"], exact)
        pu, pa = errors(name, cpu, exact)
        print(f"{name:28s} {cu:10.3g} {ca:10.3g} {pu:10.3g} {pa:10.3g}")


if __name__ == "__main__":
    {"record": record, "judge": judge}[sys.argv[1]](sys.argv[2])

"""The math family (docs/ops.md, "Math functions") beside PyTorch's float32 kernels, one
thread, 2^20 floats in (-0.9, 0.9), the mean of 5 calls:

    PYTHONPATH=build/python /usr/bin/python3 bench/math_family.py

PyTorch runs its best kernels on this CPU (bench/torch_env.py).
"""

import time

import torch_env  # noqa: F401  (before torch loads)

import numpy as np
import torch
import torch.nn.functional as F

import mpsim

OPS = [("acos", torch.acos), ("tan", torch.tan), ("erfinv", torch.erfinv),
       ("digamma", torch.digamma), ("special_i0e", torch.special.i0e), ("mish", F.mish),
       ("elu", F.elu), ("special_bessel_j0", torch.special.bessel_j0)]


def mean_ms(fn, arg, reps=5):
    fn(arg)
    start = time.perf_counter()
    for _ in range(reps):
        fn(arg)
    return (time.perf_counter() - start) / reps * 1e3


def main():
    mpsim.set_num_threads(1)
    torch.set_num_threads(1)
    x = np.random.default_rng(0).uniform(-0.9, 0.9, 1 << 20).astype(np.float32)
    ours, theirs = mpsim.tensor(x), torch.from_numpy(x)
    for name, fn in OPS:
        print(f"{name:20s} mpsim {mean_ms(getattr(mpsim, name), ours):8.2f} ms   "
              f"torch {mean_ms(fn, theirs):8.2f} ms")


if __name__ == "__main__":
    main()

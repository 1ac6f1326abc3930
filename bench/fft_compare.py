#!/usr/bin/python3
"""Side-by-side Fourier transforms: mpsim (the double transform rounded once) vs PyTorch CPU
(float32 pocketfft), same shapes, same thread count, in one run.

Usage: PYTHONPATH=build/python /usr/bin/python3 bench/fft_compare.py [--threads 2] [--repeat 10]

Prints the best of `repeat` calls in milliseconds for each case and mpsim's time over torch's.
PyTorch runs with its best kernels on this CPU (bench/torch_env.py) and
torch.set_num_threads(threads), mpsim with mpsim.set_num_threads(threads).
"""
import argparse
import os
import time

import torch_env  # noqa: E402,F401  (PyTorch's best kernels on this CPU, before torch loads)

import numpy as np  # noqa: E402
import torch  # noqa: E402

import mpsim  # noqa: E402

# (name, shape, complex input, mpsim call, torch call)
CASES = [
    ("rfft [64, 4096]", (64, 4096), False, lambda x: mpsim.fft.rfft(x), torch.fft.rfft),
    ("fft [64, 4096] complex", (64, 4096), True, lambda x: mpsim.fft.fft(x), torch.fft.fft),
    ("fft [64, 4099] complex (Bluestein)", (64, 4099), True, lambda x: mpsim.fft.fft(x),
     torch.fft.fft),
    ("irfft [64, 2049] -> 4096", (64, 2049), True, lambda x: mpsim.fft.irfft(x, n=4096),
     lambda x: torch.fft.irfft(x, n=4096)),
    ("rfft2 [8, 256, 256]", (8, 256, 256), False, lambda x: mpsim.fft.rfft2(x), torch.fft.rfft2),
    ("stft [4, 16000] n_fft 512 hop 128", (4, 16000), False,
     lambda x: mpsim.stft(x, 512, 128, window=mpsim.ones(512), return_complex=True),
     lambda x: torch.stft(x, 512, 128, window=torch.ones(512), return_complex=True)),
]


def best(fn, repeat):
    fn()
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) * 1e3


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--repeat", type=int, default=10)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    mpsim.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    print(f"| case | mpsim ms | torch ms | mpsim / torch |  ({args.threads} threads)")
    print("|---|---|---|---|")
    for name, shape, is_complex, ours, theirs in CASES:
        a = rng.standard_normal(shape)
        if is_complex:
            a = a + 1j * rng.standard_normal(shape)
        a = a.astype(np.complex64 if is_complex else np.float32)
        m, t = mpsim.tensor(a), torch.from_numpy(a)
        tm, tt = best(lambda: ours(m), args.repeat), best(lambda: theirs(t), args.repeat)
        print(f"| {name} | {tm:.2f} | {tt:.2f} | {tm / tt:.1f} |")


if __name__ == "__main__":
    main()

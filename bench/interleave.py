#!/usr/bin/python3
"""mpsim's unary ops against PyTorch's in one process, interleaved call batch by call batch.

compare.py runs the two libraries in separate processes, one after the other; on this shared
VM the machine's speed moves between minutes, and a library timed in a slow spell looks slow.
Here every round times a batch of PyTorch calls and then the same batch of mpsim calls
(through build/bench/libmpsim_bench_shim.so, ctypes), so both sample the same spells, and each
library's best round is reported. OMP_WAIT_POLICY=PASSIVE keeps PyTorch's OpenMP threads from
spinning on the cores while mpsim's TBB threads run. Run with Debian's interpreter:

    /usr/bin/python3 bench/interleave.py                       # 64Ki floats, 1 thread (in cache)
    /usr/bin/python3 bench/interleave.py --n 16777216 --threads 2 --rounds 8
    /usr/bin/python3 bench/interleave.py --golden --ops exp,sin
"""
import argparse
import ctypes
import os
import sys
import time

import torch_env  # noqa: E402,F401  (PyTorch's best kernels on this CPU, before torch loads)
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build"))
    ap.add_argument("--n", type=int, default=1 << 16)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--ops", default="exp,log,sigmoid,silu,gelu,gelu_tanh,sin,cos")
    ap.add_argument("--golden", action="store_true", help="mpsim's golden kernels (default: Fast)")
    args = ap.parse_args()
    import torch

    torch.set_num_threads(args.threads)
    lib = ctypes.CDLL(os.path.join(args.build, "bench", "libmpsim_bench_shim.so"))
    lib.mpsim_bench_time.restype = ctypes.c_double
    lib.mpsim_bench_time.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_int]
    lib.mpsim_bench_setup.argtypes = [ctypes.c_void_p, ctypes.c_long, ctypes.c_int]
    g = torch.Generator().manual_seed(3)
    positive = {"log"}
    x = torch.rand(args.n, generator=g) * 16 - 8
    xp = torch.rand(args.n, generator=g) * 8 + 0.01
    y = torch.empty(args.n)
    nn = torch._C._nn
    torch_ops = {
        "exp": lambda v: torch.exp(v, out=y), "log": lambda v: torch.log(v, out=y),
        "sigmoid": lambda v: torch.sigmoid(v, out=y), "silu": lambda v: nn.silu(v, out=y),
        "gelu": lambda v: nn.gelu(v, out=y), "gelu_tanh": lambda v: nn.gelu(v, approximate="tanh", out=y),
        "sin": lambda v: torch.sin(v, out=y), "cos": lambda v: torch.cos(v, out=y),
        "tanh": lambda v: torch.tanh(v, out=y), "erf": lambda v: torch.erf(v, out=y),
    }
    ops = args.ops.split(",")
    unknown = [o for o in ops if o not in torch_ops]
    if unknown:
        sys.exit(f"unknown ops: {unknown}")
    reps = max(1, int(5e6 / args.n))
    print(f"threads {args.threads}; {args.n} float32; {'golden' if args.golden else 'Fast'} mpsim; "
          f"ns per element, the best of {args.rounds} interleaved rounds of {reps} calls")
    for op in ops:
        v = xp if op in positive else x
        lib.mpsim_bench_setup(ctypes.c_void_p(v.data_ptr()), args.n, args.threads)
        f = torch_ops[op]
        best_t = best_m = float("inf")
        for _ in range(args.rounds):
            f(v)
            t0 = time.perf_counter()
            for _ in range(reps):
                f(v)
            best_t = min(best_t, (time.perf_counter() - t0) / reps)
            best_m = min(best_m, lib.mpsim_bench_time(op.encode(), reps, 0 if args.golden else 1))
        print(f"{op:10s} torch {best_t / args.n * 1e9:7.3f}  mpsim {best_m / args.n * 1e9:7.3f}  "
              f"torch/mpsim {best_t / best_m:5.2f}")


if __name__ == "__main__":
    main()

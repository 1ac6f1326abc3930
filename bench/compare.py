#!/usr/bin/python3
"""Side-by-side elementwise benchmark: mpsim vs PyTorch CPU vs Eigen, same shapes, same threads.

Usage: /usr/bin/python3 bench/compare.py [--build build] [--threads 2] [--repeat 20]
                                        [--rounds 3] [--filter REGEX] [--min-time S]

Runs build/bench/elementwise_bench (mpsim and its Eigen peer cases, Google Benchmark JSON) and
the same ops in PyTorch (Debian's python3-torch 1.13) with preallocated outputs (out=), with
torch.set_num_threads equal to ours and ATEN_CPU_CAPABILITY, OPENBLAS_CORETYPE set by
bench/torch_env.py so PyTorch uses its best kernels on this CPU (avx512 and SkylakeX on
AVX-512). Prints milliseconds per call and the ratios.
bench/report.py imports measure() to write docs/performance.md.
"""
import argparse
import re
import json
import os
import subprocess
import sys
import time

# PyTorch and OpenBLAS read these when they load: their best kernels on this CPU (torch_env.py).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_env  # noqa: E402,F401

# (mpsim benchmark name, eigen benchmark name or None, torch callable builder)
N16M = 1 << 24
N_CACHE = 1 << 16  # unary_cache/: input and output stay in L2
N_SD = 2 * 320 * 64 * 64  # unary_sd/: an SD 1.5 feature map


# The unary ops with a Precision::Fast kernel (unary_fast/<op> rows).
FAST_OPS = {"exp", "log", "sigmoid", "silu", "gelu", "gelu_tanh", "sin", "cos", "rsqrt", "log1p",
            "expm1", "softplus"}
# The float64 rows (unary64/<op>): name, input range as in unary_ops.
F64_OPS = [("exp", False), ("log", True), ("expm1", False), ("log1p", True), ("sigmoid", False),
           ("tanh", False), ("erf", False)]


# The unary rows: name and input range, [-8, 8], [0.01, 8] where True, or the (lo, hi) given.
UNARY_RANGES = [
    ("exp", False), ("log", True), ("tanh", False), ("sigmoid", False), ("silu", False),
    ("gelu", False), ("gelu_tanh", False), ("sqrt", True), ("relu", False), ("erf", False),
    ("sin", False), ("cos", False), ("abs", False), ("neg", False), ("square", False),
    ("reciprocal", False), ("rsqrt", True), ("log1p", True), ("expm1", False),
    ("softplus", False), ("exp2", False), ("log2", True), ("log10", True), ("tan", False),
    ("sinh", False), ("cosh", False), ("asinh", False), ("acosh", (1.01, 8)),
    ("atanh", (-0.99, 0.99)), ("atan", False), ("asin", (-0.99, 0.99)),
    ("acos", (-0.99, 0.99)), ("erfc", False), ("pow_1.5", True), ("pow_2.2", True),
    ("pow_0.4545", True), ("pow_-0.5", True), ("pow_5", True)]


def unary_ops(torch):
    """(name, fn(x, out), input range) of the unary rows (UNARY_RANGES): PyTorch's call of each
    into a preallocated output (cr_speed.py times the same calls interleaved)."""
    nn = torch._C._nn
    calls = {
        "silu": lambda x, y: nn.silu(x, out=y),
        "gelu": lambda x, y: nn.gelu(x, out=y),
        "gelu_tanh": lambda x, y: nn.gelu(x, approximate="tanh", out=y),
        "relu": lambda x, y: torch.clamp_min(x, 0, out=y),
        "softplus": lambda x, y: nn.softplus(x, 1, 20, out=y),
    }

    def call(name):
        if name in calls:
            return calls[name]
        if name.startswith("pow_"):
            exponent = 1 / 2.2 if name == "pow_0.4545" else float(name[4:])
            return lambda x, y: torch.pow(x, exponent, out=y)
        fn = getattr(torch, name)
        return lambda x, y: fn(x, out=y)
    return [(name, call(name), r) for name, r in UNARY_RANGES]


def torch_cases(torch):
    f = torch.nn.functional

    def unary(fn, positive=False, n=N16M, dtype=torch.float32):
        def make():
            lo, hi = positive if isinstance(positive, tuple) else (0.01 if positive else -8, 8)
            x = torch.empty(n, dtype=dtype).uniform_(lo, hi)
            y = torch.empty_like(x)
            return lambda: fn(x, y)
        return make

    def add_bcast():
        a = torch.empty(2, 320, 64, 64).uniform_(-1, 1)
        b = torch.empty(320, 1, 1).uniform_(-1, 1)
        y = torch.empty_like(a)
        return lambda: torch.add(a, b, out=y)

    def mul():
        a = torch.empty(N16M).uniform_(-1, 1)
        b = torch.empty(N16M).uniform_(-1, 1)
        y = torch.empty_like(a)
        return lambda: torch.mul(a, b, out=y)

    def copy():
        a = torch.empty(N16M).uniform_(-1, 1)
        y = torch.empty_like(a)
        return lambda: y.copy_(a)

    def new_out(make_inputs, fn):
        def make():
            args = make_inputs()
            return lambda: fn(*args)
        return make

    def sd(*shape):
        return lambda: (torch.empty(*shape).uniform_(-2, 2),)

    def nhwc():
        return (torch.empty(2, 320, 64, 64).uniform_(-2, 2).contiguous(memory_format=torch.channels_last),)

    kernels2 = [
        ("BM_softmax_rows/iterations:3/real_time", None, new_out(sd(2, 8, 4096, 1024), lambda x: torch.softmax(x, -1))),
        ("BM_layer_norm/real_time", None, new_out(sd(2, 4096, 320), lambda x: f.layer_norm(x, (320,)))),
        ("group_norm_case/nchw/real_time", None, new_out(sd(2, 320, 64, 64), lambda x: f.group_norm(x, 32))),
        ("group_norm_case/nhwc/real_time", None, new_out(nhwc, lambda x: f.group_norm(x, 32))),
        ("sum_case/last/real_time", None, new_out(sd(4096, 4096), lambda x: torch.sum(x, -1))),
        ("sum_case/first/real_time", None, new_out(sd(4096, 4096), lambda x: torch.sum(x, 0))),
        ("sum_case/short_rows/real_time", None, new_out(sd(8192, 320), lambda x: torch.sum(x, -1))),
        ("BM_permute_to_channels_last/real_time", None,
         new_out(sd(2, 320, 64, 64), lambda x: x.permute(0, 2, 3, 1).contiguous())),
        ("BM_copy_sd/real_time", None, new_out(sd(2, 320, 64, 64), lambda x: x.clone())),
        ("BM_copy_cat/real_time", None, new_out(sd(2, 640, 64, 64), lambda x: x.clone())),
        ("BM_cat/real_time", None,
         new_out(lambda: (torch.empty(2, 320, 64, 64), torch.empty(2, 320, 64, 64)), lambda a, b: torch.cat([a, b], 1))),
    ]

    def sq4096(lo=-2.0, hi=2.0):
        return lambda: (torch.empty(4096, 4096).uniform_(lo, hi),)

    def flat16m():
        return (torch.empty(N16M).uniform_(-8, 8),)

    def rms_norm(x):  # PyTorch 1.13 has no F.rms_norm: the usual module's arithmetic
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + torch.finfo(x.dtype).eps)

    def index_rows():
        return (torch.empty(8192, 320).uniform_(-2, 2), torch.randint(0, 8192, (8192,)))

    def gather_last():
        return (torch.empty(4096, 1024).uniform_(-2, 2), torch.randint(0, 1024, (4096, 1024)))

    def bn_inputs():
        return (torch.empty(2, 320, 64, 64).uniform_(-2, 2), torch.empty(320).uniform_(-1, 1),
                torch.empty(320).uniform_(0.5, 2))

    # Every other Kernels II op (elementwise_bench.cc: ops2/<op>), the same shapes.
    ops2 = [
        ("mean_first", sq4096(), lambda x: torch.mean(x, 0)),
        ("var_last", sq4096(), lambda x: torch.var(x, -1)),
        ("amax_last", sq4096(), lambda x: torch.amax(x, -1)),
        ("argmax_last", sq4096(), lambda x: torch.argmax(x, -1)),
        ("logsumexp_last", sq4096(), lambda x: torch.logsumexp(x, -1)),
        ("prod_last", sq4096(0.999, 1.001), lambda x: torch.prod(x, -1)),
        ("log_softmax_rows", lambda: (torch.empty(8192, 1024).uniform_(-8, 8),),
         lambda x: torch.log_softmax(x, -1)),
        ("rms_norm", sd(2, 4096, 320), rms_norm),
        ("batch_norm", bn_inputs, lambda x, m, v: f.batch_norm(x, m, v, training=False)),
        ("transpose_2d", sq4096(), lambda x: x.t().contiguous()),
        ("slice_step2", sd(2, 320, 64, 64), lambda x: x[:, :, :, ::2].contiguous()),
        ("stack", sd(2, 320, 64, 64), lambda x: torch.stack([x, x], 0)),
        ("flip_w", sd(2, 320, 64, 64), lambda x: torch.flip(x, [3])),
        ("repeat_h2", sd(2, 320, 64, 64), lambda x: x.repeat(1, 1, 2, 1)),
        ("pad_reflect", sd(2, 320, 64, 64), lambda x: f.pad(x, (1, 1, 1, 1), mode="reflect")),
        ("pad_constant", sd(2, 320, 64, 64), lambda x: f.pad(x, (1, 1, 1, 1))),
        ("tril", sq4096(), lambda x: torch.tril(x)),
        ("index_select_rows", index_rows, lambda x, i: torch.index_select(x, 0, i)),
        ("gather_last", gather_last, lambda x, i: torch.gather(x, 1, i)),
        ("to_f16", flat16m, lambda x: x.to(torch.float16)),
        ("to_bf16", flat16m, lambda x: x.to(torch.bfloat16)),
        ("f16_to_f32", lambda: (flat16m()[0].to(torch.float16),), lambda x: x.to(torch.float32)),
        ("to_int32", flat16m, lambda x: x.to(torch.int32)),
        ("rand", flat16m, lambda x: torch.rand(N16M)),
        ("randn", flat16m, lambda x: torch.randn(N16M)),
        ("randint", flat16m, lambda x: torch.randint(0, 1000, (N16M,))),
        ("dropout", flat16m, lambda x: f.dropout(x, 0.1, training=True)),
        ("linspace", flat16m, lambda x: torch.linspace(0, 1, N16M)),
    ]
    kernels2 += [(f"ops2/{name}/real_time", None, new_out(make, fn)) for name, make, fn in ops2]

    def unary_cases(prefix, n, only=None):
        """The unary ops at n floats: unary/<op> (16M), unary_sd/<op> ([2, 320, 64, 64]) or
        unary_cache/<op> (64Ki, in L2);
        unary_fast/<op> and unary_fast_cache/<op> are mpsim's Precision::Fast kernels, against
        the same PyTorch calls."""
        eigen = {"exp", "log", "tanh", "sigmoid", "gelu"} if n == N16M else set()
        ops = unary_ops(torch)
        return [(f"{prefix}/{name}/real_time",
                 f"eigen_unary/{name}/real_time" if name in eigen else None,
                 unary(fn, positive, n)) for name, fn, positive in ops
                if only is None or name in only]

    def unary64_cases(prefix, n):
        """unary64/<op> (16M doubles) and unary64_sd/<op> ([2, 320, 64, 64]): the float64 rows."""
        return [(f"{prefix}/{name}/real_time", None,
                 unary(lambda x, y, fn=getattr(torch, name): fn(x, out=y), positive, n,
                       torch.float64))
                for name, positive in F64_OPS]

    fast = FAST_OPS
    return kernels2 + [
        ("BM_add_broadcast/real_time", None, add_bcast),
        ("BM_mul/real_time", "eigen_unary/mul/real_time", mul),
        ("BM_copy/real_time", None, copy),
    ] + unary_cases("unary", N16M) + unary_cases("unary_cache", N_CACHE) + \
        unary_cases("unary_sd", N_SD) + unary_cases("unary_fast", N16M, fast) + \
        unary_cases("unary_fast_cache", N_CACHE, fast) + unary_cases("unary_fast_sd", N_SD, fast) + \
        unary64_cases("unary64", N16M) + unary64_cases("unary64_sd", N_SD)


def time_torch(make, repeat):
    fn = make()
    fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    times.sort()
    return 1e3 * times[len(times) // 2]


def ms(t):
    """Milliseconds, with digits enough for the in-cache cases."""
    return f"{t:.2f}" if t >= 1 else f"{t:.4f}"


def run_mpsim(binary, env, pattern, min_time=None):
    """One run of the Google Benchmark binary: {case: (median ms per call, median GB/s)}."""
    cmd = [binary, "--benchmark_format=json", "--benchmark_repetitions=3",
           "--benchmark_report_aggregates_only=true", f"--benchmark_filter={pattern}"]
    if min_time:
        cmd.append(f"--benchmark_min_time={min_time}")
    out = subprocess.run(cmd, env=env, check=True, capture_output=True, text=True).stdout
    return {b["run_name"]: (b["real_time"], b.get("GB/s", 0.0))
            for b in json.loads(out)["benchmarks"] if b.get("aggregate_name") == "median"}


def measure(build, threads, rounds, repeat=20, pattern="", min_time=None, log=None):
    """Alternates mpsim's elementwise_bench and the same cases in PyTorch `rounds` times.

    Returns (cases, ours, theirs, gbs): the (name, eigen name, builder) cases that matched,
    each library's ms per round ({name: [ms, ...]}; Eigen's cases are in `ours`), and mpsim's
    GB/s in its fastest round. Rounds alternate so that a slow spell of this shared machine
    hits both libraries; callers keep each one's fastest round."""
    import torch
    torch.set_num_threads(threads)
    binary = os.path.join(build, "bench", "elementwise_bench")
    env = dict(os.environ, MPSIM_NUM_THREADS=str(threads))
    cases = [c for c in torch_cases(torch) if not pattern or re.search(pattern, c[0])]
    ours, theirs, gbs = {}, {}, {}
    for r in range(rounds):
        if log:
            log(f"compare: round {r + 1} of {rounds}")
        for name, (t, rate) in run_mpsim(binary, env, pattern or ".", min_time).items():
            if name not in ours or t < min(ours[name]):
                gbs[name] = rate
            ours.setdefault(name, []).append(t)
        for name, _, make in cases:
            theirs.setdefault(name, []).append(time_torch(make, repeat))
    return cases, ours, theirs, gbs


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3,
                    help="alternate the two libraries this many times; report each one's best round")
    ap.add_argument("--filter", default="", help="regex on the case names (both libraries)")
    ap.add_argument("--min-time", type=float, default=None,
                    help="Google Benchmark's --benchmark_min_time per repetition (default: its own)")
    args = ap.parse_args()

    try:
        import torch
    except ImportError:
        sys.exit("compare.py: python3-torch is not installed (apt-get install python3-torch)")
    cases, ours, theirs, _ = measure(args.build, args.threads, args.rounds, args.repeat,
                                     args.filter, args.min_time)
    print(f"threads {args.threads}; torch {torch.__version__} "
          f"(ATEN_CPU_CAPABILITY={os.environ.get('ATEN_CPU_CAPABILITY', 'unset')}); "
          f"16M float32 = 64 MiB per tensor (L3-resident); ms per call: the best of "
          f"{args.rounds} alternating rounds (each a median)")
    print(f"{'op':<28}{'mpsim':>9}{'torch':>9}{'eigen(1t)':>11}{'torch/mpsim':>13}")
    for name, eigen_name, _ in cases:
        parts = name.split("/")
        op = parts[0][3:] if parts[0].startswith("BM_") else "/".join(p for p in parts[:2] if "time" not in p and "iter" not in p)
        if name not in ours:
            print(f"{op:<28} missing from the mpsim run")
            continue
        # The fastest round of each: this machine is shared, and a slow spell only adds time.
        t_ours, t_torch = min(ours[name]), min(theirs[name])
        t_eigen = min(ours[eigen_name]) if eigen_name in ours else None
        print(f"{op:<28}{ms(t_ours):>9}{ms(t_torch):>9}{(ms(t_eigen) if t_eigen else '-'):>11}"
              f"{t_torch / t_ours:>13.2f}")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The correctly rounded golden unary ops beside PyTorch 1.13 and mpsim's Precision::Fast: one
markdown table for docs/performance.md ("Correctly rounded unary ops").

Usage: /usr/bin/python3 bench/cr_speed.py [--build build] [--calls 15] [--ops exp,log,...]
       /usr/bin/python3 bench/cr_speed.py --f64 --ops exp,log,expm1,log1p,sigmoid,tanh,erf

For 1 and 2 threads (mpsim.set_num_threads and torch.set_num_threads alike), on [2, 320, 64, 64]
and 16M floats: one process per thread count calls PyTorch (out= a preallocated tensor), mpsim's
golden kernel and its Fast one (Python module, build/python) in turn, `--calls` times, on the
same inputs, and reports each one's median. Calls in separate processes, minutes apart, moved
PyTorch's time by up to 1.4x on this shared machine; interleaved, a slow spell hits all three.
The slow-lane rate is the elementwise_bench counter `slow_lanes` (Note [correctly rounded float
lanes]): the share of lanes the rounding test sent to the double path, on random inputs.
"""
import argparse
import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare  # noqa: E402  (sets OPENBLAS_CORETYPE and ATEN_CPU_CAPABILITY before torch loads)


def cache_runs(build, ops):
    """{run name: {"ms": ms per call, "slow_lanes": rate or None}} of elementwise_bench's
    one-thread in-cache cases unary_cache/<op>, unary_fast_cache/<op> and unary_cr_slow/<op>
    (64Ki floats): the slow-lane rate of the golden rows on random inputs, and their speed."""
    binary = os.path.join(build, "bench", "elementwise_bench")
    pattern = "^unary_(cache|fast_cache|cr_slow)/(" + "|".join(ops) + ")/"
    out = subprocess.run([binary, "--benchmark_format=json", f"--benchmark_filter={pattern}",
                          "--benchmark_min_time=0.05"],
                         env=dict(os.environ, MPSIM_NUM_THREADS="1"), check=True,
                         capture_output=True, text=True).stdout
    runs = {}
    for b in json.loads(out)["benchmarks"]:
        scale = {"ms": 1.0, "us": 1e-3, "ns": 1e-6}[b.get("time_unit", "ns")]
        runs[b["run_name"]] = {"ms": b["real_time"] * scale, "slow_lanes": b.get("slow_lanes")}
    return runs


def slow_lanes(build, ops):
    """{op: slow-lane rate} of the golden float-lane rows on unary_cache/<op>, one thread."""
    rates = {}
    for name, run in cache_runs(build, ops).items():
        kind, op = name.split("/")[:2]
        if kind == "unary_cache" and run["slow_lanes"] is not None:
            rates[op] = run["slow_lanes"]
    return rates


SIZES = [(compare.N_SD, "[2, 320, 64, 64]"), (compare.N16M, "16M")]
F64_OPS = [name for name, _ in compare.F64_OPS]


def measure(build, calls, ops, log=None, f64=False):
    """[(op, shape, threads, golden ms, fast ms or None, PyTorch ms)] for 1 and 2 threads, each
    the median of `calls` calls, the libraries alternating call by call in one process
    (interleaved_rows, in a subprocess per thread count); f64: the float64 rows (no Fast
    kernels) against PyTorch's float64."""
    rows = []
    for threads in (1, 2):
        if log:
            log(f"cr_speed: {threads} thread(s), {len(ops)} ops{' (float64)' if f64 else ''}")
        cmd = [sys.executable, os.path.abspath(__file__), "--build", build, "--rows",
               "--threads", str(threads), "--calls", str(calls), "--ops", ",".join(ops)]
        # PASSIVE: PyTorch's OpenMP threads sleep after each call instead of spinning on the
        # cores that mpsim's call needs next (TBB's workers sleep as soon as they run dry).
        env = dict(os.environ, OMP_WAIT_POLICY="PASSIVE", MPSIM_NUM_THREADS=str(threads))
        out = subprocess.run(cmd + (["--f64"] if f64 else []), env=env, check=True,
                             capture_output=True, text=True).stdout
        rows += [tuple(r) for r in json.loads(out)]
    return rows


def mpsim_call(mpsim, np, op, x):
    """mpsim's call of a compare.unary_ops row on x (elementwise_bench's exponents for pow)."""
    if op.startswith("pow_"):
        y = {"pow_2.2": np.float32(2.2), "pow_0.4545": np.float32(1) / np.float32(2.2)}.get(op)
        y = float(y) if y is not None else float(op[4:])
        return lambda: mpsim.pow(x, y)
    if op == "softplus":
        return lambda: mpsim.softplus(x, 1, 20)
    if op == "gelu_tanh":
        return lambda: mpsim.gelu(x, "tanh")
    return lambda: getattr(mpsim, op)(x)


def interleaved_rows(build, threads, calls, ops, f64):
    """measure()'s rows for one thread count, in this process: per op and size, the same
    inputs in the same memory for both libraries (compare.unary_ops's ranges), and `calls`
    rounds of one PyTorch call (out= a preallocated tensor), one golden and one Fast call (where
    the op has Fast kernels); each one's median. A slow spell of this machine hits all three."""
    sys.path.insert(0, os.path.join(build, "python"))
    import numpy as np
    import torch
    import mpsim
    torch.set_num_threads(threads)
    mpsim.set_num_threads(threads)
    ranges = dict(compare.F64_OPS) if f64 else {name: r for name, _, r in compare.unary_ops(torch)}
    fns = {name: fn for name, fn, _ in compare.unary_ops(torch)}
    unknown = [op for op in ops if op not in ranges]
    if unknown:
        sys.exit(f"cr_speed.py: no such row: {', '.join(unknown)}")
    dtype = torch.float64 if f64 else torch.float32
    g = torch.Generator().manual_seed(0)
    rows = []
    for op in ops:
        r = ranges[op]
        lo, hi = r if isinstance(r, tuple) else (0.01 if r else -8, 8)
        for n, shape in SIZES:
            # PyTorch's tensors view mpsim's (2 MiB pages, Note [huge pages]): the same memory
            # for both, so the rows compare kernels, not the allocators' page sizes.
            xm = mpsim.tensor(torch.empty(n, dtype=dtype).uniform_(lo, hi, generator=g).numpy())
            ym = mpsim.tensor(np.zeros(n, dtype=np.float64 if f64 else np.float32))
            x, y = torch.from_numpy(np.asarray(xm)), torch.from_numpy(np.asarray(ym))
            fn = (lambda a, b, f=getattr(torch, op): f(a, out=b)) if f64 else fns[op]
            runs = {"torch": (None, lambda: fn(x, y)),
                    "golden": ("golden", mpsim_call(mpsim, np, op, xm))}
            if op in compare.FAST_OPS and not f64:
                runs["fast"] = ("fast", runs["golden"][1])
            times = {k: [] for k in runs}
            for k in [None] + list(range(calls)):
                for name, (precision, call) in runs.items():
                    if precision:
                        mpsim.set_precision(precision)
                    t0 = time.perf_counter()
                    out = call()
                    t = time.perf_counter() - t0
                    del out
                    if k is not None:  # the first round warms up
                        times[name].append(t)
            mpsim.set_precision("golden")
            med = {k: 1e3 * sorted(v)[len(v) // 2] for k, v in times.items()}
            rows.append((op, shape, threads, med["golden"], med.get("fast"), med["torch"]))
            del x, y, xm, ym
    return rows


def table(rows, fast=True):
    """The markdown table of measure()'s rows (fast: with the Fast column)."""
    lines = ["| op | shape | threads | Golden | Fast | PyTorch | PyTorch / Golden |",
             "|---|---|---|---|---|---|---|"]
    if not fast:
        lines = ["| op | shape | threads | mpsim | PyTorch | PyTorch / mpsim |",
                 "|---|---|---|---|---|---|"]
    for op, shape, threads, t_golden, t_fast, t_torch in rows:
        cells = [op, shape, str(threads), compare.ms(t_golden)]
        if fast:
            cells.append(compare.ms(t_fast) if t_fast is not None else "")
        cells += [compare.ms(t_torch), f"{t_torch / t_golden:.2f}"]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def rates_sentence(rates, ops):
    return ("Slow-lane rate (random inputs, `unary_cache/<op>`): " +
            ", ".join(f"{op} {100 * rates[op]:.2f}%" for op in ops if op in rates) + ".")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--calls", type=int, default=15, help="timed calls per library and row")
    ap.add_argument("--ops", default="exp,log,sigmoid,silu")
    ap.add_argument("--f64", action="store_true",
                    help="the float64 rows instead (--ops among " + ",".join(F64_OPS) + ")")
    ap.add_argument("--rows", action="store_true",
                    help="print one thread count's rows as JSON (measure() runs this)")
    ap.add_argument("--threads", type=int, default=1, help="with --rows")
    args = ap.parse_args()
    if args.calls < 1 or args.threads < 1:
        ap.error(f"--calls and --threads must be at least 1, got {args.calls} and {args.threads}")
    ops = args.ops.split(",")
    if args.rows:
        print(json.dumps(interleaved_rows(args.build, args.threads, args.calls, ops, args.f64)))
        return
    if args.f64:
        print(table(measure(args.build, args.calls, ops, f64=True), fast=False))
        return
    rates = slow_lanes(args.build, ops)
    print(table(measure(args.build, args.calls, ops)))
    print()
    print(rates_sentence(rates, ops))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""The correctly rounded golden unary ops beside PyTorch 1.13 and mpsim's Precision::Fast: one
markdown table for docs/performance.md ("Correctly rounded unary ops").

Usage: /usr/bin/python3 bench/cr_speed.py [--build build] [--rounds 3] [--ops exp,log,...]
       /usr/bin/python3 bench/cr_speed.py --f64 --ops exp,log,expm1,log1p,sigmoid,tanh,erf

For 1 and 2 threads (MPSIM_NUM_THREADS and torch.set_num_threads alike), runs bench/compare.py's
measure() on [2, 320, 64, 64] (unary_sd/, unary_fast_sd/) and 16M floats (unary/, unary_fast/):
rounds alternate the two libraries and each keeps its fastest. The slow-lane rate is the
elementwise_bench counter `slow_lanes` (Note [correctly rounded float lanes]): the share of
lanes the rounding test sent to the double path, on the same random inputs.
"""
import argparse
import json
import os
import subprocess
import sys

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


SIZES = [("sd", "[2, 320, 64, 64]"), ("", "16M")]


F64_OPS = ["exp", "log", "expm1", "log1p", "sigmoid", "tanh", "erf"]


def measure(build, rounds, ops, log=None, f64=False):
    """[(op, shape, threads, golden ms, fast ms or None, PyTorch ms)] for 1 and 2 threads, each
    library's fastest of `rounds` alternating rounds; f64: the float64 rows (unary64/<op>,
    unary64_sd/<op>: no Fast kernels) against PyTorch's float64."""
    rows = []
    for threads in (1, 2):
        names = "|".join(ops)
        pattern = rf"^unary64(_sd)?/({names})/" if f64 else rf"^unary(_fast)?(_sd)?/({names})/"
        _, ours, theirs, _ = compare.measure(build, threads, rounds, 20, pattern, log=log)
        for op in ops:
            for tag, shape in SIZES:
                suffix = f"_{tag}" if tag else ""
                golden = f"unary{'64' if f64 else ''}{suffix}/{op}/real_time"
                fast = f"unary_fast{suffix}/{op}/real_time"
                if golden not in ours:
                    continue
                t_golden, t_torch = min(ours[golden]), min(theirs[golden])
                t_fast = min(ours[fast]) if fast in ours else None
                rows.append((op, shape, threads, t_golden, t_fast, t_torch))
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
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ops", default="exp,log,sigmoid,silu")
    ap.add_argument("--f64", action="store_true",
                    help="the float64 rows instead (--ops among " + ",".join(F64_OPS) + ")")
    args = ap.parse_args()
    ops = args.ops.split(",")
    if args.f64:
        print(table(measure(args.build, args.rounds, ops, f64=True), fast=False))
        return
    rates = slow_lanes(args.build, ops)
    print(table(measure(args.build, args.rounds, ops)))
    print()
    print(rates_sentence(rates, ops))


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""matmul, conv2d and attention: mpsim beside OpenBLAS, oneDNN, Eigen and PyTorch, one run.

Usage: /usr/bin/python3 bench/linalg_compare.py [--build build-bench] [--threads 2]
           [--alternations 2] [--rounds 3] [--filter S] [--markdown] [--plot docs/img/sgemm.png]

Alternates `alternations` times between build/bench/linalg_bench (mpsim, OpenBLAS, oneDNN,
Eigen and the measured FMA peak, all in one process) and the same cases in PyTorch (Debian's
python3-torch 1.13 with torch.set_num_threads equal to ours and its best kernels on this CPU,
bench/torch_env.py), keeping each implementation's best time. OpenMP and OpenBLAS
threads sleep when idle (OMP_WAIT_POLICY=passive, OPENBLAS_THREAD_TIMEOUT=4: Note [idle peers]
in linalg_bench.cc) so they do not spin against whatever runs next.
--markdown prints the table; --plot writes the sgemm chart. bench/report.py imports measure()
and plot() to write docs/performance.md and docs/img/sgemm.png.
"""
import argparse
import json
import os
import subprocess
import sys
import time

# PyTorch's and OpenBLAS's best kernels on this CPU (torch_env.py); the peers' threads sleep
# when idle (Note [idle peers] in linalg_bench.cc).
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_env  # noqa: E402,F401
os.environ["OMP_WAIT_POLICY"] = "passive"
os.environ["OPENBLAS_THREAD_TIMEOUT"] = "4"

GEMM_SHAPES = [(256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (2048, 2048, 2048),
               (4096, 4096, 1024), (4096, 4096, 40), (4096, 40, 4096)]


def torch_cases(torch):
    f = torch.nn.functional
    cases = []
    for m, n, k in GEMM_SHAPES:
        a, b = torch.randn(m, k), torch.randn(k, n)
        c = torch.empty(m, n)
        cases.append((f"mm {m}x{n}x{k}", 2.0 * m * n * k, lambda a=a, b=b, c=c: torch.mm(a, b, out=c)))
    for cl in (False, True):
        tag = " nhwc" if cl else " nchw"
        fmt = torch.channels_last if cl else torch.contiguous_format
        for name, xs, ws, pad, groups in [
                ("conv3x3 320->320 [1,320,64,64]", (1, 320, 64, 64), (320, 320, 3, 3), 1, 1),
                ("conv1x1 320->320 [2,320,64,64]", (2, 320, 64, 64), (320, 320, 1, 1), 0, 1),
                ("depthwise3x3 320 [2,320,64,64]", (2, 320, 64, 64), (320, 1, 3, 3), 1, 320)]:
            x = torch.randn(*xs).contiguous(memory_format=fmt)
            w = torch.randn(*ws).contiguous(memory_format=fmt)
            bias = torch.randn(ws[0])
            flops = 2.0 * xs[0] * ws[0] * xs[2] * xs[3] * ws[1] * ws[2] * ws[3]
            cases.append((name + tag, flops,
                          lambda x=x, w=w, bias=bias, pad=pad, groups=groups:
                          f.conv2d(x, w, bias, 1, pad, 1, groups)))
        # bfloat16 and float64 depthwise (PyTorch 1.13 has no float16 convolution on the CPU).
        for dtype, name in ((torch.bfloat16, "bf16"), (torch.float64, "f64")):
            x = torch.randn(2, 320, 64, 64).to(dtype).contiguous(memory_format=fmt)
            w = torch.randn(320, 1, 3, 3).to(dtype).contiguous(memory_format=fmt)
            bias = torch.randn(320).to(dtype)
            cases.append((name + " depthwise3x3 320 [2,320,64,64]" + tag,
                          2.0 * 2 * 320 * 64 * 64 * 9,
                          lambda x=x, w=w, bias=bias: f.conv2d(x, w, bias, 1, 1, 1, 320)))
    q, k, v = (torch.randn(2, 8, 4096, 40) for _ in range(3))

    def attention():  # bmm-softmax-bmm: the [2, 8, 4096, 4096] scores in memory
        s = torch.matmul(q, k.transpose(-1, -2)) * (40 ** -0.5)
        return torch.matmul(torch.softmax(s, -1), v)
    cases.append(("attention 2x8x4096x40", 4.0 * 16 * 4096 * 4096 * 40, attention))
    return cases


def run_torch(threads, rounds, filt):
    import torch
    torch.set_num_threads(threads)
    out = []
    for name, flops, fn in torch_cases(torch):
        if filt and filt not in name:
            continue
        fn()
        best = 1e30
        for _ in range(rounds):
            t = time.perf_counter()
            fn()
            best = min(best, time.perf_counter() - t)
        out.append({"case": name, "impl": "pytorch", "ms": best * 1e3, "gflops": flops / best * 1e-9})
    return out


def run_native(args):
    exe = os.path.join(args.build, "bench", "linalg_bench")
    cmd = [exe, "--threads", str(args.threads), "--rounds", str(args.rounds)]
    if args.filter:
        cmd += ["--filter", args.filter]
    lines = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.splitlines()
    return [json.loads(line) for line in lines if line.startswith("{")]


def measure(build, threads=2, alternations=2, rounds=3, filt="", log=None):
    """Alternates linalg_bench (mpsim and the native peers) and PyTorch `alternations` times.

    Returns (best, order, peak): each (case, impl)'s best record ({"ms", "gflops"}), the keys in
    first-seen order, and the FMA peak measured in the run ({"fma f32": GFLOP/s, "fma f64": ...})."""
    args = argparse.Namespace(build=build, threads=threads, rounds=rounds, filter=filt)
    best = {}
    order = []
    for a in range(alternations):
        if log:
            log(f"linalg_compare: alternation {a + 1} of {alternations}")
        for r in run_native(args) + run_torch(threads, rounds, filt):
            key = (r["case"], r["impl"])
            if key not in best:
                order.append(key)
                best[key] = r
            elif r.get("gflops", 0) > best[key].get("gflops", 0):
                best[key] = r
    peak = {r["impl"]: r["gflops"] for (c, _), r in best.items() if c == "peak"}
    return best, order, peak


def markdown(best, order, peak, threads):
    """The table of every case and implementation: ms, GFLOP/s and the share of the FMA peak."""
    lines = [f"FMA peak measured in the same run ({threads} threads): "
             f"float32 {peak.get('fma f32', 0):.0f} GFLOP/s, float64 {peak.get('fma f64', 0):.0f} GFLOP/s", ""]
    cases = []
    for c, _ in order:
        if c != "peak" and c not in cases:
            cases.append(c)
    impls = []
    for _, i in order:
        if i not in impls and not i.startswith("fma"):
            impls.append(i)
    lines.append("| case | " + " | ".join(impls) + " |")
    lines.append("|---|" + "---|" * len(impls))
    for c in cases:
        cells = []
        for i in impls:
            r = best.get((c, i))
            if r is None:
                cells.append("")
                continue
            ref = peak.get("fma f64" if i in ("mpsim golden", "openblas dgemm") else "fma f32", 0)
            pct = f" ({100 * r['gflops'] / ref:.0f}%)" if ref else ""
            cells.append(f"{r['ms']:.2f} ms, {r['gflops']:.0f} GF/s{pct}")
        lines.append(f"| {c} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot(best, peak, threads, path, command="bench/linalg_compare.py"):
    """sgemm GFLOP/s against n for the n x n x n products, with the FMA peaks."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4))
    square = [s for s in GEMM_SHAPES if s[0] == s[1] == s[2]]
    for impl in ["mpsim fast", "mpsim golden", "openblas", "onednn", "eigen", "pytorch"]:
        xs, ys = [], []
        for m, n, k in square:
            r = best.get((f"mm {m}x{n}x{k}", impl))
            if r:
                xs.append(m)
                ys.append(r["gflops"])
        if xs:
            ax.plot(xs, ys, marker="o", label=impl)
    if "fma f32" in peak:
        ax.axhline(peak["fma f32"], color="gray", linestyle="--", label="fp32 FMA peak")
        ax.axhline(peak["fma f64"], color="gray", linestyle=":", label="fp64 FMA peak")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("n (n x n x n float32)")
    ax.set_ylabel("GFLOP/s")
    ax.set_title(f"sgemm on {threads} threads ({command})")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--build", default="build-bench")
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--alternations", type=int, default=2)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--filter", default="")
    p.add_argument("--markdown", action="store_true")
    p.add_argument("--plot", default="")
    args = p.parse_args()
    best, order, peak = measure(args.build, args.threads, args.alternations, args.rounds, args.filter)
    if not args.markdown:
        for key in order:
            print(json.dumps(best[key]))
    else:
        print(markdown(best, order, peak, args.threads))
    if args.plot:
        plot(best, peak, args.threads, args.plot)
        print(f"\nwrote {args.plot}", file=sys.stderr)


if __name__ == "__main__":
    main()

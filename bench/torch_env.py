"""PyTorch's and OpenBLAS's best kernels on this CPU, chosen before either library loads.

Importing this module sets ATEN_CPU_CAPABILITY and OPENBLAS_CORETYPE to the widest vector
extension the CPU has: avx512 and SkylakeX with AVX-512 (F, BW, DQ, VL), avx2 and Haswell with
AVX2 and FMA; on other CPUs (or where /proc/cpuinfo has no flags, as on ARM) it leaves both as
they are. Set, not defaulted: a machine's environment may carry OPENBLAS_CORETYPE=Haswell on an
AVX-512 CPU, whose AVX2 kernels run OpenBLAS's sgemm (and PyTorch's mm through it) at about half
the speed of its AVX-512 ones (1024^3 on 2 threads: about 245 GFLOP/s against 460,
`linalg_bench --filter "mm 1024x"` under each). Never above what the CPU has: PyTorch 1.13 takes
ATEN_CPU_CAPABILITY=avx512 at its word and dies of an illegal instruction (SIGILL) on a CPU
without AVX-512 (`ATEN_CPU_CAPABILITY=avx512 /usr/bin/python3 -c "import torch;
torch.exp(torch.ones(9))"` on an AVX2 machine). bench/compare.py (and cr_speed.py and report.py
through it), torch_sweep.py, interleave.py, fft_compare.py, linalg_compare.py and math_family.py
import it first.
"""
import os


def cpu_flags():
    """The CPU's feature flags from /proc/cpuinfo (empty where it lists none)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    return set(line.split(":", 1)[1].split())
    except OSError:
        pass
    return set()


def best_kernels(flags):
    """(ATEN_CPU_CAPABILITY, OPENBLAS_CORETYPE) for a CPU with these flags, or None."""
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        return "avx512", "SkylakeX"
    if {"avx2", "fma"} <= flags:
        return "avx2", "Haswell"
    return None


BEST = best_kernels(cpu_flags())
if BEST is not None:
    os.environ["ATEN_CPU_CAPABILITY"], os.environ["OPENBLAS_CORETYPE"] = BEST

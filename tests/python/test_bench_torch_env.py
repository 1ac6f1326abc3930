"""bench/torch_env.py picks PyTorch's and OpenBLAS's kernels from the CPU's flags, never above
what the CPU has (ATEN_CPU_CAPABILITY=avx512 on a CPU without AVX-512 dies of SIGILL)."""
import os
import subprocess
import sys

BENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench")
sys.path.insert(0, BENCH)
import torch_env  # noqa: E402


def test_best_kernels_by_flags():
    avx2 = {"sse4_2", "avx", "avx2", "fma", "f16c"}
    avx512 = avx2 | {"avx512f", "avx512bw", "avx512dq", "avx512vl", "avx512cd"}
    assert torch_env.best_kernels(avx512) == ("avx512", "SkylakeX")
    assert torch_env.best_kernels(avx2) == ("avx2", "Haswell")
    # AVX-512F alone (Knights Landing) lacks what PyTorch's avx512 kernels use.
    assert torch_env.best_kernels(avx2 | {"avx512f"}) == ("avx2", "Haswell")
    assert torch_env.best_kernels({"sse4_2", "avx"}) is None
    assert torch_env.best_kernels(set()) is None


def test_the_chosen_kernels_run_here():
    # A fresh interpreter loads torch under the settings torch_env sets on this machine and
    # computes with them; the parent's settings are dropped so only torch_env's apply.
    env = {k: v for k, v in os.environ.items()
           if k not in ("ATEN_CPU_CAPABILITY", "OPENBLAS_CORETYPE")}
    code = ("import sys; sys.path.insert(0, sys.argv[1]); import torch_env, os, torch; "
            "print(os.environ.get('ATEN_CPU_CAPABILITY', 'unset'), "
            "float(torch.exp(torch.zeros(64)).sum()), float((torch.ones(64, 64) @ "
            "torch.ones(64, 64)).sum()))")
    out = subprocess.run([sys.executable, "-c", code, BENCH], env=env, check=True,
                         capture_output=True, text=True).stdout.split()
    assert out[0] == (torch_env.BEST[0] if torch_env.BEST else "unset")
    assert float(out[1]) == 64.0 and float(out[2]) == 64.0 ** 3

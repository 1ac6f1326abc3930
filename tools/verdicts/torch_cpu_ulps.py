"""The largest errors of PyTorch's float32 CPU math kernels, in units of u = 2^-24 relative to
the exact value (torch's float64 result), over the inputs in (-1, 1) of 1.1M: the figures
behind the "torch_cpu" compute model of mpsim.testing (docs/verdicts.md). Run with PyTorch's
best CPU kernels:

    OPENBLAS_CORETYPE=SkylakeX ATEN_CPU_CAPABILITY=avx512 \
        /usr/bin/python3 tools/verdicts/torch_cpu_ulps.py
"""

import torch
import torch.nn.functional as F


def main():
    torch.manual_seed(0)
    x = torch.cat([torch.randn(1_000_000) * 3, torch.rand(100_000) * 0.6 - 0.3])
    near = x.abs() < 1  # gelu's left tail cancels (1 + erf): its error there is absolute
    for name, fn in [("exp", torch.exp), ("sin", torch.sin), ("tanh", torch.tanh),
                     ("erf", torch.erf), ("sigmoid", torch.sigmoid), ("silu", F.silu),
                     ("gelu", F.gelu), ("gelu_tanh", lambda t: F.gelu(t, approximate="tanh"))]:
        exact = fn(x.double())
        err = (fn(x).double() - exact).abs() / exact.abs().clamp_min(2.0 ** -126)
        print(f"{name:10s} {float(err[near].max()) / 2.0 ** -24:8.2f} u")


if __name__ == "__main__":
    main()

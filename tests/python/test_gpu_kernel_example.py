"""A GPU kernel test with mpsim as the oracle: the worked example of docs/testing-a-gpu-kernel.md.

The kernel under test is a fused softmax written in torch (a stand-in for a CUDA, Metal or
Triton kernel). It runs on "cuda" or torch's "mps" when present, else on "cpu"; mpsim.testing.check
computes the golden output from the same input and the bound that any correct kernel of the
kernel's arithmetic meets, and judges the kernel's output element by element.
"""

import os
import pathlib
import shutil
import subprocess

import numpy as np
import pytest
import torch

import mpsim
from mpsim.testing import assert_golden, check, error_bound


# --- the kernel under test ------------------------------------------------------------------

def fused_softmax(x):
    """Softmax over the last dim in one pass per row: max, exp(x - max), sum, normalize.
    float32 inside for every input dtype, one rounding to x.dtype at the end."""
    x32 = x.float()
    e = torch.exp(x32 - x32.amax(dim=-1, keepdim=True))
    return (e / e.sum(dim=-1, keepdim=True)).to(x.dtype)


# --- devices and dtypes ---------------------------------------------------------------------

def gpu_devices():
    found = []
    if torch.cuda.is_available():
        found.append("cuda")
    if getattr(torch.backends, "mps", None) is not None and torch.backends.mps.is_available():
        found.append("mps")  # torch's Apple GPU, not mpsim's simulated device
    return found or ["cpu"]


DTYPES = [torch.float32, torch.float16, torch.bfloat16]


# --- the test -------------------------------------------------------------------------------

@pytest.mark.parametrize("device", gpu_devices())
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(64, 1000), (3, 5, 77)])
def test_fused_softmax(device, dtype, shape):
    g = torch.Generator().manual_seed(0)
    x = (4 * torch.randn(shape, generator=g)).to(dtype)  # logits up to about +-20

    actual = fused_softmax(x.to(device))

    assert_golden(actual, "softmax", x, dim=-1)


def test_inputs_and_results_are_shared_not_copied():
    x = torch.randn(8, 1000, dtype=torch.bfloat16)
    xm = mpsim.from_dlpack(x)                       # torch -> mpsim: same memory
    assert xm.data_ptr() == x.data_ptr() and xm.dtype is mpsim.bfloat16
    y = torch.from_dlpack(mpsim.softmax(xm, dim=-1))  # mpsim -> torch: same memory
    assert y.dtype == torch.bfloat16

    a = np.random.default_rng(0).standard_normal((8, 1000)).astype(np.float32)
    am = mpsim.from_numpy(a)                        # NumPy -> mpsim: same memory
    assert am.data_ptr() == a.ctypes.data
    assert mpsim.softmax(am, dim=-1).numpy().dtype == np.float32


# --- what a wrong kernel looks like ---------------------------------------------------------

def softmax_without_max(x):
    """exp(x) / sum(exp(x)) with float16 intermediates: exp overflows to inf above 11.09."""
    e = torch.exp(x.float()).half()
    return (e.float() / e.float().sum(dim=-1, keepdim=True)).half()


def softmax_half_accumulator(x):
    """The max is subtracted, but the row sum is accumulated in a float16 register."""
    e = torch.exp(x.float() - x.float().amax(dim=-1, keepdim=True)).half()
    acc = torch.zeros(x.shape[:-1], dtype=torch.float16)
    for j in range(x.shape[-1]):
        acc = (acc.float() + e[..., j].float()).half()  # one float16 rounding per add
    return (e.float() / acc.float().unsqueeze(-1)).half()


def half_logits():
    g = torch.Generator().manual_seed(0)
    return (4 * torch.randn(64, 1000, generator=g)).half()


def test_overflowing_kernel_is_caught():
    x = half_logits()
    verdict = check(softmax_without_max(x), "softmax", x, dim=-1)
    assert not verdict and verdict.nan_mismatch > 0


def test_half_accumulation_is_caught():
    x = half_logits()
    verdict = check(softmax_half_accumulator(x), "softmax", x, dim=-1)
    assert not verdict and verdict.nan_mismatch == 0 and verdict.worst_ratio > 2
    with pytest.raises(AssertionError, match="softmax: FAIL"):
        assert_golden(softmax_half_accumulator(x), "softmax", x, dim=-1)


def test_the_bound_per_element():
    x = half_logits()
    bound = error_bound("softmax", x, dim=-1)  # float64, x's shape
    golden = mpsim.softmax(mpsim.from_dlpack(x), dim=-1).numpy().astype(np.float64)
    ulp = np.spacing(np.abs(golden).astype(np.float16)).astype(np.float64)
    assert bound.shape == x.shape and np.all(bound <= 2 * ulp + 2.0**-24)


# --- Golden and Fast ------------------------------------------------------------------------

def test_the_oracle_runs_golden():
    assert mpsim.get_precision() == "golden"  # the default; MPSIM_PRECISION=fast changes it
    rng = np.random.default_rng(1)
    a = rng.standard_normal((16, 4096)).astype(np.float32)
    b = rng.standard_normal((4096, 16)).astype(np.float32)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    golden = mpsim.matmul(a, b).numpy()
    with mpsim.precision("fast"):  # float32 FMA chains, as a fast GPU kernel would
        fast = mpsim.matmul(a, b).numpy()
    # Bounds of docs/numerics.md, with s = sum |a b| per output and K = 4096:
    # Golden 0.5 ulp + K 2^-53 s, Fast K 2^-24 s + 0.5 ulp.
    s = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
    half_ulp = np.spacing(np.abs(golden)).astype(np.float64) / 2
    assert np.all(np.abs(golden - exact) <= half_ulp + 4096 * 2.0**-53 * s)
    assert np.all(np.abs(fast - exact) <= half_ulp + 4096 * 2.0**-24 * s)
    assert np.abs(golden - exact).max() < np.abs(fast - exact).max()


# --- a kernel in another language: .npy files and the mpsim program -------------------------

def mpsim_program():
    """The `mpsim` program: $MPSIM_BIN, else the build tree beside this module, else PATH."""
    beside = pathlib.Path(mpsim.__file__).resolve().parents[2] / "tools" / "mpsim"
    path = os.environ.get("MPSIM_BIN") or (str(beside) if beside.exists() else None) \
        or shutil.which("mpsim")
    assert path, "the mpsim program is not built: cmake --build <build> --target mpsim_cli"
    return path


def test_files_from_another_language(tmp_path):
    x = half_logits().numpy()
    np.save(tmp_path / "x.npy", x)
    # Stand-ins for a C++/CUDA/Metal harness that writes its output buffer raw (fwrite):
    fused_softmax(torch.from_numpy(x)).numpy().tofile(tmp_path / "good.bin")
    softmax_half_accumulator(torch.from_numpy(x)).numpy().tofile(tmp_path / "bad.bin")
    for name in ("good", "bad"):
        out = np.fromfile(tmp_path / f"{name}.bin", dtype=np.float16).reshape(x.shape)
        np.save(tmp_path / f"{name}.npy", out)

    def program(*args):
        return subprocess.run([mpsim_program(), *args], cwd=tmp_path, capture_output=True,
                              text=True, timeout=120)

    good = program("check", "softmax", "--actual", "good.npy", "--in", "x.npy", "--attr", "dim=-1")
    assert good.returncode == 0 and good.stdout.startswith("softmax: pass"), good.stderr
    bad = program("check", "softmax", "--actual", "bad.npy", "--in", "x.npy", "--attr", "dim=-1")
    assert bad.returncode == 1 and bad.stdout.startswith("softmax: FAIL"), bad.stdout


def test_the_doc_quotes_this_file():
    """Every Python block of docs/testing-a-gpu-kernel.md is a verbatim part of this file."""
    doc = pathlib.Path(__file__).resolve().parents[2] / "docs" / "testing-a-gpu-kernel.md"
    source = pathlib.Path(__file__).read_text()
    blocks = doc.read_text().split("```python\n")[1:]
    assert blocks
    for block in blocks:
        code = block.split("```")[0]
        assert code in source, code

"""The `mpsim` program end to end: `run` on every op family against NumPy / PyTorch float64
oracles computed here, `compare`'s exit codes and statistics, .npy reading and writing, and the
bad-input paths (one line on stderr, exit 2, no output file).

Run by ctest (tests/cli/CMakeLists.txt) as: /usr/bin/python3 -m pytest tests/cli, with MPSIM_BIN
naming the built program.
"""
import json
import math
import os
import stat
import struct
import subprocess
from fractions import Fraction

import numpy as np
import pytest
import torch

from cli_pty import read_pty

MPSIM = os.environ.get("MPSIM_BIN", "mpsim")
RNG = np.random.default_rng(20240522)


def mpsim(*args, cwd=None):
    p = subprocess.run([MPSIM, *map(str, args)], capture_output=True, text=True, cwd=cwd,
                       timeout=120)
    return p.returncode, p.stdout, p.stderr


def save(path, array):
    np.save(path, array)
    return str(path)


def save_bf16(path, t):
    """bfloat16 by mpsim's convention: '<V2' records holding the bits."""
    bits = t.to(torch.bfloat16).view(torch.int16).numpy()
    np.save(path, bits.view("V2"))
    return str(path)


def load_bf16(path):
    a = np.load(path)
    assert a.dtype == np.dtype("V2")
    return torch.from_numpy(a.view(np.int16).copy()).view(torch.bfloat16)


def run(tmp_path, op, *inputs, attrs=(), outputs=1, extra=()):
    """Runs `mpsim run` and returns its outputs as NumPy arrays (a list when outputs > 1)."""
    args = ["run", op]
    for i, a in enumerate(inputs):
        args += ["--in", a if isinstance(a, str) else save(tmp_path / f"in{i}.npy", a)]
    for a in attrs:
        args += ["--attr", a]
    outs = [str(tmp_path / f"out{i}.npy") for i in range(outputs)]
    for o in outs:
        args += ["--out", o]
    rc, out, err = mpsim(*args, *extra)
    assert rc == 0, err
    arrays = [np.load(o) for o in outs]
    return arrays if outputs > 1 else arrays[0]


def f64(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


def assert_ulps(actual, expected, dtype, ulps=1.0):
    """|actual - expected| within `ulps` units in the last place of `dtype` at the expected value
    (expected is the float64 oracle, not rounded)."""
    actual = np.asarray(actual, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    assert actual.shape == expected.shape
    finfo = torch.finfo(dtype)
    mag = np.maximum(np.abs(expected), finfo.tiny)
    ulp = np.exp2(np.floor(np.log2(mag))) * finfo.eps
    both_nan = np.isnan(actual) & np.isnan(expected)
    ok = both_nan | (actual == expected) | (np.abs(actual - expected) <= ulps * ulp)
    assert ok.all(), f"worst: actual {actual[~ok][:5]}, expected {expected[~ok][:5]}"


def x32(shape, lo=-3.0, hi=3.0):
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


# ---- run: every op family against float64 oracles ----

UNARY = {
    "abs": (torch.abs, -3, 3), "neg": (torch.neg, -3, 3), "exp": (torch.exp, -10, 10),
    "log": (torch.log, 0.01, 100), "log1p": (torch.log1p, -0.9, 10),
    "expm1": (torch.expm1, -5, 5), "sqrt": (torch.sqrt, 0, 100),
    "rsqrt": (torch.rsqrt, 0.01, 100), "sin": (torch.sin, -3, 3), "cos": (torch.cos, -3, 3),
    "tanh": (torch.tanh, -5, 5), "erf": (torch.erf, -3, 3), "relu": (torch.relu, -3, 3),
    "sigmoid": (torch.sigmoid, -10, 10), "silu": (torch.nn.functional.silu, -10, 10),
    "reciprocal": (torch.reciprocal, 0.1, 10), "square": (torch.square, -3, 3),
    "gelu": (torch.nn.functional.gelu, -5, 5), "softplus": (torch.nn.functional.softplus, -5, 5),
}


@pytest.mark.parametrize("op", sorted(UNARY))
def test_unary_float32(tmp_path, op):
    fn, lo, hi = UNARY[op]
    x = x32((5, 7), lo, hi)
    # Golden float32 is correctly rounded or within 1 ulp (erf 1.5: docs/numerics.md).
    assert_ulps(run(tmp_path, op, x), fn(f64(x)).numpy(), torch.float32, 2)


def test_unary_attributes_and_precision(tmp_path):
    x = x32((4, 9), -4, 4)
    ref = torch.nn.functional.gelu(f64(x), approximate="tanh").numpy()
    assert_ulps(run(tmp_path, "gelu", x, attrs=["approximate=tanh"]), ref, torch.float32, 2)
    ref = torch.nn.functional.softplus(f64(x), beta=2, threshold=3).numpy()
    assert_ulps(run(tmp_path, "softplus", x, attrs=["beta=2", "threshold=3"]), ref,
                torch.float32, 2)
    # --precision fast: float32 lanes, within 1 ulp of the correctly rounded result.
    ref = torch.exp(f64(x)).numpy()
    assert_ulps(run(tmp_path, "exp", x, extra=["--precision", "fast"]), ref, torch.float32, 2)


def test_half_and_bfloat16(tmp_path):
    x = x32((3, 5), -2, 2)
    h = x.astype(np.float16)
    out = run(tmp_path, "exp", h)
    assert out.dtype == np.float16
    assert_ulps(out, torch.exp(f64(h)).numpy(), torch.float16, 1)
    b = torch.from_numpy(x).to(torch.bfloat16)
    args = ["run", "add", "--in", save_bf16(tmp_path / "b.npy", b), "--in",
            str(tmp_path / "b.npy"), "--attr", "alpha=3", "--out", str(tmp_path / "o.npy")]
    assert mpsim(*args)[0] == 0
    out = load_bf16(tmp_path / "o.npy")
    assert_ulps(out.double().numpy(), (b.double() * 4).numpy(), torch.bfloat16, 0.5)


def test_binary_compare_select(tmp_path):
    a, b = x32((2, 3)), x32((3,))
    A, B = f64(a), f64(b)
    assert_ulps(run(tmp_path, "add", a, b, attrs=["alpha=2.5"]), (A + 2.5 * B).numpy(),
                torch.float32, 0.5)
    assert_ulps(run(tmp_path, "sub", a, b), (A - B).numpy(), torch.float32, 0.5)
    assert_ulps(run(tmp_path, "mul", a, attrs=["other=-1.5"]), (A * -1.5).numpy(),
                torch.float32, 0.5)
    assert_ulps(run(tmp_path, "div", a, b), (A / B).numpy(), torch.float32, 0.5)
    np.testing.assert_array_equal(run(tmp_path, "div", a, b, attrs=["rounding_mode=floor"]),
                                  torch.floor(A / B).numpy().astype(np.float32))
    np.testing.assert_array_equal(run(tmp_path, "maximum", a, b), np.maximum(a, b))
    np.testing.assert_array_equal(run(tmp_path, "minimum", a, b), np.minimum(a, b))
    p = np.abs(a) + 0.5
    assert_ulps(run(tmp_path, "pow", p, b), torch.pow(f64(p), B).numpy(), torch.float32, 1)
    for op, fn in [("eq", np.equal), ("ne", np.not_equal), ("lt", np.less),
                   ("le", np.less_equal), ("gt", np.greater), ("ge", np.greater_equal)]:
        out = run(tmp_path, op, a, b)
        assert out.dtype == np.bool_
        np.testing.assert_array_equal(out, fn(a, b))
    cond = a > 0
    np.testing.assert_array_equal(run(tmp_path, "where", cond, a, attrs=["other=0"]),
                                  np.where(cond, a, np.float32(0)))
    np.testing.assert_array_equal(run(tmp_path, "clamp", a, attrs=["min=-1", "max=0.5"]),
                                  np.clip(a, -1, 0.5))
    ints = RNG.integers(-100, 100, size=(4, 4)).astype(np.int64)
    out = run(tmp_path, "add", ints, ints.T.copy(), attrs=["alpha=3"])
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, ints + 3 * ints.T)


def test_reductions_and_softmax(tmp_path):
    x = x32((3, 4, 5))
    X = f64(x)
    assert_ulps(run(tmp_path, "sum", x, attrs=["dim={1}", "keepdim=true"]),
                X.sum(1, keepdim=True).numpy(), torch.float32, 0.5)
    assert_ulps(run(tmp_path, "sum", x), X.sum().numpy(), torch.float32, 0.5)
    assert_ulps(run(tmp_path, "mean", x, attrs=["dim=0,2"]), X.mean((0, 2)).numpy(),
                torch.float32, 0.5)
    assert_ulps(run(tmp_path, "var", x, attrs=["dim=-1", "correction=0"]),
                X.var(-1, unbiased=False).numpy(), torch.float32, 0.5)
    assert_ulps(run(tmp_path, "std", x, attrs=["dim=[1]"]), X.std(1).numpy(), torch.float32, 1)
    var, mean = run(tmp_path, "var_mean", x, attrs=["dim=2"], outputs=2)
    assert_ulps(var, X.var(2).numpy(), torch.float32, 0.5)
    assert_ulps(mean, X.mean(2).numpy(), torch.float32, 0.5)
    assert_ulps(run(tmp_path, "prod", x, attrs=["dim=1"]), X.prod(1).numpy(), torch.float32, 1)
    assert_ulps(run(tmp_path, "norm", x, attrs=["dim=(1, 2)"]),
                torch.linalg.vector_norm(X, dim=(1, 2)).numpy(), torch.float32, 1)
    np.testing.assert_array_equal(run(tmp_path, "amax", x, attrs=["dim=1"]), x.max(1))
    np.testing.assert_array_equal(run(tmp_path, "argmin", x, attrs=["dim=2"]), x.argmin(2))
    np.testing.assert_array_equal(run(tmp_path, "argmax", x), np.int64(x.argmax()))
    assert_ulps(run(tmp_path, "logsumexp", x, attrs=["dim=-1"]),
                torch.logsumexp(X, -1).numpy(), torch.float32, 1)
    assert_ulps(run(tmp_path, "softmax", x, attrs=["dim=-1"]), torch.softmax(X, -1).numpy(),
                torch.float32, 1)
    assert_ulps(run(tmp_path, "log_softmax", x, attrs=["dim=1"]),
                torch.log_softmax(X, 1).numpy(), torch.float32, 1)
    out = run(tmp_path, "softmax", x, attrs=["dim=0", "dtype=float64"])
    assert out.dtype == np.float64
    np.testing.assert_allclose(out, torch.softmax(X, 0).numpy(), rtol=1e-13)


def test_normalization(tmp_path):
    F = torch.nn.functional
    x, w, b = x32((2, 6, 5)), x32((5,)), x32((5,))
    ref = F.layer_norm(f64(x), [5], f64(w), f64(b), 1e-5).numpy()
    assert_ulps(run(tmp_path, "layer_norm", x, w, b, attrs=["normalized_shape={5}"]), ref,
                torch.float32, 1)
    gw, gb = x32((6,)), x32((6,))
    ref = F.group_norm(f64(x), 3, f64(gw), f64(gb), eps=1e-3).numpy()
    assert_ulps(run(tmp_path, "group_norm", x, gw, gb, attrs=["num_groups=3", "eps=1e-3"]), ref,
                torch.float32, 1)
    X = f64(x)
    ref = (X / torch.sqrt((X * X).mean(-1, keepdim=True) + 1e-6) * f64(w)).numpy()
    assert_ulps(run(tmp_path, "rms_norm", x, w, attrs=["normalized_shape=5", "eps=1e-6"]), ref,
                torch.float32, 1)
    rm, rv = x32((6,)), x32((6,), 0.5, 2)
    ref = F.batch_norm(X, f64(rm), f64(rv), f64(gw), f64(gb), eps=1e-5).numpy()
    assert_ulps(run(tmp_path, "batch_norm", x, rm, rv, gw, gb), ref, torch.float32, 1)
    # bias without weight: weight=None takes it out of the --in order.
    ref = F.layer_norm(X, [5], None, f64(b)).numpy()
    assert_ulps(run(tmp_path, "layer_norm", x, b, attrs=["normalized_shape=5", "weight=None"]),
                ref, torch.float32, 1)


def test_data_movement(tmp_path):
    a, b, c = x32((2, 3)), x32((1, 3)), x32((4, 3))
    np.testing.assert_array_equal(run(tmp_path, "cat", a, b, c), np.concatenate([a, b, c]))
    np.testing.assert_array_equal(run(tmp_path, "stack", a, a, attrs=["dim=2"]),
                                  np.stack([a, a], 2))
    parts = run(tmp_path, "split", c, attrs=["split_size_or_sections={1,3}"], outputs=2)
    np.testing.assert_array_equal(parts[0], c[:1])
    np.testing.assert_array_equal(parts[1], c[1:])
    parts = run(tmp_path, "chunk", c, attrs=["chunks=2"], outputs=2)
    np.testing.assert_array_equal(parts[1], c[2:])
    idx = np.array([2, 0, 2], dtype=np.int64)
    np.testing.assert_array_equal(run(tmp_path, "index_select", a, idx, attrs=["dim=1"]),
                                  a[:, idx])
    gidx = RNG.integers(0, 2, size=(2, 3)).astype(np.int64)
    np.testing.assert_array_equal(run(tmp_path, "gather", a, gidx, attrs=["dim=0"]),
                                  np.take_along_axis(a, gidx, 0))
    np.testing.assert_array_equal(run(tmp_path, "flip", a, attrs=["dims=0,1"]), a[::-1, ::-1])
    np.testing.assert_array_equal(run(tmp_path, "repeat", a, attrs=["repeats={2,2}"]),
                                  np.tile(a, (2, 2)))
    np.testing.assert_array_equal(
        run(tmp_path, "pad", a, attrs=["pad={1,2}", "mode=reflect"]),
        torch.nn.functional.pad(torch.from_numpy(a)[None], (1, 2), mode="reflect")[0].numpy())
    np.testing.assert_array_equal(run(tmp_path, "pad", a, attrs=["pad=1,1,0,1", "value=-inf"]),
                                  np.pad(a, ((0, 1), (1, 1)), constant_values=-np.inf))
    np.testing.assert_array_equal(run(tmp_path, "triu", c, attrs=["diagonal=1"]), np.triu(c, 1))
    np.testing.assert_array_equal(run(tmp_path, "permute", x := x32((2, 3, 4)),
                                      attrs=["dims={2,0,1}"]), x.transpose(2, 0, 1))
    np.testing.assert_array_equal(run(tmp_path, "transpose", x, attrs=["dim0=0", "dim1=2"]),
                                  x.swapaxes(0, 2))
    np.testing.assert_array_equal(run(tmp_path, "reshape", x, attrs=["shape={4,-1}"]),
                                  x.reshape(4, -1))
    h = run(tmp_path, "to", x, attrs=["dtype=float16"])
    np.testing.assert_array_equal(h, torch.from_numpy(x).half().numpy())


def test_linear_algebra(tmp_path):
    if "matmul" not in signatures():
        pytest.skip("no matmul in this build")
    a, b, c = x32((2, 4, 5)), x32((5, 3)), x32((3,))
    assert_ulps(run(tmp_path, "matmul", a, b), (f64(a) @ f64(b)).numpy(), torch.float32, 1)
    w = x32((3, 5))
    ref = torch.nn.functional.linear(f64(a), f64(w), f64(c)).numpy()
    assert_ulps(run(tmp_path, "linear", a, w, c), ref, torch.float32, 1)
    m = x32((4, 5))
    ref = torch.addmm(f64(c), f64(m), f64(b), beta=0.5, alpha=2).numpy()
    assert_ulps(run(tmp_path, "addmm", c, m, b, attrs=["beta=0.5", "alpha=2"]), ref,
                torch.float32, 1)


def signatures():
    rc, out, _ = mpsim("info", "--json")
    assert rc == 0
    return {s["name"] for s in json.loads(out)["signatures"]}


def test_convolution_pooling_resizing(tmp_path):
    F = torch.nn.functional
    have = signatures()
    x = x32((2, 4, 9, 7))
    X = f64(x)
    if "conv2d" in have:
        w, b = x32((6, 2, 3, 3)), x32((6,))
        ref = F.conv2d(X, f64(w), f64(b), stride=(2, 1), padding=(1, 2), groups=2).numpy()
        out = run(tmp_path, "conv2d", x, w, b, attrs=["stride={2,1}", "padding=1,2", "groups=2"])
        assert_ulps(out, ref, torch.float32, 1)
        w1 = x32((5, 4, 3, 3))
        ref = F.conv2d(X, f64(w1), padding="same", dilation=2).numpy()
        assert_ulps(run(tmp_path, "conv2d", x, w1, attrs=["padding=same", "dilation=2"]), ref,
                    torch.float32, 1)
    if "max_pool2d" in have:
        values, indices = run(tmp_path, "max_pool2d", x,
                              attrs=["kernel_size=3", "stride=2", "padding=1",
                                     "return_indices=true"], outputs=2)
        ref_v, ref_i = F.max_pool2d(X, 3, 2, 1, return_indices=True)
        np.testing.assert_array_equal(values, ref_v.numpy().astype(np.float32))
        np.testing.assert_array_equal(indices, ref_i.numpy())
        ref = F.avg_pool2d(X, (2, 3), ceil_mode=True, count_include_pad=False).numpy()
        assert_ulps(run(tmp_path, "avg_pool2d", x,
                        attrs=["kernel_size={2,3}", "ceil_mode=true", "count_include_pad=false"]),
                    ref, torch.float32, 0.5)
        ref = F.adaptive_avg_pool2d(X, (4, 3)).numpy()
        assert_ulps(run(tmp_path, "adaptive_avg_pool2d", x, attrs=["output_size={4,3}"]), ref,
                    torch.float32, 0.5)
    if "interpolate" in have:
        ref = F.interpolate(X, scale_factor=2.0, mode="bilinear", align_corners=False).numpy()
        assert_ulps(run(tmp_path, "interpolate", x,
                        attrs=["scale_factor=2", "mode=bilinear", "align_corners=false"]),
                    ref, torch.float32, 1)
        ref = F.interpolate(X, size=(5, 11), mode="nearest").numpy().astype(np.float32)
        np.testing.assert_array_equal(run(tmp_path, "interpolate", x, attrs=["size={5,11}"]), ref)


def test_attention(tmp_path):
    if "scaled_dot_product_attention" not in signatures():
        pytest.skip("no scaled_dot_product_attention in this build")
    q, k, v = x32((2, 3, 5, 8)), x32((2, 3, 7, 8)), x32((2, 3, 7, 4))
    mask = RNG.random((5, 7)) > 0.3
    mask[:, 0] = True  # no fully masked row

    def oracle(scale, bias):
        s = f64(q) @ f64(k).transpose(-1, -2) * scale + bias
        return (torch.softmax(s, -1) @ f64(v)).numpy()

    ref = oracle(1 / math.sqrt(8), torch.where(torch.from_numpy(mask), 0.0, -math.inf))
    out = run(tmp_path, "scaled_dot_product_attention", q, k, v, mask)
    assert_ulps(out, ref, torch.float32, 2)
    causal = torch.triu(torch.full((5, 7), -math.inf, dtype=torch.float64), 1)
    out = run(tmp_path, "scaled_dot_product_attention", q, k, v,
              attrs=["is_causal=true", "scale=0.5", "slice_size=2"])
    assert_ulps(out, oracle(0.5, causal), torch.float32, 2)


def test_creation_and_random(tmp_path):
    np.testing.assert_array_equal(run(tmp_path, "arange", attrs=["start=5"]), np.arange(5))
    np.testing.assert_array_equal(
        run(tmp_path, "arange", attrs=["start=1", "end=2", "step=0.25"]),
        np.arange(1, 2, 0.25, dtype=np.float32))
    lin = run(tmp_path, "linspace", attrs=["start=-1", "end=1", "steps=7", "dtype=float64"])
    exact = [float(Fraction(-1) + Fraction(2 * k, 6)) for k in range(7)]  # correctly rounded
    assert_ulps(lin, exact, torch.float64, 1)
    full = run(tmp_path, "full", attrs=["size=2,3", "fill_value=7"])
    assert full.dtype == np.int64 and (full == 7).all() and full.shape == (2, 3)
    z = run(tmp_path, "zeros", attrs=["size={}", "dtype=bfloat16"])
    assert z.dtype == np.dtype("V2") and z.shape == ()
    r1 = run(tmp_path, "randn", attrs=["size=1000"], extra=["--seed", "7"])
    r2 = run(tmp_path, "randn", attrs=["size=1000"], extra=["--seed", "7"])
    r3 = run(tmp_path, "randn", attrs=["size=1000"], extra=["--seed", "8"])
    np.testing.assert_array_equal(r1, r2)
    assert (r1 != r3).any()
    assert abs(r1.mean()) < 0.15 and abs(r1.std() - 1) < 0.1


def test_mps_device(tmp_path):
    a, b = x32((3, 4)), x32((4,))
    cpu = run(tmp_path, "mul", a, b)
    mps = run(tmp_path, "mul", a, b, extra=["--device", "mps"])
    np.testing.assert_array_equal(cpu, mps)  # the same kernels: bit-identical
    rc, _, err = mpsim("run", "exp", "--in", save(tmp_path / "d.npy", a.astype(np.float64)),
                       "--out", tmp_path / "o.npy", "--device", "mps")
    assert rc == 2 and "float64" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "o.npy").exists()


# ---- .npy reading and writing ----

DTYPES = [np.bool_, np.uint8, np.int32, np.int64, np.float16, np.float32, np.float64]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_npy_round_trip(tmp_path, dtype):
    x = (RNG.standard_normal((3, 1, 4)) * 50).astype(dtype)
    out = run(tmp_path, "clone", x)
    assert out.dtype == np.dtype(dtype) and out.shape == x.shape
    np.testing.assert_array_equal(out, x)
    raw = open(tmp_path / "out0.npy", "rb").read()
    assert raw[:8] == b"\x93NUMPY\x01\x00"
    assert (10 + struct.unpack("<H", raw[8:10])[0]) % 64 == 0


def test_npy_bfloat16_special_values(tmp_path):
    bits = np.array([0x0000, 0x8000, 0x3F80, 0x7F80, 0xFF80, 0x7FC0, 0x0001, 0x7F7F],
                    dtype=np.uint16)
    path = tmp_path / "b.npy"
    np.save(path, bits.view("V2"))
    rc, _, err = mpsim("run", "clone", "--in", path, "--out", tmp_path / "o.npy")
    assert rc == 0, err
    out = np.load(tmp_path / "o.npy")
    assert out.dtype == np.dtype("V2")
    np.testing.assert_array_equal(out.view(np.uint16), bits)
    # and the values are bfloat16's: to(float32) is exact.
    f = run(tmp_path, "to", str(path), attrs=["dtype=float32"])
    ref = torch.from_numpy(bits.view(np.int16).copy()).view(torch.bfloat16).float().numpy()
    np.testing.assert_array_equal(f, ref)


def test_npy_layouts_and_versions(tmp_path):
    x = x32((3, 4, 5))
    np.testing.assert_array_equal(run(tmp_path, "clone", np.asfortranarray(x)), x)
    np.testing.assert_array_equal(run(tmp_path, "clone", x.astype(">f4")), x)
    big = RNG.integers(-2**40, 2**40, size=(7,)).astype(">i8")
    np.testing.assert_array_equal(run(tmp_path, "clone", big), big.astype("<i8"))
    for version in [(2, 0), (3, 0)]:
        path = tmp_path / f"v{version[0]}.npy"
        with open(path, "wb") as f:
            np.lib.format.write_array(f, x, version=version)
        np.testing.assert_array_equal(run(tmp_path, "clone", str(path)), x)
    empty = np.zeros((0, 3), dtype=np.float32)
    out = run(tmp_path, "clone", empty)
    assert out.shape == (0, 3)
    scalar = np.float64(2.5).reshape(())
    assert run(tmp_path, "clone", scalar).shape == ()


def header_file(path, header, data=b"", version=1):
    header = header.encode()
    header += b" " * ((-(len(header) + 11)) % 64) + b"\n"
    length = struct.pack("<H" if version == 1 else "<I", len(header))
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY" + bytes([version, 0]) + length + header + data)
    return str(path)


def bad_files(d):
    good = d / "good.npy"
    np.save(good, x32((4, 4)))
    raw = open(good, "rb").read()
    files = {}

    def put(name, content):
        p = d / name
        p.write_bytes(content)
        files[name] = str(p)

    put("wrong_magic.npy", b"\x93NUMPX" + raw[6:])
    put("empty.npy", b"")
    put("bad_version.npy", raw[:6] + b"\x09\x00" + raw[8:])
    put("truncated_header.npy", raw[:40])
    put("truncated_data.npy", raw[:-5])
    put("extra_data.npy", raw + b"\0" * 8)
    files["negative_shape.npy"] = header_file(
        d / "negative_shape.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }")
    files["huge_shape.npy"] = header_file(
        d / "huge_shape.npy",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4611686018427387904, 4), }")
    files["overflow_dim.npy"] = header_file(
        d / "overflow_dim.npy",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }")
    files["big_but_missing.npy"] = header_file(
        d / "big_but_missing.npy", "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000, 1000), }")
    files["not_a_dict.npy"] = header_file(d / "not_a_dict.npy", "[1, 2, 3]")
    files["missing_key.npy"] = header_file(
        d / "missing_key.npy", "{'descr': '<f4', 'shape': (1,), }", b"\0" * 4)
    files["bad_fortran.npy"] = header_file(
        d / "bad_fortran.npy", "{'descr': '<f4', 'fortran_order': maybe, 'shape': (1,), }")
    np.save(d / "complex.npy", np.ones(3, dtype=np.clongdouble))  # complex256: not an mpsim dtype
    np.save(d / "object.npy", np.array([1, "a", None], dtype=object), allow_pickle=True)
    np.save(d / "strings.npy", np.array(["ab", "c"]))
    np.save(d / "uint16.npy", np.ones(3, dtype=np.uint16))
    np.save(d / "structured.npy", np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]))
    for name in ["complex.npy", "object.npy", "strings.npy", "uint16.npy", "structured.npy"]:
        files[name] = str(d / name)
    files["missing_file.npy"] = str(d / "does_not_exist.npy")
    (d / "a_directory.npy").mkdir()
    files["directory.npy"] = str(d / "a_directory.npy")
    return files


def test_int8_and_int16_files_round_trip(tmp_path):
    for dtype in (np.int8, np.int16):
        a = np.array([-128, -1, 0, 7, 127], dtype=dtype)
        src, out = tmp_path / f"{dtype.__name__}.npy", tmp_path / f"{dtype.__name__}_out.npy"
        np.save(src, a)
        rc, _, err = mpsim("run", "neg", "--in", src, "--out", out)
        assert rc == 0, err
        got = np.load(out)
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, (-a.astype(np.int64)).astype(dtype))  # wraps


def test_complex_files_round_trip_and_transform(tmp_path):
    a = (RNG.standard_normal((2, 5)) + 1j * RNG.standard_normal((2, 5))).astype(np.complex64)
    a[0, 0] = complex(-0.0, np.inf)
    src = tmp_path / "c.npy"
    np.save(src, a)
    rc, _, err = mpsim("run", "clone", "--in", src, "--out", tmp_path / "c_out.npy")
    assert rc == 0, err
    got = np.load(tmp_path / "c_out.npy")
    assert got.dtype == np.complex64
    assert got.tobytes() == a.tobytes()
    big = a.astype(">c16")  # big-endian: each part byte-swapped
    np.save(src, big)
    rc, _, err = mpsim("run", "fft_fft", "--in", src, "--out", tmp_path / "f.npy")
    assert rc == 0, err
    want = np.fft.fft(a.astype(np.complex128))
    got = np.load(tmp_path / "f.npy")
    assert got.dtype == np.complex128
    finite = np.isfinite(want)
    np.testing.assert_allclose(got[finite], want[finite], rtol=1e-12, atol=1e-12)


def test_bad_files_fail_cleanly(tmp_path):
    for name, path in bad_files(tmp_path).items():
        out = tmp_path / "out" / "o.npy"
        out.parent.mkdir(exist_ok=True)
        rc, stdout, err = mpsim("run", "clone", "--in", path, "--out", out)
        lines = err.strip().splitlines()
        assert rc == 2, (name, err)
        assert len(lines) == 1 and lines[0].startswith("mpsim run: error:"), (name, err)
        assert not out.exists() and os.listdir(out.parent) == [], name
        rc, _, err2 = mpsim("compare", path, path)
        assert rc == 2, (name, err2)
    # The messages say what is wrong.
    again = tmp_path / "again"
    again.mkdir()
    msgs = {n: mpsim("run", "clone", "--in", p, "--out", again / "o.npy")[2]
            for n, p in bad_files(again).items()}
    assert "wrong magic" in msgs["wrong_magic.npy"]
    assert "truncated data" in msgs["truncated_data.npy"]
    assert "negative dimension" in msgs["negative_shape.npy"]
    assert "overflow" in msgs["huge_shape.npy"] and "overflow" in msgs["overflow_dim.npy"]
    assert "'<c32'" in msgs["complex.npy"] and "object" in msgs["object.npy"]
    assert "string" in msgs["strings.npy"] and "'<u2'" in msgs["uint16.npy"]
    assert "structured" in msgs["structured.npy"]
    assert "version 9.0" in msgs["bad_version.npy"]


# ---- bad command lines and op errors ----

@pytest.mark.parametrize("args,message", [
    (["run", "addd"], "unknown op 'addd'; close names: add"),
    (["run", "add", "--attr", "alpha2=1"],
     "[run] unknown attribute 'alpha2' for op 'add'; expected one of: other, alpha"),
    (["run", "add", "--attr", "alpha=abc"], "argument 'alpha' expects a number"),
    (["run", "softmax", "--attr", "dim=1.5"], "argument 'dim' expects an integer, got '1.5'"),
    (["run", "add", "--attr", "alpha"], "expected --attr name=value, got 'alpha'"),
    (["run", "add", "--attr", "alpha=1", "--attr", "alpha=2"], "attribute 'alpha' is given twice"),
    (["run", "add", "--attr", "input=1"], "('input' is an --in tensor)"),
    (["run", "softmax"], "missing required argument 'dim'"),
    (["run", "relu", "--in", "B"], "takes at most 1 tensor input(s) here (input) but 2"),
    (["run", "add", "--in", "C"], "shapes [2, 3] and [4] cannot be broadcast"),
    (["run", "split", "--attr", "split_size_or_sections=1"], "gives 2 output(s), 1 --out given"),
    (["run", "layer_norm", "--attr", "normalized_shape={7}"], "[layer_norm]"),
    (["run", "add", "--attr", "other=1", "--device", "gpu"], "--device"),
    (["run", "add", "--attr", "other=1", "--precision", "exact"], "--precision"),
])
def test_bad_run_commands(tmp_path, args, message):
    a = save(tmp_path / "a.npy", x32((2, 3)))
    b = save(tmp_path / "b.npy", x32((2, 3)))
    c = save(tmp_path / "c.npy", x32((4,)))
    args = [{"B": b, "C": c}.get(x, x) for x in args]
    out = tmp_path / "out.npy"
    rc, _, err = mpsim(*args[:2], "--in", a, *args[2:], "--out", out)
    assert rc == 2, err
    assert len(err.strip().splitlines()) == 1, err
    assert message in err, err
    assert not out.exists()
    assert sorted(os.listdir(tmp_path)) == ["a.npy", "b.npy", "c.npy"]


def test_usage_errors():
    for args in [[], ["frobnicate"], ["run"], ["compare", "only_one.npy"], ["info", "--bogus"]]:
        rc, _, err = mpsim(*args)
        assert rc == 2 and len(err.strip().splitlines()) == 1, (args, err)
    rc, out, _ = mpsim("--help")
    assert rc == 0 and "compare" in out and "alloc-replay" in out


# ---- compare ----

def compare(tmp_path, actual, expected, *flags):
    a = save(tmp_path / "actual.npy", actual)
    e = save(tmp_path / "expected.npy", expected)
    rc, out, err = mpsim("compare", a, e, "--json", *flags)
    return rc, (json.loads(out) if out else None), err


def nudge(x, ulps):
    """x moved by `ulps` units in the last place (float32), away from zero."""
    bits = x.astype(np.float32).view(np.int32)
    return (bits + np.int32(ulps)).view(np.float32)


def test_compare_tolerances_and_histogram(tmp_path):
    e = x32((8,), 1, 2)
    distances = np.array([0, 1, 2, 3, 4, 5, 8, 9])
    a = np.array([nudge(e[i:i + 1], d)[0] for i, d in enumerate(distances)], dtype=np.float32)
    rc, j, err = compare(tmp_path, e, e)
    assert rc == 0 and j["passed"] and j["mismatches"] == 0 and j["rtol"] == 1.3e-6
    rc, j, _ = compare(tmp_path, a, e, "--ulp", "9")
    assert rc == 0 and j["max_ulp"] == 9
    assert {b["ulp"]: b["count"] for b in j["ulp_histogram"]} == {
        "0": 1, "1": 1, "2": 1, "3-4": 2, "5-8": 2, "9-16": 1}
    rc, j, _ = compare(tmp_path, a, e, "--ulp", "2")
    assert rc == 1 and j["mismatches"] == 5
    assert [m["index"] for m in j["first_mismatches"]] == [[3], [4], [5], [6], [7]]
    assert [m["ulp"] for m in j["first_mismatches"]] == [3, 4, 5, 8, 9]
    # torch.testing's float32 defaults: |a - e| <= 1e-5 + 1.3e-6 |e|, checked here in float64.
    diff = np.abs(a.astype(np.float64) - e)
    expected_bad = int((diff > 1e-5 + 1.3e-6 * np.abs(e.astype(np.float64))).sum())
    rc, j, _ = compare(tmp_path, a, e)
    assert j["mismatches"] == expected_bad and rc == (1 if expected_bad else 0)
    k = int(np.argmax(diff))
    assert j["max_abs_error"]["index"] == [k] and j["max_abs_error"]["value"] == diff[k]
    rel = diff / np.abs(e.astype(np.float64))
    assert j["max_rel_error"]["index"] == [int(np.argmax(rel))]
    rc, j, _ = compare(tmp_path, a, e, "--rtol", "0", "--atol", "0")
    assert rc == 1 and j["mismatches"] == 7
    rc, j, _ = compare(tmp_path, e + 1, e, "--rtol", "0", "--atol", "1.0001")
    assert rc == 0


def test_compare_default_tolerances_per_dtype(tmp_path):
    e = np.full((1,), 1.0)
    for dtype, rtol, atol in [(np.float16, 1e-3, 1e-5), (np.float32, 1.3e-6, 1e-5),
                              (np.float64, 1e-7, 1e-7)]:
        ok = np.array([1.0 + 0.9 * (rtol + atol)])
        bad = np.array([1.0 + 1.5 * (rtol + atol)])
        if dtype == np.float16:  # representable neighbours: 1 + 2^-10 is past the bound
            ok, bad = np.array([1.0]), np.array([1.0 + 2 ** -9])
        assert compare(tmp_path, ok.astype(dtype), e.astype(dtype))[0] == 0, dtype
        rc, j, _ = compare(tmp_path, bad.astype(dtype), e.astype(dtype))
        assert rc == 1 and j["rtol"] == rtol and j["atol"] == atol, dtype
    ints = np.array([1, 2, 3], dtype=np.int64)
    assert compare(tmp_path, ints, ints)[0] == 0
    rc, j, _ = compare(tmp_path, ints + np.array([0, 0, 1]), ints)
    assert rc == 1 and j["mismatches"] == 1 and j["max_abs_error"]["index"] == [2]
    big = np.array([2**62], dtype=np.int64)
    assert compare(tmp_path, big + 1, big)[0] == 1  # exact beyond 2^53


def test_compare_special_values(tmp_path):
    nan, inf = np.float32(np.nan), np.float32(np.inf)
    e = np.array([nan, inf, -inf, 0.0, 1.0], dtype=np.float32)
    rc, j, _ = compare(tmp_path, e, e)
    assert rc == 1 and j["mismatches"] == 1  # NaN != NaN by default
    assert compare(tmp_path, e, e, "--equal-nan")[0] == 0
    a = np.array([nan, -inf, -inf, -0.0, nan], dtype=np.float32)
    rc, j, _ = compare(tmp_path, a, e, "--equal-nan")
    assert rc == 1 and j["mismatches"] == 2  # inf vs -inf, NaN vs 1
    hist = {b["ulp"]: b["count"] for b in j["ulp_histogram"]}
    assert hist["nan"] == 1 and hist["0"] == 3  # -0.0 == 0.0 is 0 ulp


def test_compare_shape_dtype_and_usage(tmp_path):
    rc, j, _ = compare(tmp_path, x32((2, 3)), x32((3, 2)))
    assert rc == 1 and "shape mismatch" in j["problem"]
    rc, j, _ = compare(tmp_path, x32((2,)), x32((2,)).astype(np.float64))
    assert rc == 1 and "dtype mismatch" in j["problem"]
    a = save(tmp_path / "a.npy", x32((2,)))
    for flags in [["--rtol", "1e-3"], ["--atol", "1"], ["--ulp", "1", "--rtol", "0", "--atol", "0"],
                  ["--ulp", "-1"], ["--rtol", "x", "--atol", "1"]]:
        rc, _, err = mpsim("compare", a, a, *flags)
        assert rc == 2 and len(err.strip().splitlines()) == 1, (flags, err)
    rc, out, _ = mpsim("compare", a, a)
    assert rc == 0 and "PASS" in out and "ulp distance histogram" in out


# ---- info and the commands kept as they were ----

def test_info_json():
    rc, out, _ = mpsim("info", "--json")
    assert rc == 0
    j = json.loads(out)
    ops = {o["name"]: o["dtypes"] for o in j["ops"]}
    assert "float64" in ops["exp"]["cpu"] and "float64" not in ops["exp"]["mps"]
    assert "float16" in ops["exp"]["mps"]
    sigs = {s["name"]: s for s in j["signatures"]}
    assert sigs["add"]["signature"] == "add(input: Tensor, other: Tensor|Scalar, alpha: Scalar = 1)"
    assert [a["name"] for a in sigs["layer_norm"]["args"]] == [
        "input", "normalized_shape", "weight", "bias", "eps"]
    rc, out, _ = mpsim("info")
    assert rc == 0 and "layer_norm(input: Tensor" in out


def test_demo_runs_the_sd_block_on_mps_bit_identical_to_cpu(tmp_path):
    trace = tmp_path / "trace.json"
    rc, out, err = mpsim("demo", "--size", "16", "--batch", "1", "--dtype", "f16",
                         "--trace", str(trace))
    assert rc == 0, err
    assert "bit-identical" in out and "demo: ok" in out
    for op in ("group_norm", "conv2d", "layer_norm", "linear", "multi_head_attention",
               "bias_split_gelu"):
        assert op in out
    assert "2 ops on the cpu fallback path" in out  # group_norm, bias_split_gelu disabled on mps
    assert "float16 vs float32: max |err|" in out
    events = json.loads(trace.read_text())["traceEvents"]
    assert any(e.get("name") == "conv2d" for e in events)
    rc, out, err = mpsim("demo", "--size", "8", "--batch", "1", "--device", "cpu")
    assert rc == 0 and "bit-identical" in out, err
    rc, _, _ = mpsim("demo", "--dtype", "f64")
    assert rc != 0
    rc, _, _ = mpsim("demo", "--bogus")
    assert rc == 2


def test_demo_json_report():
    rc, out, err = mpsim("demo", "--size", "8", "--batch", "1", "--dtype", "bf16", "--json")
    assert rc == 0, err
    r = json.loads(out)  # the whole of stdout is the JSON object
    assert r["ok"] is True and r["bit_identical"] is True and r["golden_max_abs_diff"] == 0
    assert r["latent"] == [1, 320, 8, 8] and r["dtype"] == "bfloat16" and r["device"] == "mps:0"
    ops = {o["op"]: o for o in r["ops"]}
    assert ops["group_norm"]["fallbacks"] == 1 and ops["bias_split_gelu"]["fallbacks"] == 1
    assert ops["multi_head_attention"]["calls"] == 2 and ops["multi_head_attention"]["flops"] > 0
    assert r["fallback_ops"] == 2 and r["peak_allocated_bytes"] > 0
    assert 0 < r["float32_max_abs_err"] < 0.1 * r["float32_max_abs_output"]


def test_demo_progress_only_on_a_terminal():
    rc, out, err = mpsim("demo", "--size", "8", "--batch", "1", "--device", "cpu")
    assert rc == 0 and "progress" not in err and "\r" not in err  # a pipe: no progress line
    rc, out, tty = read_pty(MPSIM, "demo", "--size", "8", "--batch", "1", "--steps", "2")
    assert rc == 0 and "demo: ok" in out
    assert "demo: block on mps:0: 0 / 2 steps" in tty
    assert tty.endswith("\r\x1b[K")  # cleared before the report goes on


def test_malformed_environment_variables_warn_and_keep_defaults():
    env = dict(os.environ, MPSIM_PRECISION="bogus", MPSIM_ENABLE_FALLBACK="perhaps",
               MPSIM_MPS_STRICT="2", MPSIM_MPS_MEMORY="lots")
    r = subprocess.run([MPSIM, "info"], capture_output=True, text=True, env=env, timeout=60)
    assert r.returncode == 0
    for var in ("MPSIM_PRECISION='bogus'", "MPSIM_ENABLE_FALLBACK='perhaps'",
                "MPSIM_MPS_STRICT='2'", "MPSIM_MPS_MEMORY='lots'"):
        assert f"mpsim warning: {var} ignored: expected" in r.stderr, r.stderr
    assert "golden" in r.stdout


def test_alloc_replay_still_runs():
    rc, out, err = mpsim("alloc-replay", "--stress", "--ops", "500", "--json")
    assert rc == 0 and json.loads(out)["invariant_violations"] == 0, err


# ---- Output paths (Note [safe outputs] in base/output_file.h): what the path names survives. ----
def _x(tmp_path):
    x = tmp_path / "x.npy"
    save(x, np.array([-1.5, 2.0], dtype=np.float32))
    return x


def test_output_through_a_symlink_keeps_the_link(tmp_path):
    x = _x(tmp_path)
    real = tmp_path / "real.npy"
    real.write_text("old")
    link = tmp_path / "link.npy"
    link.symlink_to("real.npy")
    rc, _, err = mpsim("run", "abs", "--in", x, "--out", link)
    assert rc == 0, err
    assert link.is_symlink() and os.readlink(link) == "real.npy"
    assert np.load(real).tolist() == [1.5, 2.0]


def test_output_to_a_fifo_is_written_through(tmp_path):
    x = _x(tmp_path)
    fifo = tmp_path / "f"
    os.mkfifo(fifo)
    reader = subprocess.Popen(["cat", str(fifo)], stdout=subprocess.PIPE)
    rc, _, err = mpsim("run", "abs", "--in", x, "--out", fifo)
    data = reader.communicate(timeout=30)[0]
    assert rc == 0, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)  # still a FIFO, not a regular file
    assert data.startswith(b"\x93NUMPY")


def test_output_to_a_read_only_file_is_refused_and_kept(tmp_path):
    x = _x(tmp_path)
    ro = tmp_path / "ro.npy"
    ro.write_text("keep me")
    ro.chmod(0o444)
    rc, _, err = mpsim("run", "abs", "--in", x, "--out", ro)
    assert rc == 2 and "read-only" in err, err
    assert ro.read_text() == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ro.npy", "x.npy"]  # no temporary left


def test_output_to_a_full_device_is_an_error(tmp_path):
    x = _x(tmp_path)
    rc, _, err = mpsim("run", "abs", "--in", x, "--out", "/dev/full")
    assert rc == 2 and "No space left" in err, err
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)
    rc, _, err = mpsim("run", "abs", "--in", x, "--out", "/dev/null")
    assert rc == 0, err
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_output_that_is_an_input_or_a_directory_is_refused(tmp_path):
    x = _x(tmp_path)
    before = x.read_bytes()
    alias = tmp_path / "alias.npy"
    alias.symlink_to("x.npy")
    for out in (x, alias):
        rc, _, err = mpsim("run", "abs", "--in", x, "--out", out)
        assert rc == 2 and "it is the input" in err, err
    assert x.read_bytes() == before
    rc, _, err = mpsim("run", "abs", "--in", x, "--out", tmp_path)
    assert rc == 2 and "directory" in err, err


def test_alloc_outputs_never_overwrite_their_input(tmp_path):
    trace = tmp_path / "t.trace"
    trace.write_text("a 1 8\nf 1\n")
    rc, _, err = mpsim("alloc-replay", trace, "--timeline", trace)
    assert rc == 2 and "it is the input" in err, err
    assert trace.read_text() == "a 1 8\nf 1\n"


def test_numeric_options_state_their_range_and_refuse_what_does_not_fit(tmp_path):
    x = _x(tmp_path)
    trace = tmp_path / "t.trace"
    trace.write_text("a 1 8\nf 1\n")
    cases = [
        (("compare", x, x, "--ulp", "-1"), "--ulp: expected an integer from 0 to"),
        (("compare", x, x, "--ulp", "99999999999999999999"), "is too large"),
        (("compare", x, x, "--rtol", "inf", "--atol", "0"), "expected a finite number >= 0"),
        (("compare", x, x, "--max-mismatches", "-1"), "from 0 to 2147483647"),
        (("alloc-replay", trace, "--limit", "99999999999999999999"), "is too large"),
        (("alloc-replay", "--stress", "--ops", "0"), "--ops: expected an integer from 1"),
        (("alloc-replay", "--stress", "--seed", "1e23"), "--seed: expected an integer"),
        (("alloc-replay", "--stress", "--threads", "9"), "from 1 to 8"),
    ]
    for args, expected in cases:
        rc, _, err = mpsim(*args)
        assert rc == 2, (args, err)
        assert expected in err and len(err) < 300, (args, err)  # no 309-digit bounds


def test_untrusted_text_in_messages_is_escaped_not_cut(tmp_path):
    header = b"{'descr': '<f\x004', 'fortran_order': False, 'shape': (2,), }"
    header += b" " * (63 - (10 + len(header)) % 64) + b"\n"
    bad = tmp_path / "nul.npy"
    bad.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + bytes(8))
    rc, _, err = mpsim("run", "clone", "--in", bad, "--out", tmp_path / "o.npy")
    assert rc == 2 and "'<f\\x004'" in err and "are not supported" in err, err
    trace = tmp_path / "n.trace"
    trace.write_bytes(b"a 1 8\x00x\n")
    rc, _, err = mpsim("alloc-replay", trace)
    assert rc == 2 and "a 1 8\\x00x" in err, err


# ---- mpsim check: the verdict of mpsim.testing.check --------------------------------------------

def _check_available():
    rc, _, err = mpsim("check", "--help")
    return rc == 0


needs_python = pytest.mark.skipif(not _check_available(),
                                  reason="mpsim check needs this build's Python module")


@needs_python
def test_check_passes_a_correct_kernel_and_fails_a_wrong_one(tmp_path):
    a = RNG.standard_normal((16, 300)).astype(np.float32)
    b = RNG.standard_normal((300, 8)).astype(np.float32)
    good = (torch.from_numpy(a).double() @ torch.from_numpy(b).double()).float().numpy()
    ins = ["--in", save(tmp_path / "a.npy", a), "--in", save(tmp_path / "b.npy", b)]
    rc, out, err = mpsim("check", "matmul", "--actual", save(tmp_path / "good.npy", good), *ins)
    assert rc == 0 and out.startswith("matmul: pass"), err
    bad = good.copy()
    bad[3, 4] += 1e-2
    rc, out, _ = mpsim("check", "matmul", "--actual", save(tmp_path / "bad.npy", bad), *ins,
                       "--json")
    assert rc == 1
    verdict = json.loads(out)
    assert verdict["failures"] == 1 and verdict["worst_index"] == [3, 4]
    # TF32 products: a TF32 result fails the float32 model and passes its own
    tf = (torch.from_numpy(a).double() @ torch.from_numpy(b).double()).numpy()
    tf[0, 0] += 1e-3 * abs(tf[0, 0]) + 1e-3
    tf = tf.astype(np.float32)
    path = save(tmp_path / "tf.npy", tf)
    assert mpsim("check", "matmul", "--actual", path, *ins)[0] == 1
    assert mpsim("check", "matmul", "--actual", path, *ins, "--compute", "tf32")[0] == 0


@needs_python
def test_check_attributes_and_16_bit_files(tmp_path):
    x = torch.from_numpy(RNG.standard_normal((4, 77)).astype(np.float32)).to(torch.bfloat16)
    y = torch.softmax(x.float(), -1).to(torch.bfloat16)
    rc, out, err = mpsim("check", "softmax", "--actual", save_bf16(tmp_path / "y.npy", y),
                         "--in", save_bf16(tmp_path / "x.npy", x), "--attr", "dim=-1")
    assert rc == 0, out + err
    rc, _, err = mpsim("check", "softmax", "--actual", save_bf16(tmp_path / "y.npy", y),
                       "--in", save_bf16(tmp_path / "x.npy", x), "--attr", "dim=0")
    assert rc == 1


@needs_python
@pytest.mark.parametrize("args,message", [
    (["matmul", "--actual", "missing.npy", "--in", "missing.npy"], "No such file"),
    (["no_such_op", "--actual", "{a}", "--in", "{a}"], "not an op of mpsim"),
    (["exp", "--actual", "{a}", "--in", "{a}", "--compute", "float8"], "unknown compute"),
    (["exp", "--actual", "{a}", "--in", "{a}", "--attr", "novalue"], "NAME=VALUE"),
    (["exp", "--in", "{a}"], "required"),
])
def test_check_bad_input_exits_2(tmp_path, args, message):
    a = save(tmp_path / "a.npy", np.ones(3, np.float32))
    rc, out, err = mpsim("check", *[s.format(a=a) for s in args], cwd=tmp_path)
    assert rc == 2 and message in err, (out, err)


@needs_python
def test_batch_shards_give_the_same_files_and_failures_exit_1(tmp_path):
    cases = [{"id": f"exp-{i}", "op": "exp", "inputs": [{"shape": [64], "seed": i}]}
             for i in range(5)] + [{"id": "bad", "op": "mm", "inputs": [
                 {"shape": [2, 3], "seed": 1}, {"shape": [2, 3], "seed": 2}]}]
    (tmp_path / "m.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    rc, out, err = mpsim("batch", "m.jsonl", "--out", "whole", "--quiet", cwd=tmp_path)
    assert rc == 1 and "case bad failed" in err and "5 of 6" in out
    for k in range(2):
        assert mpsim("batch", "m.jsonl", "--out", "parts", "--shard", f"{k}/2", "--quiet",
                     cwd=tmp_path)[0] in (0, 1)
    for i in range(5):
        assert (tmp_path / "whole" / f"exp-{i}.npy").read_bytes() == \
            (tmp_path / "parts" / f"exp-{i}.npy").read_bytes()
    assert mpsim("batch", "m.jsonl", "--out", "x", "--shard", "2/2", cwd=tmp_path)[0] == 2

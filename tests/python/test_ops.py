"""Every op of the registry against torch on the CPU in float64, on random inputs.

Each case builds float64 NumPy inputs, rounds them to the tested dtype, runs mpsim in that dtype
and torch in float64 on the same (rounded) values, and compares with torch.testing's tolerance
for the tested dtype (mpsim's golden results are correctly rounded or within 1 ulp of it).
An op of the registry with no case here fails test_every_op_has_a_case.
"""

import json
import math
import pathlib
import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import mp_refs
import mpsim
from mpsim.testing import assert_close

# The case database (tests/cases/op_cases.json; tests/cases/README.md says how a case is written),
# also run by tests/op_registry_test.cc and tests/device/mps_every_op_test.cc.
DATABASE = pathlib.Path(__file__).resolve().parents[1] / "cases" / "op_cases.json"
FLOATS = ("float32", "float16", "bfloat16")
N = 5  # the size of the dim "n"
# Significand bits and smallest normal exponent, for ULPs of the result's dtype.
PRECISION = {"float32": (24, -126), "float16": (11, -14), "bfloat16": (8, -126),
             "float64": (53, -1022)}


class Case:
    """One case of the database: op(*args, **kwargs) in mpsim against ref in float64."""

    def __init__(self, spec):
        self.op, self.args = spec["op"], spec.get("args", [])
        self.kwargs = spec.get("kwargs", {})
        self.id = spec.get("id", self.op)
        self.ref = spec.get("ref")
        self.random = spec.get("random", False)
        self.dtypes = tuple(spec.get("dtypes", FLOATS))
        self.bound = spec.get("bound", {"ulp": 1})


def load_cases():
    return [Case(c) for c in json.loads(DATABASE.read_text())["cases"]]


CASES = load_cases()


def sizes(shape):
    return tuple(N if d == "n" else d for d in shape)


def values(spec, rng):
    """The float64 (or int64 / bool) NumPy values of a tensor spec, and its layout."""
    layout = spec.get("layout", "")
    (kind, arg), = [(k, v) for k, v in spec.items() if k not in ("layout", "dtype")]
    if kind == "dominant":  # [-1, 1) plus k + 1 on the diagonal of each k x k matrix
        shape = sizes(arg)
        return rng.uniform(-1.0, 1.0, shape) + (shape[-1] + 1) * np.eye(shape[-1]), layout
    if kind == "normal":
        return rng.standard_normal(sizes(arg)), layout
    if kind == "positive":
        return rng.uniform(0.1, 4.0, sizes(arg)), layout
    if kind == "near_one":
        return rng.uniform(0.8, 1.25, sizes(arg)), layout
    if kind == "probability":
        return rng.uniform(0.0, 1.0, sizes(arg)), layout
    if kind == "uniform":
        low, high, shape = arg
        return rng.uniform(low, high, sizes(shape)), layout
    if kind == "ints":
        low, high, shape = arg
        return rng.integers(low, high, sizes(shape)).astype(np.int64), layout
    if kind == "bools":
        return rng.random(sizes(arg)) < 0.5, layout
    if kind == "attend":  # true = attend; the diagonal keeps every row attending somewhere
        *lead, l, s = sizes(arg)
        return (rng.random((*lead, l, s)) < 0.5) | np.eye(l, s, dtype=bool), layout
    raise ValueError(f"unknown kind of values {kind!r} in {DATABASE}")


def in_layout(t, layout):
    if layout == "channels_last":
        return t.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)
    if layout == "transposed":
        return t.transpose(-2, -1).contiguous().transpose(-2, -1)
    return t


def resolve_ref(name):
    """ "torch.x", "F.x", "Tensor.x" (the method) or a reference defined in this file."""
    if name.startswith("torch."):
        ref = torch
        for part in name[6:].split("."):
            ref = getattr(ref, part)
        return ref
    if name.startswith("F."):
        return getattr(F, name[2:])
    if name.startswith("Tensor."):
        return lambda x, *a, **k: getattr(x, name[7:])(*a, **k)
    return globals()[name]


# The math family's references: mpmath at 40 digits (tests/python/mp_refs.py).
for _name, _ref in mp_refs.REFS.items():
    globals()["mp_" + _name] = _ref


def _column_signs(u):
    """mpsim's sign rule for singular and eigen vectors: the first component of largest
    magnitude of each column positive."""
    at = u.abs().argmax(dim=-2, keepdim=True)
    s = torch.sign(torch.gather(u, -2, at))
    return torch.where(s == 0, torch.ones_like(s), s)


def svd_ref(a, full_matrices=True):
    u, s, vh = torch.linalg.svd(a, full_matrices=full_matrices)
    sign = _column_signs(u)
    return u * sign, s, vh * sign.transpose(-2, -1)


def svd_old_ref(a, some=True, compute_uv=True):
    u, s, vh = svd_ref(a, not some)
    return u, s, vh.transpose(-2, -1)


def eig_ref(a):
    """torch's eig in float64 in mpsim's order and phase: values ascending by real part, then
    imaginary part; each vector's first component of largest modulus real and positive."""
    w, v = torch.linalg.eig(a)
    order = torch.argsort(w.imag, dim=-1, stable=True)
    order = order.gather(-1, torch.argsort(w.real.gather(-1, order), dim=-1, stable=True))
    w = w.gather(-1, order)
    v = v.gather(-1, order.unsqueeze(-2).expand(v.shape))
    c = v.gather(-2, v.abs().argmax(dim=-2, keepdim=True))
    return w, v * (c.conj() / c.abs())


def eigvals_ref(a):
    return eig_ref(a)[0]


def eigh_ref(a, UPLO="L"):
    w, v = torch.linalg.eigh(a, UPLO)
    return w, v * _column_signs(v)


def symeig_ref(a, eigenvectors=False, upper=True):
    return eigh_ref(a, "U" if upper else "L")


def cholesky_solve_ref(b, l, upper=False):
    l = l.triu() if upper else l.tril()
    return torch.cholesky_solve(b, l, upper)


def cholesky_inverse_ref(l, upper=False):
    l = l.triu() if upper else l.tril()
    return torch.cholesky_inverse(l, upper)


def matrix_norm_ref(a, ord="fro", dim=(-2, -1), keepdim=False):
    return torch.linalg.matrix_norm(a, ord, dim, keepdim)


def atan2_ref(x, other):
    return torch.atan2(x, torch.as_tensor(other, dtype=torch.float64))


def nextafter_ref(x, other):
    """One step in float32 (the tested dtype), as the result is."""
    return torch.from_numpy(np.nextafter(x.numpy().astype(np.float32),
                                         other.numpy().astype(np.float32)).astype(np.float64))


def special_xlog1py_ref(x, other):
    return torch.special.xlog1py(x, other)


def round_decimals_ref(x, decimals=0):
    """torch's definition in float64: scaled, rounded half to even, scaled back."""
    return torch.round(x, decimals=decimals)


def cartesian_prod_ref(tensors):
    return torch.cartesian_prod(*tensors)


def block_diag_ref(tensors):
    return torch.block_diag(*tensors)


def rms_norm_ref(x, normalized_shape, weight=None, eps=None):
    dims = tuple(range(-len(normalized_shape), 0))
    eps = torch.finfo(torch.float32).eps if eps is None else eps
    y = x * torch.rsqrt(x.pow(2).mean(dims, keepdim=True) + eps)
    return y if weight is None else y * weight


def var_mean_ref(x, dim=None, correction=1, keepdim=False):
    return torch.var_mean(x, dim=dim, unbiased=bool(correction), keepdim=keepdim)


def attend(l, s, *lead):  # a bool mask (true = attend) with no fully masked row
    return lambda rng: (rng.random((*lead, l, s)) < 0.5) | np.eye(l, s, dtype=bool)


def sdpa_ref(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
             slice_size=None):
    """softmax(q k^T scale + mask) v in torch ops (torch 1.13 has no F.scaled_dot_product_attention);
    is_causal keeps key j <= query i (top-left); slice_size changes no value."""
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    scores = q @ k.transpose(-2, -1) * scale
    if is_causal:
        keep = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
        scores = scores.masked_fill(~keep, -math.inf)
    if attn_mask is not None and attn_mask.dtype == torch.bool:
        scores = scores.masked_fill(~attn_mask, -math.inf)
    elif attn_mask is not None:
        scores = scores + attn_mask
    return torch.softmax(scores, -1) @ v


def bias_add_ref(x, bias, skip):
    return x + bias + skip


def to_ref(x, dtype):
    return x.to(getattr(torch, dtype))


def bias_split_gelu_ref(x, bias):
    a, b = (x + bias).chunk(2, -1)
    return a * F.gelu(b)


def skip_layer_norm_ref(x, skip, gamma, beta=None, bias=None, eps=1e-5, return_sum=False):
    s = x + skip if bias is None else x + skip + bias
    y = F.layer_norm(s, s.shape[-1:], gamma, beta, eps)
    return (y, s) if return_sum else y


def group_norm_nhwc_ref(x, num_groups, gamma, beta, eps=1e-5, activation="none"):
    y = F.group_norm(x.permute(0, 3, 1, 2), num_groups, gamma, beta, eps)
    return (F.silu(y) if activation == "silu" else y).permute(0, 2, 3, 1)


def multi_head_attention_ref(query, key=None, scale=None):
    """Packed QKV [B, S, H, 3, D], or query [B, L, H * D] with packed KV [B, S, H, 2, D]."""
    if key is None:
        q, k, v = query.unbind(3)
    else:
        k, v = key.unbind(3)
        q = query.reshape(*query.shape[:2], *k.shape[2:])
    q, k, v = (t.transpose(1, 2) for t in (q, k, v))  # [B, H, L, D]
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    out = torch.softmax(q @ k.transpose(-2, -1) * scale, -1) @ v
    return out.transpose(1, 2).flatten(2)


def test_every_op_has_a_case():
    missing = sorted(set(mpsim.ops) - {c.op for c in CASES})
    assert not missing, f"ops of the registry with no case in {DATABASE}: {missing}"


def test_every_case_names_an_op_and_a_reference():
    for c in CASES:
        assert c.op in mpsim.ops, c.id
        assert c.random or c.ref, f"{c.id}: no reference (a random op says \"random\": true)"
        if c.ref:
            resolve_ref(c.ref)
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids)), "ids repeat"


def _build(case, dtype, device, seed):
    """The case's arguments for mpsim (in dtype, on device) and for torch (float64, the same
    values as mpsim's: rounded to dtype first)."""
    rng = np.random.default_rng(seed)
    has_device = any(a[0] == "device" for s in mpsim._C._signatures if s["name"] == case.op
                     for a in s["args"])

    def convert(v):
        if isinstance(v, dict):
            made, layout = values(v, rng)
            if made.dtype == np.float64:
                m = mpsim.tensor(made, dtype=dtype)
                t = torch.from_numpy(m.numpy().astype(np.float64))
            else:
                m, t = mpsim.tensor(made), torch.from_numpy(made.copy())
            if "dtype" in v:  # an integer operand of another dtype (pivots: int32)
                m, t = m.to(getattr(mpsim, v["dtype"])), t.to(getattr(torch, v["dtype"]))
            return in_layout(m, layout).to(device), t
        if isinstance(v, list) and v and isinstance(v[0], dict):
            pairs = [convert(x) for x in v]
            return [m for m, _ in pairs], [t for _, t in pairs]
        if isinstance(v, list):
            v = [N if d == "n" else d for d in v]
            return v, v
        if v == "$dtype":
            return getattr(mpsim, dtype), torch.float64
        return v, v

    args = [convert(v) for v in case.args]
    kwargs = {k: convert(v) for k, v in case.kwargs.items()}
    if has_device and "device" not in kwargs:
        kwargs["device"] = (device, "cpu")
    m = ([a for a, _ in args], {k: a for k, (a, _) in kwargs.items()})
    t = ([b for _, b in args], {k: b for k, (_, b) in kwargs.items() if k != "device"})
    return m, t


def ulps(got, want, dtype):
    """|got - want| in units in the last place of want in dtype (float64 NumPy arrays)."""
    bits, emin = PRECISION[dtype]
    _, e = np.frexp(np.abs(want))
    exponent = np.where(want == 0, emin, np.maximum(e - 1, emin))
    with np.errstate(invalid="ignore"):
        return np.abs(got - want) / np.ldexp(1.0, exponent - (bits - 1))


def check_output(case, got, want):
    assert tuple(got.shape) == tuple(want.shape)
    if got.dtype.is_complex:  # judged part by part in the part dtype
        assert want.is_complex()
        got, want = mpsim.view_as_real(got), torch.view_as_real(want.resolve_conj())
    g_dtype = str(got.dtype).replace("mpsim.", "")
    g = torch.from_numpy(np.asarray(got.to(mpsim.float32 if g_dtype in ("bfloat16", "float16")
                                           else got.dtype).numpy()))
    if case.bound == "exact" or g_dtype not in PRECISION:
        # Integers, bools and indices exactly; floats bit for bit after rounding the reference.
        expected = want.to(g.dtype) if g_dtype not in PRECISION else \
            want.to(getattr(torch, g_dtype)).to(g.dtype)
        assert_close(g, expected, rtol=0, atol=0, equal_nan=True, check_dtype=False)
        return
    if case.bound == "tolerance":
        # torch.testing's tolerance for the dtype, against the reference rounded to it.
        assert_close(g, want.to(getattr(torch, g_dtype)), check_dtype=False)
        return
    g64, w64 = g.double().numpy(), want.double().numpy()
    nan = np.isnan(w64)
    np.testing.assert_array_equal(np.isnan(g64), nan, err_msg="NaN where the reference has none")
    same = (g64 == w64) | nan
    err = np.where(same, 0.0, ulps(g64, w64, g_dtype))
    if "norm" in case.bound and w64.size:  # a transform: errors relative to the output's scale
        err = np.where(np.abs(g64 - w64) <= case.bound["norm"] * np.abs(w64).max(), 0.0, err)
    worst = float(err.max(initial=0.0))
    assert worst <= case.bound["ulp"], (
        f"{case.id}: {worst:.3g} ULP of {g_dtype} from the float64 reference, bound "
        f"{case.bound['ulp']} (element {np.unravel_index(err.argmax(), err.shape)})")


# A case whose op this build's registry lacks (a row written ahead of its op) is reported as
# skipped, by name.
@pytest.mark.parametrize("device", ["cpu", "mps"])
@pytest.mark.parametrize("case,dtype", [
    pytest.param(c, d, id=f"{c.id}-{d}", marks=pytest.mark.skipif(
        c.op not in mpsim.ops, reason=f"{c.op} is not in this build's op registry"))
    for c in CASES if not c.random for d in c.dtypes])
def test_op_against_torch_float64(case, dtype, device):
    (m_args, m_kwargs), (t_args, t_kwargs) = _build(case, dtype, device,
                                                    seed=zlib.crc32(case.id.encode()))
    got = getattr(mpsim, case.op)(*m_args, **m_kwargs)
    want = resolve_ref(case.ref)(*t_args, **t_kwargs)
    if isinstance(want, torch.Tensor):
        got, want = (got,), (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.device == device
        check_output(case, g, w)


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_creation_ops(device):
    assert_close(mpsim.arange(1, 10, 2, device=device), np.arange(1, 10, 2))
    assert_close(mpsim.arange(5.0), np.arange(5.0, dtype=np.float32))
    assert_close(mpsim.linspace(-1, 2, 7, device=device),
                 np.linspace(-1, 2, 7).astype(np.float32))
    z = mpsim.zeros(2, 3, dtype=mpsim.float16, device=device)
    assert z.shape == (2, 3) and z.dtype is mpsim.float16 and z.device == device
    assert_close(z, np.zeros((2, 3), np.float16))
    assert_close(mpsim.ones((4,), dtype=mpsim.int32), np.ones(4, np.int32))
    assert_close(mpsim.full([2, 2], 1.5, device=device), np.full((2, 2), 1.5, np.float32))


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES if c.random])
def test_random_ops_are_seeded_and_device_independent(case):
    def draw(device, seed):
        (args, kwargs), _ = _build(case, "float32", device, seed=zlib.crc32(case.id.encode()))
        mpsim.manual_seed(seed)
        return getattr(mpsim, case.op)(*args, **kwargs)

    a = draw("cpu", 1234)
    assert a.device == "cpu" and a.shape[0] == N
    np.testing.assert_array_equal(a.numpy(), draw("mps", 1234).numpy())
    if case.id != "randint_bool":  # 2^-15 of a chance that 15 bools repeat
        assert not np.array_equal(draw("cpu", 1235).numpy(), a.numpy())


def test_bernoulli_and_dropout():
    mpsim.manual_seed(7)
    p = mpsim.full((1000,), 0.25)
    draws = mpsim.bernoulli(p).numpy()
    assert set(np.unique(draws)) <= {0.0, 1.0}
    assert 0.15 < draws.mean() < 0.35
    x = mpsim.ones(1000)
    y = mpsim.dropout(x, p=0.5).numpy()
    assert set(np.unique(y)) <= {0.0, 2.0}
    assert_close(mpsim.dropout(x, p=0.5, training=False), x)


def test_keyword_and_positional_binding():
    x = mpsim.tensor(np.arange(6.0, dtype=np.float32).reshape(2, 3))
    assert_close(mpsim.softmax(x, -1), mpsim.softmax(x, dim=-1))
    assert_close(mpsim.sum(x), np.float32(15.0))  # dim=None reduces every dim
    assert_close(mpsim.sum(x, 1, True), np.array([[3.0], [12.0]], np.float32))
    assert_close(mpsim.add(x, 1, alpha=2), x.numpy() + 2)
    assert_close(x.softmax(-1), mpsim.softmax(x, dim=-1))  # generated method
    assert_close(x.sum(dim=0), np.array([3.0, 5.0, 7.0], np.float32))
    # NumPy arrays and scalars are accepted where tensors are
    assert_close(mpsim.mul(x, np.float32(2)), x.numpy() * 2)
    assert_close(mpsim.maximum(x, np.ones((2, 3), np.float32)), np.maximum(x.numpy(), 1))
    assert math.isclose(mpsim.mean(x).item(), 2.5)


@pytest.mark.parametrize("device", ["cpu", "mps"])
def test_composed_ops_on_special_values_match_torch_bit_for_bit(device):
    """The compositions on NaN, +-inf, +-0, subnormals and integers, as torch gives them."""
    values = np.array([-2, -0.0, 0.0, 0.5, 7, np.nan, np.inf, -np.inf, 0.1, 1e-40], np.float32)
    x, t = mpsim.tensor(values).to(device), torch.from_numpy(values)
    for op, ref, kwargs in [("relu6", F.relu6, {}), ("hardtanh", F.hardtanh, {}),
                            ("leaky_relu", F.leaky_relu, {"negative_slope": 0.2}),
                            ("threshold", F.threshold, {"threshold": 0.1, "value": 20.0}),
                            ("isnan", torch.isnan, {}), ("isinf", torch.isinf, {}),
                            ("isfinite", torch.isfinite, {}),
                            ("logical_not", torch.logical_not, {}), ("sign", torch.sign, {}),
                            ("hardshrink", F.hardshrink, {}), ("softshrink", F.softshrink, {}),
                            ("nan_to_num", torch.nan_to_num, {})]:
        got, want = getattr(mpsim, op)(x, **kwargs).numpy(), ref(t, **kwargs).numpy()
        assert got.dtype == want.dtype, op
        assert got.tobytes() == want.tobytes(), (op, got, want)
    # binary: every pair of special values (float32: torch's 16-bit fmax/fmin return the
    # second operand where they compare equal, docs/ops.md)
    a, b = np.meshgrid(values, values)
    xa, xb = mpsim.tensor(a.ravel()).to(device), mpsim.tensor(b.ravel()).to(device)
    ta, tb = torch.from_numpy(a.ravel()), torch.from_numpy(b.ravel())
    for op in ("fmax", "fmin", "logical_and", "logical_or", "logical_xor"):
        got, want = getattr(mpsim, op)(xa, xb).numpy(), getattr(torch, op)(ta, tb).numpy()
        assert got.dtype == want.dtype and got.tobytes() == want.tobytes(), op
    for dtype in ("int32", "uint8", "bool"):
        xi = mpsim.tensor(np.array([0, 1, 2]).astype(dtype)).to(device)
        ti = torch.tensor([0, 1, 2]).to(getattr(torch, dtype))
        for op in ("isnan", "isinf", "isfinite", "logical_not"):
            assert getattr(mpsim, op)(xi).tolist() == getattr(torch, op)(ti).tolist(), (op, dtype)

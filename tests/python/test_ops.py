"""Every op of the registry against torch on the CPU in float64, on random inputs.

Each case builds float64 NumPy inputs, rounds them to the tested dtype, runs mpsim in that dtype
and torch in float64 on the same (rounded) values, and compares with torch.testing's tolerance
for the tested dtype (mpsim's golden results are correctly rounded or within 1 ulp of it).
An op of the registry with no case here fails test_every_op_has_a_case.
"""

import math
import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as F

import mpsim
from mpsim.testing import assert_close

FLOATS = ("float32", "float16", "bfloat16")
F32 = ("float32",)


class Case:
    """op(*inputs, **kwargs) in mpsim against ref(*inputs_as_torch_float64, **kwargs)."""

    def __init__(self, op, ref, inputs, kwargs=None, dtypes=FLOATS, id=None, exact=False):
        self.op, self.ref, self.inputs = op, ref, inputs
        self.kwargs = kwargs or {}
        self.dtypes, self.id, self.exact = dtypes, id or op, exact


def normal(*shape):
    return lambda rng: rng.standard_normal(shape)


def positive(*shape):
    return lambda rng: rng.uniform(0.1, 4.0, shape)


def near_one(*shape):
    return lambda rng: rng.uniform(0.8, 1.25, shape)


def ints(low, high, *shape):  # an index tensor: int64, not converted to the tested dtype
    return lambda rng: rng.integers(low, high, shape).astype(np.int64)


def bools(*shape):
    return lambda rng: rng.random(shape) < 0.5


def tensors(*makers):  # a Tensor[] argument
    return lambda rng: [m(rng) for m in makers]


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


S = (5, 7)  # an odd shape: SIMD tails everywhere

CASES = [
    # unary
    *[Case(n, getattr(torch, n), [normal(*S)]) for n in
      ("abs", "neg", "exp", "expm1", "sin", "cos", "tanh", "erf", "relu", "sigmoid", "square")],
    *[Case(n, getattr(torch, n), [positive(*S)]) for n in
      ("log", "log1p", "sqrt", "rsqrt", "reciprocal")],
    Case("silu", F.silu, [normal(*S)]),
    Case("gelu", F.gelu, [normal(*S)]),
    Case("gelu", F.gelu, [normal(*S)], {"approximate": "tanh"}, id="gelu_tanh"),
    Case("softplus", F.softplus, [normal(*S)], {"beta": 2, "threshold": 3}),
    # binary, broadcasting
    Case("add", torch.add, [normal(*S), normal(7)], {"alpha": 2}),
    Case("sub", torch.sub, [normal(*S), normal(5, 1)], {"alpha": 0.5}),
    Case("mul", torch.mul, [normal(*S), normal(*S)]),
    Case("div", torch.div, [normal(*S), positive(*S)]),
    Case("div", torch.div, [normal(*S), positive(*S)], {"rounding_mode": "floor"},
         id="div_floor", dtypes=F32),
    Case("div", torch.div, [normal(*S), positive(*S)], {"rounding_mode": "trunc"},
         id="div_trunc", dtypes=F32),
    Case("maximum", torch.maximum, [normal(*S), normal(*S)]),
    Case("minimum", torch.minimum, [normal(*S), normal(*S)]),
    Case("pow", torch.pow, [positive(*S), normal(*S)]),
    *[Case(n, getattr(torch, n), [normal(*S), normal(7)], exact=True) for n in
      ("eq", "ne", "lt", "le", "gt", "ge")],
    Case("where", torch.where, [bools(*S), normal(*S), normal(*S)]),
    Case("clamp", torch.clamp, [normal(*S)], {"min": -0.5, "max": 0.75}),
    Case("clamp_min", torch.clamp_min, [normal(*S)], {"min": -0.5}),
    Case("clamp_max", torch.clamp_max, [normal(*S)], {"max": 0.5}),
    # reductions
    Case("sum", torch.sum, [normal(*S)], {"dim": [1], "keepdim": True}),
    Case("mean", torch.mean, [normal(4, 5, 6)], {"dim": [0, 2]}),
    Case("prod", torch.prod, [near_one(*S)], {"dim": 1}),
    Case("var", torch.var, [normal(*S)], {"dim": [1]}),
    Case("std", torch.std, [normal(*S)], {"dim": [0]}),
    Case("var_mean", var_mean_ref, [normal(*S)], {"dim": [1]}),
    Case("norm", torch.norm, [normal(*S)], {"dim": [1]}),
    Case("amax", torch.amax, [normal(*S)], {"dim": [1]}),
    Case("amin", torch.amin, [normal(*S)], {"dim": [0]}),
    Case("logsumexp", torch.logsumexp, [normal(*S)], {"dim": [1]}),
    Case("argmax", torch.argmax, [normal(*S)], {"dim": 1}, exact=True),
    Case("argmin", torch.argmin, [normal(*S)], {"dim": 0}, exact=True),
    Case("softmax", torch.softmax, [normal(*S)], {"dim": -1}),
    Case("log_softmax", torch.log_softmax, [normal(*S)], {"dim": 0}),
    # normalization
    Case("layer_norm", F.layer_norm, [normal(3, 4, 7), [7], normal(7), normal(7)],
         {"eps": 1e-5}),
    Case("rms_norm", rms_norm_ref, [normal(3, 7), [7], normal(7)], {"eps": 1e-6}),
    Case("group_norm", F.group_norm, [normal(2, 6, 3, 5), 3, normal(6), normal(6)]),
    Case("batch_norm", F.batch_norm,
         [normal(2, 3, 4), normal(3), positive(3), normal(3), normal(3)]),
    # linear algebra
    Case("matmul", torch.matmul, [normal(2, 5, 7), normal(7, 3)]),
    Case("mm", torch.mm, [normal(5, 7), normal(7, 3)]),
    Case("bmm", torch.bmm, [normal(2, 5, 7), normal(2, 7, 3)]),
    Case("addmm", torch.addmm, [normal(5, 3), normal(5, 7), normal(7, 3)],
         {"beta": 0.5, "alpha": 2}),
    Case("baddbmm", torch.baddbmm, [normal(2, 5, 3), normal(2, 5, 7), normal(2, 7, 3)],
         {"beta": 0.5, "alpha": 2}),
    Case("linear", F.linear, [normal(4, 7), normal(3, 7), normal(3)]),
    # convolution, pooling and resizing
    Case("conv2d", F.conv2d, [normal(2, 4, 7, 9), normal(6, 4, 3, 3), normal(6)],
         {"stride": [2, 1], "padding": [1, 2], "dilation": [1, 2]}),
    Case("conv2d", F.conv2d, [normal(2, 4, 7, 9), normal(6, 4, 2, 3)], {"padding": "same"},
         id="conv2d_same"),
    Case("conv2d", F.conv2d, [normal(1, 6, 6, 5), normal(9, 2, 3, 3), normal(9)],
         {"padding": 1, "groups": 3}, id="conv2d_groups"),
    Case("conv2d", F.conv2d, [normal(4, 7, 6), normal(4, 1, 3, 3)], {"groups": 4},
         id="conv2d_depthwise_unbatched"),
    Case("conv_transpose2d", F.conv_transpose2d, [normal(2, 4, 5, 6), normal(4, 3, 3, 3), normal(3)],
         {"stride": [2, 1], "padding": [1, 0], "output_padding": [1, 0], "dilation": [1, 2]}),
    Case("conv_transpose2d", F.conv_transpose2d, [normal(1, 6, 4, 5), normal(6, 2, 4, 4)],
         {"stride": 3, "padding": 1, "output_padding": 2, "groups": 3},
         id="conv_transpose2d_groups_stride_above_kernel"),
    Case("conv_transpose2d", F.conv_transpose2d, [normal(4, 5, 6), normal(4, 1, 3, 3), normal(4)],
         {"stride": 2, "padding": 1, "groups": 4}, id="conv_transpose2d_depthwise_unbatched"),
    Case("avg_pool2d", F.avg_pool2d, [normal(2, 3, 7, 9), [3, 2]], {"stride": [2, 2]}),
    Case("avg_pool2d", F.avg_pool2d, [normal(2, 3, 7, 9), 3],
         {"stride": 2, "padding": 1, "ceil_mode": True, "count_include_pad": False},
         id="avg_pool2d_ceil_exclude_pad"),
    Case("avg_pool2d", F.avg_pool2d, [normal(2, 3, 7, 9), 2], {"divisor_override": 3},
         id="avg_pool2d_divisor"),
    Case("max_pool2d", F.max_pool2d, [normal(2, 3, 7, 9), 3],
         {"stride": 2, "padding": 1, "dilation": [1, 2], "ceil_mode": True}),
    Case("max_pool2d", F.max_pool2d, [normal(2, 3, 7, 9), [2, 3]], {"return_indices": True},
         id="max_pool2d_indices"),
    Case("adaptive_avg_pool2d", F.adaptive_avg_pool2d, [normal(2, 3, 7, 9), [3, 4]]),
    Case("interpolate", F.interpolate, [normal(2, 3, 5, 7)], {"size": [9, 4]}),
    Case("interpolate", F.interpolate, [normal(2, 3, 5, 7)],
         {"scale_factor": [2.0, 1.5], "mode": "nearest"}, id="interpolate_nearest_scale"),
    Case("interpolate", F.interpolate, [normal(2, 3, 5, 7)],
         {"size": [9, 4], "mode": "bilinear", "align_corners": False},
         id="interpolate_bilinear"),
    Case("interpolate", F.interpolate, [normal(2, 3, 5, 7)],
         {"size": [9, 11], "mode": "bilinear", "align_corners": True},
         id="interpolate_bilinear_align_corners"),
    Case("interpolate", F.interpolate, [normal(2, 3, 5, 7)],
         {"scale_factor": [1.5, 2.0], "mode": "bilinear"}, id="interpolate_bilinear_scale"),
    # attention: q [B, H, L, E], k [B, H, S, E], v [B, H, S, Ev] with S != L
    Case("scaled_dot_product_attention", sdpa_ref,
         [normal(2, 3, 5, 8), normal(2, 3, 7, 8), normal(2, 3, 7, 6)]),
    Case("scaled_dot_product_attention", sdpa_ref,
         [normal(2, 3, 5, 8), normal(2, 3, 7, 8), normal(2, 3, 7, 6), attend(5, 7, 2, 1)],
         id="sdpa_bool_mask"),
    Case("scaled_dot_product_attention", sdpa_ref,
         [normal(2, 3, 5, 8), normal(2, 3, 7, 8), normal(2, 3, 7, 6), normal(5, 7)],
         {"scale": 0.3}, id="sdpa_additive_mask"),
    Case("scaled_dot_product_attention", sdpa_ref,
         [normal(2, 3, 5, 8), normal(2, 3, 7, 8), normal(2, 3, 7, 6)], {"is_causal": True},
         id="sdpa_causal"),
    # Stable Diffusion fusions (ONNX Runtime contrib ops) against float64 compositions. A sum
    # x + bias + skip rounds after each add, as mpsim's composition (tests/fused_test.cc checks
    # the bits): in 16 bits that is beyond one rounding's tolerance, so the sums run in float32.
    Case("bias_add", lambda x, b, s: x + b + s, [normal(2, 3, 7), normal(7), normal(2, 3, 7)],
         dtypes=F32),
    Case("bias_split_gelu", bias_split_gelu_ref, [normal(2, 3, 10), normal(10)]),
    Case("skip_layer_norm", skip_layer_norm_ref,
         [normal(2, 3, 7), normal(2, 3, 7), normal(7), normal(7), normal(7)], {"eps": 1e-5}),
    Case("skip_layer_norm", skip_layer_norm_ref, [normal(2, 3, 7), normal(2, 3, 7), normal(7)],
         {"return_sum": True}, id="skip_layer_norm_sum", dtypes=F32),
    Case("group_norm_nhwc", group_norm_nhwc_ref, [normal(2, 3, 5, 6), 3, normal(6), normal(6)]),
    Case("group_norm_nhwc", group_norm_nhwc_ref, [normal(2, 3, 5, 6), 2, normal(6), normal(6)],
         {"activation": "silu"}, id="group_norm_nhwc_silu"),
    Case("multi_head_attention", multi_head_attention_ref, [normal(2, 5, 3, 3, 4)]),
    Case("multi_head_attention", multi_head_attention_ref,
         [normal(2, 4, 12), normal(2, 7, 3, 2, 4)], {"scale": 0.3}, id="mha_cross_packed_kv"),
    # data movement
    Case("cat", torch.cat, [tensors(normal(2, 3), normal(4, 3))], {"dim": 0}),
    Case("stack", torch.stack, [tensors(normal(2, 3), normal(2, 3))], {"dim": 1}),
    Case("split", torch.split, [normal(7, 3), 3], {"dim": 0}),
    Case("chunk", torch.chunk, [normal(3, 7), 3], {"dim": 1}),
    Case("index_select", torch.index_select, [normal(*S), 1, ints(0, 7, 4)]),
    Case("gather", torch.gather, [normal(*S), 1, ints(0, 7, 5, 3)]),
    Case("flip", torch.flip, [normal(*S), [0, 1]]),
    Case("repeat", lambda x, r: x.repeat(r), [normal(2, 3), [2, 1, 2]]),
    Case("pad", F.pad, [normal(2, 3, 4), [1, 2]], {"mode": "constant", "value": 0.5}),
    Case("pad", F.pad, [normal(2, 3, 4), [1, 2]], {"mode": "reflect"}, id="pad_reflect"),
    Case("pad", F.pad, [normal(2, 3, 4), [2, 1]], {"mode": "replicate"}, id="pad_replicate"),
    Case("tril", torch.tril, [normal(*S)], {"diagonal": 1}),
    Case("triu", torch.triu, [normal(*S)], {"diagonal": -1}),
    Case("permute", torch.permute, [normal(2, 3, 4), [2, 0, 1]]),
    Case("transpose", torch.transpose, [normal(2, 3, 4), 0, 2]),
    Case("t", torch.t, [normal(*S)]),
    Case("reshape", torch.reshape, [normal(2, 3, 4), [4, -1]]),
    Case("expand", lambda x, s: x.expand(s), [normal(3, 1), [3, 4]]),
    Case("flatten", torch.flatten, [normal(2, 3, 4)], {"start_dim": 1}),
    Case("narrow", torch.narrow, [normal(*S), 1, 2, 3]),
    Case("select", torch.select, [normal(*S), 1, -2]),
    Case("squeeze", torch.squeeze, [normal(3, 1, 4)], {"dim": 1}),
    Case("unsqueeze", torch.unsqueeze, [normal(3, 4), 1]),
    Case("clone", torch.clone, [normal(*S)]),
    Case("contiguous", lambda x: x.contiguous(), [normal(*S)]),
    Case("to", lambda x, d: x.to(getattr(torch, d)), [normal(*S), "float16"], dtypes=F32),
]

# Ops whose values are random (checked for determinism below) and creation ops (checked on
# their own below) have no torch reference here.
RANDOM_OPS = {"rand", "randn", "normal", "uniform", "randint", "bernoulli", "dropout"}
CREATION_OPS = {"arange", "linspace", "zeros", "ones", "full"}


def test_every_op_has_a_case():
    covered = {c.op for c in CASES} | RANDOM_OPS | CREATION_OPS
    missing = sorted(set(mpsim.ops) - covered)
    assert not missing, f"ops of the registry with no Python test case: {missing}"


def _build(case, dtype, seed):
    rng = np.random.default_rng(seed)
    made = [m(rng) if callable(m) else m for m in case.inputs]

    def to_mpsim(v):
        if isinstance(v, list):
            return [to_mpsim(x) for x in v] if v and isinstance(v[0], np.ndarray) else v
        if isinstance(v, np.ndarray) and v.dtype == np.float64:
            return mpsim.tensor(v, dtype=dtype)
        if isinstance(v, np.ndarray):
            return mpsim.tensor(v)
        return v

    def to_torch(v, m):  # the values mpsim saw (rounded to dtype), in float64
        if isinstance(v, list):
            if v and isinstance(v[0], np.ndarray):
                return [to_torch(x, y) for x, y in zip(v, m)]
            return v
        if isinstance(v, np.ndarray) and v.dtype == np.float64:
            return torch.from_numpy(m.numpy().astype(np.float64))
        if isinstance(v, np.ndarray):
            return torch.from_numpy(v.copy())
        return v

    m_args = [to_mpsim(v) for v in made]
    t_args = [to_torch(v, m) for v, m in zip(made, m_args)]
    return m_args, t_args


# A case whose op this build's registry lacks (a row written ahead of its op) is reported as
# skipped, by name.
@pytest.mark.parametrize("device", ["cpu", "mps"])
@pytest.mark.parametrize("case,dtype", [
    pytest.param(c, d, id=f"{c.id}-{d}", marks=pytest.mark.skipif(
        c.op not in mpsim.ops, reason=f"{c.op} is not in this build's op registry"))
    for c in CASES for d in c.dtypes])
def test_op_against_torch_float64(case, dtype, device):
    m_args, t_args = _build(case, dtype, seed=zlib.crc32(case.id.encode()))
    if device == "mps":
        m_args = [a.to("mps") if isinstance(a, mpsim.Tensor) else
                  [x.to("mps") for x in a] if isinstance(a, list) and a and
                  isinstance(a[0], mpsim.Tensor) else a for a in m_args]
    got = getattr(mpsim, case.op)(*m_args, **case.kwargs)
    want = case.ref(*t_args, **case.kwargs)
    if isinstance(want, torch.Tensor):
        got, want = (got,), (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert tuple(g.shape) == tuple(w.shape)
        if case.exact:
            assert_close(g.numpy(), w.numpy(), rtol=0, atol=0, check_dtype=False)
            continue
        # The expected value rounded to the result's dtype, compared with that dtype's
        # tolerance (assert_close widens bfloat16 to float32 exactly).
        expected = w.to(getattr(torch, str(g.dtype).replace("mpsim.", "")))
        assert_close(g, expected, check_dtype=False)


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


@pytest.mark.parametrize("op,args", [
    ("rand", ((3, 5),)), ("randn", ((3, 5),)), ("normal", (1.0, 2.0, (3, 5))),
    ("uniform", ((3, 5), -2.0, 2.0)), ("randint", (0, 10, (3, 5))),
])
def test_random_ops_are_seeded_and_device_independent(op, args):
    fn = getattr(mpsim, op)
    mpsim.manual_seed(1234)
    a = fn(*args).numpy()
    mpsim.manual_seed(1234)
    b = fn(*args, device="mps").numpy()
    np.testing.assert_array_equal(a, b)
    assert a.shape == (3, 5)
    mpsim.manual_seed(1235)
    assert not np.array_equal(fn(*args).numpy(), a)


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

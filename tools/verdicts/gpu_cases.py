"""The GPU verdict fixtures: the cases, their deterministic inputs, the planted bugs.

Pure NumPy and torch (no mpsim), so that the GPU machine, which cannot build mpsim, runs it:

    python3 tools/verdicts/gpu_cases.py OUT.npz      # on a machine with CUDA: records

tests/python/test_verdicts_gpu.py imports the same file to regenerate the inputs bit for bit
and judges the stored outputs with mpsim.testing.check (docs/verdicts.md, "Validation").
Inputs are never stored: each is made from its seed by integer hashing and exact float64
arithmetic rounded once to float32, so every machine makes the same bits."""

import json
import math
import sys

import numpy as np

DEVICE = "cuda"
SAMPLES = 2048  # stored output elements per case (all of them for smaller outputs)
MASK64 = (1 << 64) - 1


def _mix(v):
    """splitmix64's finalizer on uint64 arrays (wrapping arithmetic)."""
    v = (v ^ (v >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    v = (v ^ (v >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return v ^ (v >> np.uint64(31))


def uniform(seed, n):
    """n values in [0, 1) with 24-bit fractions: exact in float32 and float64."""
    with np.errstate(over="ignore"):
        i = np.arange(n, dtype=np.uint64) + np.uint64((seed * 0x9E3779B97F4A7C15) & MASK64)
        bits = _mix(i) >> np.uint64(40)
    return bits.astype(np.float64) * 2.0 ** -24


def values(kind, shape, seed):
    """float32 values of a kind: "normal" (a sum of four uniforms, centred and scaled to unit
    variance), "positive" ([0.1, 4)), "near_constant" (1 + 1e-4 normal: groups whose variance is
    far below the eps of a normalization), "wide" (normal times 30: logits spanning 200)."""
    n = int(np.prod(shape))
    if kind == "positive":
        v = 0.1 + 3.9 * uniform(seed, n)
    else:
        u = sum(uniform(seed * 4 + j, n) for j in range(4))  # exact: 26-bit sums
        v = (u - 2.0) * math.sqrt(3.0)
        if kind == "near_constant":
            v = 1.0 + 1e-4 * v
        elif kind == "wide":
            v = 30.0 * v
    return v.astype(np.float32).reshape(shape)


def sample_indices(numel, seed):
    if numel <= SAMPLES:
        return np.arange(numel, dtype=np.int64)
    idx = (_mix(np.arange(SAMPLES, dtype=np.uint64) + np.uint64(seed)) % np.uint64(numel))
    return np.unique(np.concatenate([idx.astype(np.int64), [0, numel - 1]]))


# A case: id, op (mpsim's name), args (tensors as ["t", kind, shape, seed], other values as
# they are), kwargs, the input dtype, whether TF32 is on (matmul and cudnn), the compute model
# a verdict uses (None or "tf32"), and the torch call on the GPU as the name of a function below.
def _t(kind, shape, seed):
    return ["t", kind, list(shape), seed]


def cases():
    out = []

    def add(id_, op, args, kwargs=None, dtypes=("float32", "float16", "bfloat16"), tf32=None,
            torch_fn=None):
        for d in dtypes:
            modes = [False] if d != "float32" or not tf32 else [False, True]
            for on in modes:
                cid = f"{id_}-{d}" + ("-tf32" if on else "")
                out.append({"id": cid, "op": op, "args": args, "kwargs": kwargs or {},
                            "dtype": d, "tf32": on, "compute": "tf32" if on else None,
                            "torch": torch_fn or op})

    n = _t("normal", (256, 4096), 1)
    p = _t("positive", (256, 4096), 2)
    for op in ("exp", "sin", "cos", "tanh", "erf", "sigmoid", "expm1", "square"):
        add(op, op, [n])
    for op in ("log", "log1p", "sqrt", "rsqrt", "reciprocal"):
        add(op, op, [p])
    add("silu", "silu", [n], torch_fn="F.silu")
    add("gelu", "gelu", [n], torch_fn="F.gelu")
    add("gelu_tanh", "gelu", [n], {"approximate": "tanh"}, torch_fn="F.gelu")
    add("softplus", "softplus", [n], torch_fn="F.softplus")
    add("add", "add", [n, _t("normal", (4096,), 3)], {"alpha": 0.5})
    add("mul", "mul", [n, _t("normal", (256, 4096), 4)])
    add("div", "div", [n, p])
    add("pow", "pow", [p, _t("normal", (256, 4096), 5)])
    add("pow_scalar", "pow", [p, 1.5])
    # reductions
    r = _t("normal", (2, 320, 4096), 6)
    add("sum", "sum", [r], {"dim": [-1]})
    add("mean", "mean", [r], {"dim": [-1]})
    add("sum_channels", "sum", [r], {"dim": [1]})
    add("var", "var", [r], {"dim": [-1]})
    add("std", "std", [r], {"dim": [-1]})
    add("norm", "norm", [r], {"dim": [-1]})
    add("amax", "amax", [r], {"dim": [-1]})
    add("logsumexp", "logsumexp", [_t("wide", (64, 4096), 7)], {"dim": [-1]})
    add("softmax_77", "softmax", [_t("normal", (2, 8, 1024, 77), 8)], {"dim": -1})
    add("softmax_4096_wide", "softmax", [_t("wide", (64, 4096), 9)], {"dim": -1})
    add("log_softmax", "log_softmax", [_t("wide", (64, 4096), 10)], {"dim": -1})
    # normalization
    add("layer_norm", "layer_norm", [_t("normal", (2, 1024, 320), 11), [320],
                                     _t("normal", (320,), 12), _t("normal", (320,), 13)],
        torch_fn="F.layer_norm")
    add("layer_norm_near_constant", "layer_norm",
        [_t("near_constant", (2, 1024, 320), 14), [320]], torch_fn="F.layer_norm")
    add("group_norm", "group_norm", [_t("normal", (2, 320, 64, 64), 15), 32,
                                     _t("normal", (320,), 16), _t("normal", (320,), 17)],
        torch_fn="F.group_norm")
    add("group_norm_near_constant", "group_norm",
        [_t("near_constant", (2, 320, 32, 32), 18), 32], torch_fn="F.group_norm")
    add("batch_norm", "batch_norm", [_t("normal", (2, 320, 32, 32), 19), _t("normal", (320,), 20),
                                     _t("positive", (320,), 21), _t("normal", (320,), 22),
                                     _t("normal", (320,), 23)], torch_fn="F.batch_norm")
    # products
    add("matmul_k320", "matmul", [_t("normal", (4096, 320), 24), _t("normal", (320, 1280), 25)],
        tf32=True)
    add("matmul_k768", "matmul", [_t("normal", (2, 77, 768), 26), _t("normal", (768, 320), 27)],
        tf32=True)
    add("matmul_k4096", "matmul", [_t("normal", (256, 4096), 28), _t("normal", (4096, 512), 29)],
        tf32=True)
    add("bmm", "bmm", [_t("normal", (16, 77, 64), 30), _t("normal", (16, 64, 77), 31)], tf32=True)
    add("linear", "linear", [_t("normal", (2, 77, 768), 32), _t("normal", (3072, 768), 33),
                             _t("normal", (3072,), 34)], tf32=True, torch_fn="F.linear")
    add("addmm", "addmm", [_t("normal", (320,), 35), _t("normal", (512, 640), 36),
                           _t("normal", (640, 320), 37)], {"beta": 0.5, "alpha": 2}, tf32=True)
    add("conv3x3", "conv2d", [_t("normal", (1, 320, 32, 32), 38),
                              _t("normal", (320, 320, 3, 3), 39), _t("normal", (320,), 40)],
        {"padding": 1}, tf32=True, torch_fn="F.conv2d")
    add("conv_in", "conv2d", [_t("normal", (2, 4, 64, 64), 41), _t("normal", (320, 4, 3, 3), 42),
                              _t("normal", (320,), 43)], {"padding": 1}, tf32=True,
        torch_fn="F.conv2d")
    add("conv1x1", "conv2d", [_t("normal", (1, 640, 16, 16), 44),
                              _t("normal", (320, 640, 1, 1), 45)], tf32=True, torch_fn="F.conv2d")
    add("conv_transpose", "conv_transpose2d", [_t("normal", (1, 64, 16, 16), 46),
                                               _t("normal", (64, 32, 4, 4), 47)],
        {"stride": 2, "padding": 1}, tf32=True, torch_fn="F.conv_transpose2d")
    # attention
    add("sdpa_self", "scaled_dot_product_attention",
        [_t("normal", (2, 8, 1024, 40), 48), _t("normal", (2, 8, 1024, 40), 49),
         _t("normal", (2, 8, 1024, 40), 50)], torch_fn="F.scaled_dot_product_attention")
    add("sdpa_cross", "scaled_dot_product_attention",
        [_t("normal", (2, 8, 1024, 40), 51), _t("normal", (2, 8, 77, 40), 52),
         _t("normal", (2, 8, 77, 40), 53)], torch_fn="F.scaled_dot_product_attention")
    add("sdpa_causal", "scaled_dot_product_attention",
        [_t("normal", (1, 12, 512, 64), 54), _t("normal", (1, 12, 512, 64), 55),
         _t("normal", (1, 12, 512, 64), 56)], {"is_causal": True},
        torch_fn="F.scaled_dot_product_attention")
    # pooling and resizing
    img = _t("normal", (2, 320, 32, 32), 57)
    add("avg_pool", "avg_pool2d", [img, 2], torch_fn="F.avg_pool2d")
    add("adaptive_avg_pool", "adaptive_avg_pool2d", [img, [7, 7]],
        torch_fn="F.adaptive_avg_pool2d")
    add("max_pool", "max_pool2d", [img, 3], {"stride": 2, "padding": 1}, torch_fn="F.max_pool2d")
    add("upsample_nearest", "interpolate", [img], {"scale_factor": 2.0, "mode": "nearest"},
        torch_fn="F.interpolate")
    add("upsample_bilinear", "interpolate", [img], {"scale_factor": 2.0, "mode": "bilinear",
                                                    "align_corners": False},
        torch_fn="F.interpolate")
    # the rest of the op list that PyTorch has on CUDA
    m = _t("normal", (256, 4096), 60)
    for op in ("abs", "neg", "relu"):
        add(op, op, [n], torch_fn="F.relu" if op == "relu" else None)
    add("sub", "sub", [n, m], {"alpha": 3})
    for op in ("maximum", "minimum", "lt", "eq"):
        add(op, op, [n, m])
    add("where", "where", [_t("bools", (256, 4096), 61), n, m])
    add("clamp", "clamp", [n], {"min": -0.5, "max": 0.75})
    add("to_float16", "to", [n, "float16"], dtypes=("float32", "bfloat16"))
    add("to_float32", "to", [n, "float32"], dtypes=("float16", "bfloat16"))
    add("full", "full", [[64, 64], 1.7], {"dtype": "$dtype"})
    add("arange", "arange", [-3.0, 50.0, 0.37], {"dtype": "$dtype"})
    add("linspace", "linspace", [-2.0, 5.0, 1000], {"dtype": "$dtype"})
    add("prod", "prod", [_t("near_one", (64, 512), 62)], {"dim": 1})
    add("amin", "amin", [r], {"dim": [-1]})
    add("argmax", "argmax", [r], {"dim": -1})
    add("argmin", "argmin", [r], {"dim": 1})
    add("gather", "gather", [r, 1, _t("ints:320", (2, 64, 4096), 63)])
    add("flip", "flip", [img, [2, 3]])
    add("pad_reflect", "pad", [img, [2, 1, 1, 2]], {"mode": "reflect"}, torch_fn="F.pad")
    add("tril", "tril", [m], {"diagonal": 3})
    add("triu", "triu", [m], {"diagonal": -2})
    add("cat", "cat", [[n, m]], {"dim": 1})
    add("rms_norm", "rms_norm", [_t("normal", (2, 1024, 320), 64), [320],
                                 _t("normal", (320,), 65)], {"eps": 1e-6}, torch_fn="F.rms_norm")
    add("mm", "mm", [_t("normal", (512, 768), 66), _t("normal", (768, 320), 67)], tf32=True)
    add("baddbmm", "baddbmm", [_t("normal", (8, 77, 77), 68), _t("normal", (8, 77, 64), 69),
                               _t("normal", (8, 64, 77), 70)], {"beta": 0.5, "alpha": 0.125},
        tf32=True)
    add("matmul_k16384", "matmul", [_t("normal", (64, 16384), 71),
                                    _t("normal", (16384, 256), 72)], tf32=True)
    return out


# Planted bugs made by wrong kernels on the GPU: (id, the case whose genuine call it imitates,
# the wrong kernel's name below). Bugs made from genuine outputs are planted by the test.
BUGS = [
    ("layer_norm_without_eps", "layer_norm_near_constant-float32", "ln_no_eps"),
    ("group_norm_without_eps", "group_norm_near_constant-float32", "gn_no_eps"),
    ("softmax_without_max", "softmax_4096_wide-float32", "softmax_no_max"),
    ("float16_accumulation_k4096", "matmul_k4096-float16", "matmul_f16_acc"),
    ("causal_mask_off_by_one", "sdpa_causal-float32", "causal_off_by_one"),
    ("conv_weight_transposed", "conv3x3-float32", "conv_w_transposed"),
    ("attention_scale_1_over_d", "sdpa_cross-float16", "attention_scale_d"),
    ("linear_missing_bias", "linear-float32", "linear_no_bias"),
    ("conv_swapped_channels", "conv3x3-float16", "conv_swap_channels"),
    ("sum_drops_last_partial_block", "sum-float32", "sum_drop_tail"),
]


def make_inputs(case, torch):
    """The case's arguments as torch CPU tensors in its dtype (other values as they are):
    "bools" tensors are bool and "ints:K" int64 in [0, K), whatever the case's dtype; "$dtype"
    is the case's dtype."""
    def conv(a):
        if isinstance(a, list) and a and a[0] == "t":
            if a[1] == "bools":
                return torch.from_numpy(uniform(a[3], int(np.prod(a[2]))).reshape(a[2]) < 0.5)
            if a[1].startswith("ints:"):
                k = int(a[1][5:])
                u = uniform(a[3], int(np.prod(a[2]))).reshape(a[2])
                return torch.from_numpy(np.floor(u * k).astype(np.int64))
            v = torch.from_numpy(values(a[1], tuple(a[2]), a[3]))
            return v.to(getattr(torch, case["dtype"]))
        if isinstance(a, list) and a and isinstance(a[0], list) and a[0][0] == "t":
            return [conv(x) for x in a]
        if a == "$dtype":
            return getattr(torch, case["dtype"])
        return a
    return [conv(a) for a in case["args"]], {k: conv(v) for k, v in case["kwargs"].items()}


def _sdpa(torch):
    import torch.nn.functional as F
    if hasattr(F, "scaled_dot_product_attention"):
        return F.scaled_dot_product_attention

    def composed(q, k, v, attn_mask=None, is_causal=False, scale=None):  # torch < 2.0 (dry runs)
        s = q @ k.transpose(-2, -1) * (scale or 1 / math.sqrt(q.shape[-1]))
        if is_causal:
            keep = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
            s = s.masked_fill(~keep, -math.inf)
        return torch.softmax(s, -1) @ v
    return composed


def torch_fn(name, torch):
    import torch.nn.functional as F
    if name == "F.scaled_dot_product_attention":
        return _sdpa(torch)
    if name.startswith("F."):
        return getattr(F, name[2:])
    if name == "addmm":
        return lambda inp, a, b, beta=1, alpha=1: torch.addmm(inp, a, b, beta=beta, alpha=alpha)
    if name == "to":
        return lambda x, dtype: x.to(getattr(torch, dtype))
    if name in ("arange", "linspace", "full"):  # creation ops: on the GPU
        return lambda *a, **k: getattr(torch, name)(*a, device=DEVICE, **k)
    return getattr(torch, name)


def wrong_kernel(name, args, kwargs, torch):
    import torch.nn.functional as F
    x = args[0]
    if name == "ln_no_eps":
        xf = x.float()
        mu = xf.mean(-1, keepdim=True)
        var = ((xf - mu) ** 2).mean(-1, keepdim=True)
        return ((xf - mu) / var.sqrt()).to(x.dtype)
    if name == "gn_no_eps":
        g = x.float().reshape(x.shape[0], args[1], -1)
        mu = g.mean(-1, keepdim=True)
        var = ((g - mu) ** 2).mean(-1, keepdim=True)
        return ((g - mu) / var.sqrt()).reshape(x.shape).to(x.dtype)
    if name == "softmax_no_max":
        e = torch.exp(x.float())
        return (e / e.sum(-1, keepdim=True)).to(x.dtype)
    if name == "matmul_f16_acc":
        a, b = args
        acc = torch.zeros(a.shape[0], b.shape[1], dtype=torch.float16, device=a.device)
        for k in range(0, a.shape[1], 64):
            acc = acc + (a[:, k:k + 64].float() @ b[k:k + 64].float()).half()
        return acc
    if name == "causal_off_by_one":
        q, k, v = args
        s = (q.float() @ k.float().transpose(-2, -1)) / math.sqrt(q.shape[-1])
        keep = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool, device=q.device).tril(1)
        s = s.masked_fill(~keep, -math.inf)
        return (torch.softmax(s, -1) @ v.float()).to(q.dtype)
    if name == "conv_w_transposed":
        return F.conv2d(x, args[1].transpose(2, 3), args[2], **kwargs)
    if name == "attention_scale_d":
        q, k, v = args
        return _sdpa(torch)(q, k, v, scale=1.0 / q.shape[-1])
    if name == "linear_no_bias":
        return F.linear(x, args[1])
    if name == "conv_swap_channels":
        y = F.conv2d(x, args[1], args[2], **kwargs)
        return y[:, [1, 0] + list(range(2, y.shape[1]))]
    if name == "sum_drop_tail":
        return x[..., : x.shape[-1] - 100].sum(-1)
    raise ValueError(name)


def _store(store, key, out, seed):
    flat = out.detach().float().cpu().reshape(-1).numpy()
    idx = sample_indices(flat.size, seed)
    store[key + "/idx"] = idx
    store[key + "/val"] = flat[idx].astype(np.float32)  # 16-bit values are exact in float32
    store[key + "/shape"] = np.array(out.shape, dtype=np.int64)


def record(path, device="cuda", dtypes=None):
    import torch
    global DEVICE
    DEVICE = device
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = True  # the default
    by_id = {}
    store = {}
    for i, case in enumerate(cases()):
        if dtypes and case["dtype"] not in dtypes:
            continue
        torch.backends.cuda.matmul.allow_tf32 = case["tf32"]
        torch.backends.cudnn.allow_tf32 = case["tf32"]
        args, kwargs = make_inputs(case, torch)
        args = [a.to(device) if isinstance(a, torch.Tensor) else
                [x.to(device) for x in a] if isinstance(a, list) and a and
                isinstance(a[0], torch.Tensor) else a for a in args]
        try:
            fn = torch_fn(case["torch"], torch)
        except AttributeError:
            if device == "cuda":
                raise
            print("skipped (this torch lacks it):", case["id"])  # a dry run on an older torch
            continue
        out = fn(*args, **kwargs)
        _store(store, case["id"], out, i)
        by_id[case["id"]] = (case, args, kwargs, i)
    for bug, base, kernel in BUGS:
        if base not in by_id:
            continue
        case, args, kwargs, i = by_id[base]
        torch.backends.cuda.matmul.allow_tf32 = case["tf32"]
        torch.backends.cudnn.allow_tf32 = case["tf32"]
        _store(store, "bug:" + bug, wrong_kernel(kernel, args, kwargs, torch), i)
    meta = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0)
            if device == "cuda" else device, "cuda": torch.version.cuda,
            "cases": sorted(by_id),
            "bugs": [list(b) for b in BUGS]}
    store["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez_compressed(path, **store)
    print(json.dumps(meta)[:400])


if __name__ == "__main__":
    record(sys.argv[1], *sys.argv[2:3])

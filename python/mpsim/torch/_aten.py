"""aten ops as mpsim calls: the table of mpsim.torch (docs/torch.md, "Coverage").

`call(func, args, kwargs)` gives (mpsim op name, args, kwargs, index of the aten output that op
computes), None for an op whose every output is an exact rearrangement of its inputs (views,
copies, indexing: judged exact, not recomputed), or raises Unmapped for an op mpsim lacks."""


class Unmapped(Exception):
    """An aten op (or an overload / argument) mpsim has no op for."""


# Exact data movement and views: the values are the inputs' (or constants), nothing to judge.
EXACT = {
    "view", "_unsafe_view", "_reshape_alias", "reshape", "t", "transpose", "permute", "expand",
    "slice", "select", "unsqueeze", "squeeze", "clone", "contiguous", "alias", "as_strided",
    "split", "split_with_sizes", "chunk", "unbind", "detach", "lift_fresh", "lift_fresh_copy",
    "copy_", "copy", "embedding", "index_select", "gather", "index", "flip", "roll", "repeat",
    "stack", "zeros", "ones", "zeros_like", "ones_like", "empty", "empty_like", "full",
    "full_like", "fill_", "fill", "new_zeros", "new_ones", "new_empty", "new_full", "_to_copy",
    "empty_strided", "scalar_tensor", "masked_fill", "clamp_min", "clamp_max", "constant_pad_nd",
    "tril", "triu", "max", "min", "topk", "sort",
    "_local_scalar_dense", "arange", "bitwise_not", "logical_not", "logical_and", "logical_or",
    "cumsum", "sym_size", "sym_stride", "sym_numel", "_assert_async", "native_dropout",
    "max_pool2d_with_indices", "upsample_nearest2d", "upsample_nearest1d", "upsample_nearest3d",
}
UNARY = {"exp", "log", "log1p", "expm1", "sqrt", "rsqrt", "sin", "cos", "tanh", "erf", "sigmoid",
         "silu", "reciprocal", "square", "relu", "abs", "neg"}
# Ops whose aten arguments are mpsim's, in order (exact results, judged with bound 0).
SAME = {"maximum", "minimum", "eq", "ne", "lt", "le", "gt", "ge", "where", "clamp", "amax",
        "amin", "argmax", "argmin"}


# PyTorch 2.x's attention ops (and 1.13's math one). Their arguments move between versions
# (1.13's _scaled_dot_product_attention_math has need_attn_weights before is_causal; the CPU
# flash op takes its mask by keyword only): attention_args reads them by name from the call's
# schema. SCHEMAS_2X: PyTorch 2.11's (tools/torch_bridge/dump_aten_schemas.py), for recordings
# made before recordings stored each call's schema (all of them under PyTorch 2.x).
SCHEMAS_2X = {
    "_scaled_dot_product_flash_attention":
        "aten::_scaled_dot_product_flash_attention(Tensor query, Tensor key, Tensor "
        "value, float dropout_p=0., bool is_causal=False, bool return_debug_mask=False, "
        "*, float? scale=None) -> (Tensor output, Tensor logsumexp, Tensor cum_seq_q, "
        "Tensor cum_seq_k, SymInt max_q, SymInt max_k, Tensor rng_state, Tensor unused, "
        "Tensor debug_attn_mask)",
    "_scaled_dot_product_flash_attention_for_cpu":
        "aten::_scaled_dot_product_flash_attention_for_cpu(Tensor query, Tensor key, "
        "Tensor value, float dropout_p=0., bool is_causal=False, *, Tensor? "
        "attn_mask=None, float? scale=None) -> (Tensor output, Tensor logsumexp)",
    "_scaled_dot_product_efficient_attention":
        "aten::_scaled_dot_product_efficient_attention(Tensor query, Tensor key, Tensor "
        "value, Tensor? attn_bias, bool compute_log_sumexp, float dropout_p=0., bool "
        "is_causal=False, *, float? scale=None) -> (Tensor output, Tensor log_sumexp, "
        "Tensor philox_seed, Tensor philox_offset)",
    "_scaled_dot_product_cudnn_attention":
        "aten::_scaled_dot_product_cudnn_attention(Tensor query, Tensor key, Tensor "
        "value, Tensor? attn_bias, bool compute_log_sumexp, float dropout_p=0., bool "
        "is_causal=False, bool return_debug_mask=False, *, float? scale=None) -> (Tensor "
        "output, Tensor logsumexp, Tensor cum_seq_q, Tensor cum_seq_k, SymInt max_q, "
        "SymInt max_k, Tensor philox_seed, Tensor philox_offset, Tensor debug_attn_mask)",
    "_scaled_dot_product_attention_math":
        "aten::_scaled_dot_product_attention_math(Tensor query, Tensor key, Tensor value, "
        "Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, Tensor? "
        "dropout_mask=None, *, float? scale=None, bool enable_gqa=False) -> (Tensor, "
        "Tensor)",
    "scaled_dot_product_attention":
        "aten::scaled_dot_product_attention(Tensor query, Tensor key, Tensor value, "
        "Tensor? attn_mask=None, float dropout_p=0., bool is_causal=False, *, float? "
        "scale=None, bool enable_gqa=False) -> Tensor",
}


ATTENTION = set(SCHEMAS_2X)


def attention_args(func, a, kwargs):
    """(q, k, v, mask or None, is_causal, scale or None) of an attention op's aten arguments,
    found by name in func's schema (the mask is attn_mask or attn_bias)."""
    if func._schema is None:
        raise Unmapped(f"aten.{func.overloadpacket.__name__} without its schema")
    names = [arg.name for arg in func._schema.arguments]

    def get(key):
        if key in names and names.index(key) < len(a):
            return a[names.index(key)]
        return kwargs.get(key)

    mask = get("attn_mask") if "attn_mask" in names else get("attn_bias")
    return a[0], a[1], a[2], mask, bool(get("is_causal")), get("scale")


def call(func, args, kwargs):
    name = func.overloadpacket.__name__
    overload = func._overloadname
    a = list(args)

    def arg(i, key, default=None):
        return a[i] if len(a) > i else kwargs.get(key, default)

    if name in EXACT:
        return None
    if name in UNARY:
        return name, [a[0]], {}, 0
    if name in SAME:
        if name in ("amax", "amin") and len(a) > 1:
            return name, [a[0]], {"dim": list(a[1]), "keepdim": arg(2, "keepdim", False)}, 0
        return name, a, dict(kwargs), 0
    if name == "gelu":
        return "gelu", [a[0]], {"approximate": arg(1, "approximate", "none")}, 0
    if name in ("add", "sub"):
        alpha = arg(2, "alpha", 1)
        return name, [a[0], a[1]], ({"alpha": alpha} if alpha != 1 else {}), 0
    if name in ("mul", "div"):
        mode = arg(2, "rounding_mode") if name == "div" else None
        return name, [a[0], a[1]], ({"rounding_mode": mode} if mode else {}), 0
    if name == "pow":
        return "pow", [a[0], a[1]], {}, 0
    if name in ("mean", "sum"):
        dim = arg(1, "dim")
        if overload == "default":
            return name, [a[0]], {}, 0
        return name, [a[0]], {"dim": list(dim) if dim is not None else None,
                              "keepdim": arg(2, "keepdim", False)}, 0
    if name in ("_softmax", "_log_softmax"):
        return name[1:], [a[0], a[1]], {}, 0
    if name == "_safe_softmax":  # PyTorch 2.5+: softmax whose fully masked rows give 0
        return "softmax", [a[0], a[1]], {}, 0
    if name in ("addmm", "baddbmm"):
        return name, a[:3], {"beta": arg(3, "beta", 1), "alpha": arg(4, "alpha", 1)}, 0
    if name in ("mm", "bmm"):
        return name, a[:2], {}, 0
    if name == "convolution":
        x, w, b, stride, padding, dilation, transposed, output_padding, groups = a[:9]
        if x.dim() not in (3, 4):
            raise Unmapped(f"{x.dim()}-d convolution")
        if transposed:
            return "conv_transpose2d", [x, w, b], {"stride": list(stride), "padding":
                                                    list(padding), "output_padding":
                                                    list(output_padding), "groups": groups,
                                                    "dilation": list(dilation)}, 0
        return "conv2d", [x, w, b], {"stride": list(stride), "padding": list(padding),
                                     "dilation": list(dilation), "groups": groups}, 0
    if name == "native_layer_norm":
        return "layer_norm", [a[0], list(a[1]), a[2], a[3]], {"eps": a[4]}, 0
    if name == "native_group_norm":
        return "group_norm", [a[0], a[6], a[1], a[2]], {"eps": a[7]}, 0
    if name in ("native_batch_norm", "_native_batch_norm_legit_no_training",
                "_native_batch_norm_legit"):
        if name == "_native_batch_norm_legit_no_training":
            x, w, b, rm, rv, _, eps = a[:7]
        else:
            x, w, b, rm, rv, training, _, eps = a[:8]
            if training:
                raise Unmapped("batch_norm in training mode")
        return "batch_norm", [x, rm, rv, w, b], {"eps": eps}, 0
    if name in ATTENTION:
        q, k, v, mask, causal, scale = attention_args(func, a, kwargs)
        kw = {"is_causal": causal}
        if scale is not None:
            kw["scale"] = scale
        return "scaled_dot_product_attention", [q, k, v, mask], kw, 0
    if name == "upsample_bilinear2d":
        size, align, scales = a[1], a[2], a[3] if len(a) > 3 else None
        kw = {"mode": "bilinear", "align_corners": align}
        kw.update({"size": list(size)} if size is not None else {"scale_factor": list(scales)})
        return "interpolate", [a[0]], kw, 0
    if name in ("avg_pool2d",):
        return "avg_pool2d", [a[0], list(a[1])], {
            "stride": list(arg(2, "stride", []) or a[1]), "padding": list(arg(3, "padding", [0])),
            "ceil_mode": arg(4, "ceil_mode", False),
            "count_include_pad": arg(5, "count_include_pad", True),
            "divisor_override": arg(6, "divisor_override")}, 0
    if name in ("_adaptive_avg_pool2d", "adaptive_avg_pool2d"):
        return "adaptive_avg_pool2d", [a[0], list(a[1])], {}, 0
    if name in ("var", "std"):
        dim = arg(1, "dim")
        corr = kwargs.get("correction", 1)
        return name, [a[0]], {"dim": list(dim) if dim is not None else None,
                              "correction": 1 if corr is None else corr,
                              "keepdim": kwargs.get("keepdim", False)}, 0
    if name == "cat":
        return None  # exact
    raise Unmapped(f"aten.{name}.{overload}")

"""mpsim.nn.functional: torch.nn.functional's functions with its signatures (inplace= and
the other arguments torch takes), each an op of mpsim or a composition stated below
(docs/ops.md). inplace=True writes the result into the input and returns the input."""

from .. import _C, _forms
from .._tensor_api import _call_into
from ._losses import _rsub
from ._sampling import (  # noqa: F401
    _scaled_dot_product_attention, conv_transpose3d, ctc_loss, embedding_bag, grid_sample)
from ._pools import (  # noqa: F401 (torch.nn.functional's names)
    adaptive_avg_pool3d, adaptive_max_pool1d, adaptive_max_pool2d, adaptive_max_pool3d,
    avg_pool3d, fractional_max_pool2d, fractional_max_pool3d, max_pool3d, max_unpool1d,
    max_unpool2d, max_unpool3d)
from ._losses import (  # noqa: F401 (torch.nn.functional's names)
    binary_cross_entropy, binary_cross_entropy_with_logits, cdist, cosine_embedding_loss,
    cosine_similarity, cross_entropy, gaussian_nll_loss, hinge_embedding_loss, huber_loss,
    kl_div, l1_loss, margin_ranking_loss, mse_loss, multi_margin_loss, multilabel_margin_loss,
    multilabel_soft_margin_loss, nll_loss, pairwise_distance, pdist, poisson_nll_loss,
    smooth_l1_loss, soft_margin_loss, triplet_margin_loss, triplet_margin_with_distance_loss)


def _inplace(input, out, inplace):
    if inplace:
        input.copy_(out)
        return input
    return out


def _op(name, input, *args, inplace=False):
    """_C.name(input, *args); inplace=True writes into input, straight from the kernel where it
    can (Note [out destination], core/ops.cc), else by a copy."""
    fn = getattr(_C, name)
    if not inplace:
        return fn(input, *args)
    result, wrote = _call_into(input, name, fn, input, *args)
    return input if wrote else _inplace(input, result, True)


def relu(input, inplace=False):
    return _op("relu", input, inplace=inplace)


def relu6(input, inplace=False):
    return _op("relu6", input, inplace=inplace)


def elu(input, alpha=1.0, inplace=False):
    return _op("elu", input, alpha, inplace=inplace)


def selu(input, inplace=False):
    return _op("selu", input, inplace=inplace)


def celu(input, alpha=1.0, inplace=False):
    return _op("celu", input, alpha, inplace=inplace)


def silu(input, inplace=False):
    return _op("silu", input, inplace=inplace)


def mish(input, inplace=False):
    return _op("mish", input, inplace=inplace)


def hardsigmoid(input, inplace=False):
    return _op("hardsigmoid", input, inplace=inplace)


def hardswish(input, inplace=False):
    return _op("hardswish", input, inplace=inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    if not input.dtype.is_floating_point and input.dtype != _C.bool:
        # torch converts the bounds to the integer type (truncating) and keeps it
        lo, hi = int(min_val), int(max_val)
        r = _C.where(_C.gt(input, hi), hi, _C.where(_C.lt(input, lo), lo, input)).to(input.dtype)
        return _inplace(input, r, inplace)
    return _op("hardtanh", input, min_val, max_val, inplace=inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _op("leaky_relu", input, negative_slope, inplace=inplace)


def threshold(input, threshold, value, inplace=False):
    if not input.dtype.is_floating_point and input.dtype != _C.bool:
        # torch converts threshold and value to the integer type and keeps it (uint8 wraps)
        th, val = (_C.full([], float(v), _C.float64, "cpu").to(input.dtype).item()
                   for v in (threshold, value))
        r = _C.where(_C.le(input, th), val, input).to(input.dtype)
        return _inplace(input, r, inplace)
    return _op("threshold", input, threshold, value, inplace=inplace)


def dropout(input, p=0.5, training=True, inplace=False):
    return _op("dropout", input, p, training, inplace=inplace)


def gelu(input, approximate="none"):
    return _C.gelu(input, approximate)


def softplus(input, beta=1, threshold=20):
    return _C.softplus(input, beta, threshold)


def hardshrink(input, lambd=0.5):
    return _C.hardshrink(input, lambd)


def softshrink(input, lambd=0.5):
    return _C.softshrink(input, lambd)


def logsigmoid(input):
    return _C.logsigmoid(input)


def softsign(input):
    return _C.softsign(input)


def tanhshrink(input):
    return _C.tanhshrink(input)


def sigmoid(input):
    return _C.sigmoid(input)


def tanh(input):
    return _C.tanh(input)


def _softmax_dim(input, dim):
    # torch's implicit dim (deprecated there): 0 for 0-, 1- and 3-d inputs, else 1
    if dim is not None:
        return dim
    return 0 if input.dim() in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _C.softmax(input, _softmax_dim(input, dim), dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    return _C.log_softmax(input, _softmax_dim(input, dim), dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """softmax(-input): the negation is exact, so softmax's bound."""
    return _C.softmax(_C.neg(input), _softmax_dim(input, dim), dtype)


def glu(input, dim=-1):
    """a * sigmoid(b) for the two halves of dim, in float64 (on the cpu), rounded once."""
    if not input.dtype.is_floating_point:
        raise _C.DTypeError(f"[glu] expected a floating point input, got {input.dtype}")
    if input.dim() == 0 or input.shape[dim] % 2:
        raise _C.ShapeError(f"[glu] Halving dimension must be even, but dimension {dim} is "
                            f"size {input.shape[dim] if input.dim() else 0}")
    a, b = _C.chunk(input.to("cpu").to(_C.float64), 2, dim)
    return _C.mul(a, _C.sigmoid(b)).to(input.dtype).to(input.device)


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(norm(input, p, dim), eps), in float64 (on the cpu), rounded once."""
    if out is not None:
        raise _C.UnsupportedError("[normalize] out= is not supported")
    x = input.to("cpu").to(_C.float64)
    n = _C.clamp_min(_forms.norm(x, p, dim, True), eps)
    return _C.div(x, n).to(input.dtype).to(input.device)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _C.layer_norm(input, list(normalized_shape), weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    return _C.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Eval: mpsim's golden batch_norm with the running statistics. training=True: the batch
    statistics (native_batch_norm: float64, rounded once; running stats updated as torch)."""
    if input.numel() == 0:
        return input.clone()
    if training:
        from .._compositions import native_batch_norm
        return native_batch_norm(input, weight, bias, running_mean, running_var, True, momentum,
                                 eps)[0]
    return _C.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def linear(input, weight, bias=None):
    return _C.linear(input, weight, bias)


def _pair(v):
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _conv2d(input, weight, bias, stride, padding, dilation, groups):
    """mpsim's conv2d; integer tensors through nn/_integer.py (exact int64, as torch)."""
    from . import _integer
    if _integer.is_integer(input, weight):
        return _integer.conv2d(input, weight, bias, stride, padding, dilation, groups)
    return _C.conv2d(input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation):
    from . import _integer
    if _integer.is_integer(input, weight):
        return _integer.conv_transpose2d(input, weight, bias, stride, padding, output_padding,
                                         groups, dilation)
    return _C.conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups,
                               dilation)


def _avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                divisor_override):
    from . import _integer
    if _integer.is_integer(input):
        return _integer.avg_pool2d(input, kernel_size, stride, padding, ceil_mode,
                                   count_include_pad, divisor_override)
    return _C.avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                         divisor_override)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    padding = padding if isinstance(padding, str) else _pair(padding)
    return _conv2d(input, weight, bias, _pair(stride), padding, _pair(dilation), groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose2d(input, weight, bias, _pair(stride), _pair(padding),
                             _pair(output_padding), groups, _pair(dilation))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _avg_pool2d(input, _pair(kernel_size), _pair(stride) if stride else None,
                       _pair(padding), ceil_mode, count_include_pad, divisor_override)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _C.max_pool2d(input, _pair(kernel_size), _pair(stride) if stride else None,
                         _pair(padding), _pair(dilation), ceil_mode, return_indices)


def adaptive_avg_pool2d(input, output_size):
    """None in output_size keeps that input size, as torch."""
    sizes = _pair(output_size)
    if len(sizes) == 1:
        sizes = sizes * 2
    sizes = [input.shape[-2 + i] if s is None else s for i, s in enumerate(sizes)]
    return _C.adaptive_avg_pool2d(input, sizes)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if antialias:
        raise _C.UnsupportedError("[interpolate] antialias=True is not supported")
    if input.dtype == _C.uint8 and mode in ("nearest", "nearest-exact"):
        # torch resizes uint8 images by nearest: copies of the input's values, so through
        # float32 (exact for every uint8) and back
        return interpolate(input.to(_C.float32), size, scale_factor, mode, align_corners,
                           recompute_scale_factor).to(_C.uint8)
    if input.dim() == 4 and mode in ("nearest", "bilinear"):
        return _C.interpolate(input, size, scale_factor, mode, align_corners)
    from ._resize import interpolate as resize  # every other mode and rank (NumPy, float64)
    return resize(input, size, scale_factor, mode, align_corners, recompute_scale_factor)


def pad(input, pad, mode="constant", value=None):
    """torch's pad. In the reflect, replicate and circular modes a negative pad crops that side
    first and the positive pads apply to what is left (torch 1.13's result); circular wraps
    each dim as out[i] = x[(i - left) mod n] (index_select: exact)."""
    pad = list(pad)
    if mode == "constant" or not any(p < 0 for p in pad) and mode != "circular":
        return _C.pad(input, pad, mode, value)
    if len(pad) % 2 or len(pad) // 2 > input.dim():
        raise _C.InvalidArgumentError(f"[pad] pad {pad} does not fit input of {input.dim()} "
                                      "dims")
    x = input
    for k in range(len(pad) // 2):
        dim = input.dim() - 1 - k
        left, right = pad[2 * k], pad[2 * k + 1]
        start = -left if left < 0 else 0
        stop = x.shape[dim] + right if right < 0 else x.shape[dim]
        x = _C.narrow(x, dim, start, max(stop - start, 0))
    positive = [max(p, 0) for p in pad]
    if mode != "circular":
        return _C.pad(x, positive, mode, value)
    import numpy as np
    from .. import tensor
    for k in range(len(pad) // 2):
        dim = input.dim() - 1 - k
        left, right, n = positive[2 * k], positive[2 * k + 1], x.shape[dim]
        if left > n or right > n:
            raise _C.InvalidArgumentError("[pad] Padding value causes wrapping around more "
                                          "than once.")
        index = tensor((np.arange(n + left + right) - left) % max(n, 1)).to(x.device)
        x = _C.index_select(x, dim, index)
    return x


# ---- 1-d forms through the 2-d ops: the input gains a height of 1 (N, C, 1, L) ------------

def _one(v):
    return v[0] if isinstance(v, (list, tuple)) else v


def _as_2d(input, name):
    if input.dim() not in (2, 3):
        raise _C.ShapeError(f"[{name}] expected a 2-d (C, L) or 3-d (N, C, L) input, got "
                            f"{input.dim()}-d")
    batched = input.dim() == 3
    x = input if batched else _C.unsqueeze(input, 0)
    return _C.unsqueeze(x, 2), batched


def _from_2d(out, batched):
    out = _C.squeeze(out, 2)
    return out if batched else _C.squeeze(out, 0)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """max_pool2d over (1, L) windows: the same maxima, and the same indices (into L)."""
    x, batched = _as_2d(input, "max_pool1d")
    stride = kernel_size if stride is None or stride == [] or stride == () else stride
    out = _C.max_pool2d(x, [1, _one(kernel_size)], [1, _one(stride)], [0, _one(padding)],
                        [1, _one(dilation)], ceil_mode, return_indices)
    if return_indices:
        return _from_2d(out[0], batched), _from_2d(out[1], batched)
    return _from_2d(out, batched)


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    x, batched = _as_2d(input, "avg_pool1d")
    stride = kernel_size if stride is None or stride == [] or stride == () else stride
    return _from_2d(_avg_pool2d(x, [1, _one(kernel_size)], [1, _one(stride)],
                                [0, _one(padding)], ceil_mode, count_include_pad, None),
                    batched)


def adaptive_avg_pool1d(input, output_size):
    x, batched = _as_2d(input, "adaptive_avg_pool1d")
    return _from_2d(_C.adaptive_avg_pool2d(x, [1, _one(output_size)]), batched)


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    x, batched = _as_2d(input, "conv1d")
    pad = padding if isinstance(padding, str) else [0, _one(padding)]
    return _from_2d(_conv2d(x, _C.unsqueeze(weight, 2), bias, [1, _one(stride)], pad,
                            [1, _one(dilation)], groups), batched)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    x, batched = _as_2d(input, "conv_transpose1d")
    return _from_2d(_conv_transpose2d(x, _C.unsqueeze(weight, 2), bias, [1, _one(stride)],
                                      [0, _one(padding)], [0, _one(output_padding)], groups,
                                      [1, _one(dilation)]), batched)


def upsample_nearest(input, size=None, scale_factor=None):
    """interpolate(mode='nearest') (torch's deprecated alias)."""
    return interpolate(input, size, scale_factor, "nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """interpolate(mode='bilinear', align_corners=True) (torch's deprecated alias)."""
    return interpolate(input, size, scale_factor, "bilinear", True)


def _renorm_rows(weight, indices, max_norm, norm_type):
    """torch's embedding_renorm_: each row of weight that indices reference, whose norm_type
    norm exceeds max_norm, scaled in place by max_norm / (norm + 1e-7) (in float64, rounded
    once). Returns the renormalized weight in float64 (None when no row is referenced)."""
    import numpy as np
    from .. import tensor
    idx = np.unique(indices.to("cpu").to(_C.int64).numpy().reshape(-1))
    if idx.size == 0:
        return None
    w = weight.to("cpu").to(_C.float64).numpy().copy()
    rows = w[idx]
    if norm_type == float("inf"):
        norms = np.abs(rows).max(axis=1)
    else:
        norms = (np.abs(rows) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    scale = np.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0)
    w[idx] = rows * scale[:, None]
    weight.copy_(tensor(w).to(weight.dtype).to(weight.device))
    return w


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """The rows of weight at input's indices (padding_idx, scale_grad_by_freq and sparse only
    matter to gradients; max_norm renormalizes weight's rows in place as torch does)."""
    if max_norm is not None:
        _renorm_rows(weight, input, max_norm, norm_type)
    rows = _C.index_select(weight, 0, _C.reshape(input, [-1]))
    return _C.reshape(rows, list(input.shape) + [weight.shape[1]])


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """im2col: (N, C * kh * kw, L) from (N, C, H, W) (or unbatched), as slices of the padded
    input, one per kernel offset."""
    def two(v):
        return list(v) if isinstance(v, (list, tuple)) else [v, v]
    (kh, kw), (dh, dw), (ph, pw), (sh, sw) = (two(kernel_size), two(dilation), two(padding),
                                              two(stride))
    batched = input.dim() == 4
    if input.dim() not in (3, 4):
        raise _C.ShapeError(f"[unfold] expected a 3-d or 4-d input, got {input.dim()}-d")
    x = input if batched else _C.unsqueeze(input, 0)
    n, c, h, w = x.shape
    x = _C.pad(x, [pw, pw, ph, ph]) if ph or pw else x
    oh = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    ow = (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    if oh <= 0 or ow <= 0:
        raise _C.ShapeError(f"[unfold] the kernel does not fit: output {oh} x {ow}")
    cols = []
    for i in range(kh):
        for j in range(kw):
            cols.append(x[:, :, i * dh:i * dh + sh * (oh - 1) + 1:sh,
                          j * dw:j * dw + sw * (ow - 1) + 1:sw])
    out = _C.reshape(_C.stack(cols, 2), [n, c * kh * kw, oh * ow])
    return out if batched else _C.squeeze(out, 0)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None):
    return _C.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
                                           scale)


def pixel_shuffle(input, upscale_factor):
    """[*, C r^2, H, W] -> [*, C, H r, W r] (a rearrangement: exact)."""
    r = int(upscale_factor)
    if input.dim() < 3:
        raise _C.ShapeError(f"[pixel_shuffle] expected at least 3 dims, got {input.dim()}")
    *lead, c, h, w = input.shape
    if r <= 0 or c % (r * r) != 0:
        raise _C.InvalidArgumentError(
            f"[pixel_shuffle] channels {c} not divisible by upscale_factor^2 = {r * r}")
    oc = c // (r * r)
    n = len(lead)
    x = input.reshape(list(lead) + [oc, r, r, h, w])
    order = list(range(n)) + [n, n + 3, n + 1, n + 4, n + 2]
    return x.permute(order).reshape(list(lead) + [oc, h * r, w * r])


def pixel_unshuffle(input, downscale_factor):
    """[*, C, H r, W r] -> [*, C r^2, H, W] (exact)."""
    r = int(downscale_factor)
    if input.dim() < 3:
        raise _C.ShapeError(f"[pixel_unshuffle] expected at least 3 dims, got {input.dim()}")
    *lead, c, h, w = input.shape
    if r <= 0 or h % r != 0 or w % r != 0:
        raise _C.InvalidArgumentError(
            f"[pixel_unshuffle] height {h} and width {w} must be divisible by {r}")
    n = len(lead)
    x = input.reshape(list(lead) + [c, h // r, r, w // r, r])
    order = list(range(n)) + [n, n + 2, n + 4, n + 1, n + 3]
    return x.permute(order).reshape(list(lead) + [c * r * r, h // r, w // r])


def prelu(input, weight):
    """x where x >= 0, else weight x (weight: one value, or one per channel of dim 1)."""
    if weight.numel() != 1:
        if input.dim() < 2 or weight.dim() != 1 or weight.shape[0] != input.shape[1]:
            raise _C.ShapeError(f"[prelu] weight of {weight.numel()} values for input of shape "
                                f"{tuple(input.shape)} (expected 1 or input.shape[1])")
        weight = weight.reshape([1, -1] + [1] * (input.dim() - 2))
    else:
        weight = weight.reshape([])
    return _C.where(_C.ge(input, 0), input, _C.mul(weight, input))


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Each channel of each sample normalized over its spatial dims (group_norm with one group
    per channel, golden); use_input_stats=False: batch_norm with the running statistics.
    running_mean/var, when given with use_input_stats, are updated as torch does."""
    if input.dim() < 2:
        raise _C.ShapeError("[instance_norm] expected an input of at least 2 dims")
    if not use_input_stats:
        return _C.batch_norm(input, running_mean, running_var, weight, bias, False, momentum,
                             eps)
    n, c = input.shape[0], input.shape[1]
    out = _C.group_norm(input, c, weight, bias, eps)
    if running_mean is not None and running_var is not None and input.numel() > 0:
        dims = list(range(2, input.dim()))
        x = input.to("cpu").to(_C.float64)
        count = input.numel() // (n * c)
        mean = _C.mean(_C.mean(x, dims), [0])
        var = _C.mean(_C.var(x, dims, correction=1) if count > 1 else _C.mul(
            _C.mean(x, dims), float("nan")), [0])
        running_mean.copy_(_C.add(_C.mul(running_mean.to("cpu").to(_C.float64), 1 - momentum),
                                  _C.mul(mean, momentum)).to(running_mean.dtype))
        running_var.copy_(_C.add(_C.mul(running_var.to("cpu").to(_C.float64), 1 - momentum),
                                 _C.mul(var, momentum)).to(running_var.dtype))
    return out


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + alpha / size * sum of x^2 over the size channels around it)^beta, in float64
    (the window zero-padded: size // 2 before, (size - 1) // 2 after)."""
    if input.dim() < 3:
        raise _C.ShapeError(f"[local_response_norm] expected 3 or more dims, got "
                            f"{input.dim()}")
    if input.numel() == 0:
        return input.clone()
    x = input.to("cpu").to(_C.float64)
    c = x.shape[1]
    sq = _C.square(x)
    before, after = size // 2, (size - 1) // 2
    zeros = [0, 0] * (x.dim() - 2)
    padded = _C.pad(sq, zeros + [before, after])
    total = _C.zeros_like(sq)
    for i in range(size):
        total = _C.add(total, _C.narrow(padded, 1, i, c))
    div = _C.pow(_C.add(_C.mul(total, alpha / size), k), beta)
    dtype = input.dtype if input.dtype.is_floating_point else _C.float32  # torch's promotion
    return _C.div(x, div).to(dtype).to(input.device)


def bilinear(input1, input2, weight, bias=None):
    """y_k = x1^T W_k x2 + b_k over the last dims, in float64, rounded once."""
    if weight.dim() != 3 or input1.shape[-1] != weight.shape[1] or \
            input2.shape[-1] != weight.shape[2]:
        raise _C.ShapeError(f"[bilinear] weight {tuple(weight.shape)} does not fit inputs "
                            f"{tuple(input1.shape)} and {tuple(input2.shape)}")
    a = input1.to("cpu").to(_C.float64)
    b = input2.to("cpu").to(_C.float64)
    w = weight.to("cpu").to(_C.float64)
    lead = list(a.shape[:-1])
    a2, b2 = a.reshape([-1, a.shape[-1]]), b.reshape([-1, b.shape[-1]])
    # (a W_k) . b for every k: [N, K, J] then the sum over J
    aw = _C.matmul(a2.unsqueeze(1).unsqueeze(1), w.unsqueeze(0)).squeeze(2)
    y = _C.sum(_C.mul(aw, b2.unsqueeze(1)), [-1])
    if bias is not None:
        y = _C.add(y, bias.to("cpu").to(_C.float64))
    return y.reshape(lead + [weight.shape[0]]).to(input1.dtype).to(input1.device)


def _channel_dropout(name, input, p, training, inplace, batched_dims):
    if p < 0 or p > 1:
        raise _C.InvalidArgumentError(f"[{name}] dropout probability has to be between 0 and "
                                      f"1, but got {p}")
    if not training or p == 0:
        return input
    shape = list(input.shape)
    keep = [shape[0], shape[1]] if input.dim() == batched_dims else [shape[0]]
    mask_shape = keep + [1] * (input.dim() - len(keep))
    u = _C.rand(mask_shape, _C.float32, input.device)
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
    out = _C.mul(input, _C.mul(_C.ge(u, p).to(input.dtype), scale))
    return _inplace(input, out, inplace)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Whole channels zeroed with probability p, the rest scaled by 1 / (1 - p) (mpsim's
    counter-based stream)."""
    return _channel_dropout("dropout2d", input, p, training, inplace, 4)


def dropout3d(input, p=0.5, training=True, inplace=False):
    return _channel_dropout("dropout3d", input, p, training, inplace, 5)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """SELU-preserving dropout of whole channels: dropped channels take alpha' = -1.7581, then
    a x + b keeps zero mean and unit variance (torch's constants)."""
    if p < 0 or p > 1:
        raise _C.InvalidArgumentError(f"[feature_alpha_dropout] dropout probability has to be "
                                      f"between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    if p == 1:  # torch's: every element dropped
        return _op("mul", input, 0, inplace=inplace)
    alpha = -1.7580993408473766
    a = ((1 - p) * (1 + p * alpha * alpha)) ** -0.5
    b = -a * alpha * p
    shape = list(input.shape)
    mask_shape = shape[:2] + [1] * (input.dim() - 2)
    keep = _C.ge(_C.rand(mask_shape, _C.float32, input.device), p).to(input.dtype)
    kept = _C.add(_C.mul(input, keep), _C.mul(_rsub(keep, 1.0), alpha))
    return _inplace(input, _C.add(_C.mul(kept, a), b), inplace)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """x where x >= 0, else a x with a uniform in [lower, upper) per element when training,
    (lower + upper) / 2 otherwise."""
    if not training:
        return leaky_relu(input, (lower + upper) / 2, inplace)
    a = _C.uniform(list(input.shape), lower, upper, input.dtype, input.device)
    return _inplace(input, _C.where(_C.ge(input, 0), input, _C.mul(input, a)), inplace)


__all__ = [n for n in dir() if not n.startswith("_")]

"""Convolutions and average pooling of integer tensors, as torch computes them on its cpu for
int64 (its slow paths): sums of products exact in int64 (NumPy, wrapping as torch's
accumulator does), and for avg_pool the sum divided by the window's divisor with C++'s
truncating integer division. The golden kernels take floating tensors; the float64 op on
the same values runs first for its checks and output shape, so errors are the op's own."""

import numpy as np

from .. import _C


def is_integer(*tensors):
    return any(isinstance(t, _C.Tensor) and not t.dtype.is_floating_point and
               t.dtype != _C.bool for t in tensors)


def _np(t):
    return t.to("cpu").contiguous().numpy().astype(np.int64)


def _f64(t):
    return t.to("cpu").to(_C.float64) if isinstance(t, _C.Tensor) else t


def _same_dtype(name, *tensors):
    dtypes = {t.dtype for t in tensors if isinstance(t, _C.Tensor)}
    if len(dtypes) > 1:
        listed = " and ".join(sorted(str(d) for d in dtypes))
        raise _C.DTypeError(f"[{name}] expected input, weight and bias of one dtype, got "
                            f"{listed}")


def _back(values, shape, like):
    return _C.tensor(np.asarray(values, dtype=np.int64).reshape(shape)).to(like.dtype).to(
        like.device)


def _window(x, k, d, s, size):
    """x[..., k d + s i] for i < size along the last two dims (k, d, s, size: pairs)."""
    return x[..., k[0] * d[0]:k[0] * d[0] + s[0] * (size[0] - 1) + 1:s[0],
             k[1] * d[1]:k[1] * d[1] + s[1] * (size[1] - 1) + 1:s[1]]


def conv2d(input, weight, bias, stride, padding, dilation, groups):
    """torch.conv2d of integer tensors ([N, C, H, W] or [C, H, W])."""
    _same_dtype("conv2d", input, weight, bias)
    shaped = _C.conv2d(_f64(input), _f64(weight), _f64(bias), stride, padding, dilation, groups)
    x, w = _np(input), _np(weight)
    batched = x.ndim == 4
    x = x if batched else x[None]
    kh, kw = w.shape[2:]
    d = list(dilation) * (2 if len(dilation) == 1 else 1)
    s = list(stride) * (2 if len(stride) == 1 else 1)
    if isinstance(padding, str):  # 'valid', or 'same' (stride 1): torch's split, more after
        total = [0, 0] if padding == "valid" else [d[0] * (kh - 1), d[1] * (kw - 1)]
        pads = [(t // 2, t - t // 2) for t in total]
    else:
        p = list(padding) * (2 if len(padding) == 1 else 1)
        pads = [(p[0], p[0]), (p[1], p[1])]
    xp = np.pad(x, [(0, 0), (0, 0)] + pads)
    out_hw = tuple(shaped.shape[-2:])
    n, cout = x.shape[0], w.shape[0]
    cin_g, cout_g = w.shape[1], cout // groups
    out = np.zeros((n, cout) + out_hw, dtype=np.int64)
    for g in range(groups):
        xg = xp[:, g * cin_g:(g + 1) * cin_g]
        wg = w[g * cout_g:(g + 1) * cout_g]
        for i in range(kh):
            for j in range(kw):
                out[:, g * cout_g:(g + 1) * cout_g] += np.einsum(
                    "nchw,oc->nohw", _window(xg, (i, j), d, s, out_hw), wg[:, :, i, j])
    if bias is not None:
        out += _np(bias)[None, :, None, None]
    return _back(out if batched else out[0], tuple(shaped.shape), input)


def conv_transpose2d(input, weight, bias, stride, padding, output_padding, groups, dilation):
    """torch.conv_transpose2d of integer tensors: each input pixel scatters its weighted
    kernel (weight [C_in, C_out / groups, kH, kW]), the padding cropped."""
    _same_dtype("conv_transpose2d", input, weight, bias)
    shaped = _C.conv_transpose2d(_f64(input), _f64(weight), _f64(bias), stride, padding,
                                 output_padding, groups, dilation)
    x, w = _np(input), _np(weight)
    batched = x.ndim == 4
    x = x if batched else x[None]
    two = [(list(v) * (2 if len(v) == 1 else 1)) for v in (stride, padding, dilation)]
    s, p, d = two
    n, cin, h, wd = x.shape
    cout_g, kh, kw = w.shape[1:]
    out_hw = tuple(shaped.shape[-2:])
    full = (max((h - 1) * s[0] + d[0] * (kh - 1) + 1, p[0] + out_hw[0]),
            max((wd - 1) * s[1] + d[1] * (kw - 1) + 1, p[1] + out_hw[1]))
    out = np.zeros((n, cout_g * groups) + full, dtype=np.int64)
    cin_g = cin // groups
    for g in range(groups):
        xg = x[:, g * cin_g:(g + 1) * cin_g]
        wg = w[g * cin_g:(g + 1) * cin_g]
        for i in range(kh):
            for j in range(kw):
                view = _window(out[:, g * cout_g:(g + 1) * cout_g], (i, j), d, s, (h, wd))
                view += np.einsum("nchw,co->nohw", xg, wg[:, :, i, j])
    out = out[..., p[0]:p[0] + out_hw[0], p[1]:p[1] + out_hw[1]]
    if bias is not None:
        out = out + _np(bias)[None, :, None, None]
    return _back(out if batched else out[0], tuple(shaped.shape), input)


def avg_pool2d(input, kernel_size, stride, padding, ceil_mode, count_include_pad,
               divisor_override):
    """torch.avg_pool2d of an integer tensor: each window's exact sum divided by its divisor
    (divisor_override; else the window within the padded input when count_include_pad, or its
    count of input elements), truncating toward zero as C++'s integer division."""
    shaped = _C.avg_pool2d(_f64(input), kernel_size, stride, padding, ceil_mode,
                           count_include_pad, divisor_override)
    x = _np(input)
    k = list(kernel_size) * (2 if len(kernel_size) == 1 else 1)
    s = k if not stride else list(stride) * (2 if len(stride) == 1 else 1)
    p = list(padding) * (2 if len(padding) == 1 else 1)
    out_hw = tuple(shaped.shape[-2:])
    h, w = x.shape[-2:]
    # room for ceil_mode's last window, which may reach past the padding
    extra = [max(0, (out_hw[i] - 1) * s[i] + k[i] - ((h, w)[i] + 2 * p[i])) for i in range(2)]
    lead = [(0, 0)] * (x.ndim - 2)
    xp = np.pad(x, lead + [(p[0], p[0] + extra[0]), (p[1], p[1] + extra[1])])
    real = np.pad(np.ones((h, w), np.int64), [(p[0], p[0] + extra[0]), (p[1], p[1] + extra[1])])
    padded = np.pad(np.ones((h + 2 * p[0], w + 2 * p[1]), np.int64),
                    [(0, extra[0]), (0, extra[1])])
    total = np.zeros(x.shape[:-2] + out_hw, dtype=np.int64)
    count = np.zeros(out_hw, dtype=np.int64)
    size = np.zeros(out_hw, dtype=np.int64)
    for i in range(k[0]):
        for j in range(k[1]):
            total += _window(xp, (i, j), (1, 1), s, out_hw)
            count += _window(real, (i, j), (1, 1), s, out_hw)
            size += _window(padded, (i, j), (1, 1), s, out_hw)
    div = np.full(out_hw, divisor_override, np.int64) if divisor_override else \
        (size if count_include_pad else count)
    # C++'s truncating division (a negative divisor_override included)
    quotient = np.abs(total) // np.maximum(np.abs(div), 1) * np.sign(total) * np.sign(div)
    return _back(quotient, tuple(shaped.shape), input)

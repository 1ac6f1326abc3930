"""interpolate beyond the 4-d nearest/bilinear kernel: every mode torch 1.13 has ('nearest',
'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear', 'area') on 3-d, 4-d and 5-d
inputs, with align_corners and scale_factor as torch computes its source coordinates
(area_pixel_compute_source_index). Separable: one dim at a time in float64 with NumPy on the
cpu, rounded once at the end, moved back to the input's device. docs/ops.md, "Pooling and
resizing"."""

import math

import numpy as np

from .. import _C

_RANKS = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def _sizes(name, input, size, scale_factor, recompute_scale_factor):
    n = input.dim() - 2
    spatial = list(input.shape[2:])
    if (size is None) == (scale_factor is None):
        raise _C.InvalidArgumentError(f"[{name}] only one of size or scale_factor should be "
                                      "defined")
    if size is not None:
        out = [int(size)] * n if not isinstance(size, (list, tuple)) else [int(v) for v in size]
        if len(out) != n:
            raise _C.InvalidArgumentError(f"[{name}] size {size} for {n} spatial dims")
        return out, [None] * n
    scales = [float(scale_factor)] * n if not isinstance(scale_factor, (list, tuple)) else \
        [float(v) for v in scale_factor]
    if len(scales) != n:
        raise _C.InvalidArgumentError(f"[{name}] scale_factor {scale_factor} for {n} spatial "
                                      "dims")
    out = [int(math.floor(L * s)) for L, s in zip(spatial, scales)]
    return out, ([None] * n if recompute_scale_factor else scales)


def _scale(length, out, align_corners, scale):
    """torch's area_pixel_compute_scale."""
    if align_corners:
        return (length - 1) / (out - 1) if out > 1 else 0.0
    if scale is not None and scale > 0:
        return 1.0 / scale
    return length / out


def _linear_axis(x, axis, out, align_corners, scale, cubic=False):
    length = x.shape[axis]
    r = _scale(length, out, align_corners, scale)
    dst = np.arange(out, dtype=np.float64)
    if align_corners:
        src = r * dst
    else:
        src = r * (dst + 0.5) - 0.5
        if not cubic:
            src = np.maximum(src, 0.0)
    if not cubic:
        i0 = np.minimum(np.floor(src).astype(np.int64), length - 1)
        lam = src - i0
        i1 = np.minimum(i0 + 1, length - 1)
        shape = [1] * x.ndim
        shape[axis] = out
        lam = lam.reshape(shape)
        return np.take(x, i0, axis) * (1 - lam) + np.take(x, i1, axis) * lam
    i = np.floor(src).astype(np.int64)
    t = src - i
    a = -0.75

    def near(u):  # |u| <= 1
        return ((a + 2) * u - (a + 3)) * u * u + 1

    def far(u):  # 1 < |u| < 2
        return ((a * u - 5 * a) * u + 8 * a) * u - 4 * a

    weights = [far(t + 1), near(t), near(1 - t), far(2 - t)]
    shape = [1] * x.ndim
    shape[axis] = out
    total = 0.0
    for k, w in enumerate(weights):
        idx = np.clip(i - 1 + k, 0, length - 1)
        total = total + np.take(x, idx, axis) * w.reshape(shape)
    return total


def _nearest_axis(x, axis, out, scale, exact):
    length = x.shape[axis]
    r = _scale(length, out, False, scale)
    dst = np.arange(out, dtype=np.float64)
    src = np.floor((dst + 0.5) * r if exact else dst * r).astype(np.int64)
    return np.take(x, np.minimum(src, length - 1), axis)


def _area_axis(x, axis, out):
    length = x.shape[axis]
    parts = []
    for i in range(out):
        lo, hi = (i * length) // out, -((-(i + 1) * length) // out)
        parts.append(np.take(x, np.arange(lo, hi), axis).mean(axis=axis, keepdims=True))
    return np.concatenate(parts, axis=axis)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None):
    name = "interpolate"
    if input.dim() not in (3, 4, 5):
        raise _C.ShapeError(f"[{name}] expected a 3-d, 4-d or 5-d input, got {input.dim()}-d")
    linear = mode in _RANKS
    if mode not in ("nearest", "nearest-exact", "area") and not linear:
        raise _C.InvalidArgumentError(f"[{name}] mode {mode!r} is not one of 'nearest', "
                                      "'nearest-exact', 'linear', 'bilinear', 'bicubic', "
                                      "'trilinear', 'area'")
    if linear and input.dim() != _RANKS[mode]:
        raise _C.UnsupportedError(f"[{name}] mode {mode!r} needs a {_RANKS[mode]}-d input, got "
                                  f"{input.dim()}-d")
    if align_corners is not None and not linear:
        raise _C.InvalidArgumentError(f"[{name}] align_corners option can only be set with the "
                                      "interpolating modes: linear | bilinear | bicubic | "
                                      "trilinear")
    out, scales = _sizes(name, input, size, scale_factor, recompute_scale_factor)
    if any(o <= 0 for o in out) or any(L <= 0 for L in input.shape[2:]):
        raise _C.ShapeError(f"[{name}] input {tuple(input.shape)} and output {out} sizes "
                            "should be greater than 0")
    x = input.to("cpu").to(_C.float64).numpy()
    for k, (o, s) in enumerate(zip(out, scales)):
        axis = 2 + k
        if mode == "area":
            x = _area_axis(x, axis, o)
        elif linear:
            x = _linear_axis(x, axis, o, bool(align_corners), s, cubic=mode == "bicubic")
        else:
            x = _nearest_axis(x, axis, o, s, mode == "nearest-exact")
    from .. import tensor
    return tensor(np.ascontiguousarray(x)).to(input.dtype).to(input.device)

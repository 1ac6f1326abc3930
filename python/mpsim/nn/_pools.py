"""Pooling beyond mpsim's 2-d kernels: max_pool3d, avg_pool3d, adaptive_avg_pool3d and the
adaptive max pools of every rank, computed with NumPy on the cpu (max: exact, with torch's
indices: the first maximum of a window in its scan order, NaN winning; average: the window's
sum in float64 divided once, rounded once) and moved back to the input's device. docs/ops.md,
"Pooling and resizing"."""

import itertools

import numpy as np

from .. import _C


def _tuple(v, n, name):
    if isinstance(v, (list, tuple)):
        if len(v) == 1:
            return tuple(v) * n
        if len(v) != n:
            raise _C.InvalidArgumentError(f"[{name}] expected {n} values, got {len(v)}")
        return tuple(int(x) for x in v)
    return (int(v),) * n


def _batched(input, n, name):
    if input.dim() not in (n + 1, n + 2):
        raise _C.ShapeError(f"[{name}] expected a {n + 1}-d or {n + 2}-d input, got "
                            f"{input.dim()}-d")
    return input.dim() == n + 2


def _numpy(input):
    return input.to("cpu").to(_C.float64).numpy()


def _tensor(a, dtype, device):
    from .. import tensor
    return tensor(np.ascontiguousarray(a)).to(dtype).to(device)


def _out_size(length, k, s, p, d, ceil_mode):
    span = d * (k - 1) + 1
    out = (length + 2 * p - span + ((s - 1) if ceil_mode else 0)) // s + 1
    if ceil_mode and (out - 1) * s >= length + p:
        out -= 1
    return out


def _pool(name, input, n, kernel_size, stride, padding, dilation, ceil_mode, reduce,
          count_include_pad=True, divisor_override=None):
    batched = _batched(input, n, name)
    k = _tuple(kernel_size, n, name)
    s = _tuple(stride if stride not in (None, []) else kernel_size, n, name)
    p = _tuple(padding, n, name)
    d = _tuple(dilation, n, name)
    if any(v <= 0 for v in k + s + d):
        raise _C.InvalidArgumentError(f"[{name}] kernel_size, stride and dilation must be "
                                      "positive")
    if any(2 * pv > kv for pv, kv in zip(p, k)):
        raise _C.InvalidArgumentError(f"[{name}] pad should be at most half of the kernel "
                                      f"size, but got pad={p} and kernel_size={k}")
    x = _numpy(input)
    if not batched:
        x = x[None]
    spatial = x.shape[2:]
    out = tuple(_out_size(L, kk, ss, pp, dd, ceil_mode)
                for L, kk, ss, pp, dd in zip(spatial, k, s, p, d))
    if any(o <= 0 for o in out):
        raise _C.ShapeError(f"[{name}] output size {out} is too small for input {spatial}")
    lead = x.shape[:2]
    if reduce == "max":
        best = np.full(lead + out, -np.inf)
        where = np.full(lead + out, -1, np.int64)
        found = np.zeros(lead + out, bool)
    else:
        total = np.zeros(lead + out)
        counts = np.zeros(out)
        sizes = np.zeros(out)
    grids = np.meshgrid(*[np.arange(o) for o in out], indexing="ij")
    for offset in itertools.product(*[range(kk) for kk in k]):
        pos = [g * ss - pp + j * dd for g, ss, pp, j, dd in zip(grids, s, p, offset, d)]
        valid = np.ones(out, bool)
        for q, L in zip(pos, spatial):
            valid &= (q >= 0) & (q < L)
        clipped = [np.clip(q, 0, L - 1) for q, L in zip(pos, spatial)]
        vals = x[(slice(None), slice(None)) + tuple(clipped)]
        if reduce == "max":
            flat = np.ravel_multi_index(tuple(clipped), spatial)
            take = valid & ((~found) | (vals > best) | (np.isnan(vals) & ~np.isnan(best)))
            best = np.where(take, vals, best)
            where = np.where(take, flat, where)
            found |= valid
        else:
            total += np.where(valid, vals, 0.0)
            counts += valid
    if reduce == "max":
        return (_tensor(best if batched else best[0], input.dtype, input.device),
                _tensor(where if batched else where[0], _C.int64, input.device))
    if divisor_override:
        div = float(divisor_override)
    elif count_include_pad:
        # torch: the window clipped to the padded input, before clipping to the input
        for dim, (L, kk, ss, pp) in enumerate(zip(spatial, k, s, p)):
            start = np.arange(out[dim]) * ss - pp
            end = np.minimum(start + kk, L + pp)
            shape = [1] * n
            shape[dim] = out[dim]
            size = (end - start).reshape(shape)
            sizes = size if dim == 0 else sizes * size
        div = sizes
    else:
        div = counts
    r = total / div
    return _tensor(r if batched else r[0], input.dtype, input.device)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    values, indices = _pool("max_pool3d", input, 3, kernel_size, stride, padding, dilation,
                            ceil_mode, "max")
    return (values, indices) if return_indices else values


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _pool("avg_pool3d", input, 3, kernel_size, stride, padding, 1, ceil_mode, "avg",
                 count_include_pad, divisor_override)


def _adaptive(name, input, n, output_size, reduce):
    batched = _batched(input, n, name)
    x = _numpy(input)
    if not batched:
        x = x[None]
    spatial = x.shape[2:]
    sizes = _tuple(output_size, n, name) if not isinstance(output_size, (list, tuple)) or \
        None not in output_size else tuple(spatial[i] if o is None else int(o)
                                           for i, o in enumerate(output_size))
    if any(L == 0 for L in spatial) or any(o < 0 for o in sizes):
        if x.size or any(o < 0 for o in sizes):
            raise _C.ShapeError(f"[{name}] expected non-empty spatial dims and a non-negative "
                                f"output_size, got input {tuple(input.shape)}")
    lead = x.shape[:2]
    out = np.zeros(lead + sizes)
    idx = np.zeros(lead + sizes, np.int64)
    if x.size == 0:  # an empty batch: an empty result
        return (_tensor(out if batched else out[0], input.dtype, input.device),
                _tensor(idx if batched else idx[0], _C.int64, input.device))
    for o in itertools.product(*[range(v) for v in sizes]):
        win = tuple(slice((i * L) // v, -((-(i + 1) * L) // v)) for i, L, v in
                    zip(o, spatial, sizes))
        block = x[(slice(None), slice(None)) + win].reshape(lead + (-1,))
        if reduce == "avg":
            out[(slice(None), slice(None)) + o] = block.sum(-1) / block.shape[-1]
            continue
        nan = np.isnan(block)
        first = np.where(nan.any(-1), nan.argmax(-1), block.argmax(-1) if block.size else 0)
        out[(slice(None), slice(None)) + o] = np.take_along_axis(
            block, first[..., None], -1)[..., 0] if block.size else 0
        local = np.unravel_index(first, tuple(w.stop - w.start for w in win))
        idx[(slice(None), slice(None)) + o] = np.ravel_multi_index(
            tuple(loc + w.start for loc, w in zip(local, win)), spatial)
    values = _tensor(out if batched else out[0], input.dtype, input.device)
    indices = _tensor(idx if batched else idx[0], _C.int64, input.device)
    return values, indices


def adaptive_avg_pool3d(input, output_size):
    return _adaptive("adaptive_avg_pool3d", input, 3, output_size, "avg")[0]


def _adaptive_max(n):
    def pool(input, output_size, return_indices=False):
        values, indices = _adaptive(f"adaptive_max_pool{n}d", input, n, output_size, "max")
        return (values, indices) if return_indices else values
    pool.__name__ = f"adaptive_max_pool{n}d"
    pool.__doc__ = (f"The maximum of each of output_size adaptive windows ({n}-d; torch's "
                    "window bounds floor(i L / out) to ceil((i + 1) L / out)); NaN wins; "
                    "return_indices gives the flat index in the input plane.")
    return pool


adaptive_max_pool1d = _adaptive_max(1)
adaptive_max_pool2d = _adaptive_max(2)
adaptive_max_pool3d = _adaptive_max(3)


def _max_unpool(n):
    def unpool(input, indices, kernel_size, stride=None, padding=0, output_size=None):
        name = f"max_unpool{n}d"
        batched = _batched(input, n, name)
        k = _tuple(kernel_size, n, name)
        s = _tuple(stride if stride not in (None, []) else kernel_size, n, name)
        p = _tuple(padding, n, name)
        spatial_in = tuple(input.shape[-n:])
        if output_size is None:
            out = tuple((L - 1) * ss - 2 * pp + kk for L, ss, pp, kk in zip(spatial_in, s, p, k))
        else:
            out = tuple(int(v) for v in list(output_size)[-n:])
        x = _numpy(input)
        idx = indices.to("cpu").to(_C.int64).numpy()
        if not batched:
            x, idx = x[None], idx[None]
        lead = x.shape[:2]
        flat = np.zeros(lead + (int(np.prod(out)),))
        size = int(np.prod(out))
        if idx.size and (idx.min() < 0 or idx.max() >= size):
            raise IndexError(f"[{name}] Found an invalid max index: {int(idx.max())} (output "
                             f"volumes are of size {'x'.join(map(str, out))})")
        rows = flat.reshape(-1, size)
        np.put_along_axis(rows, idx.reshape(rows.shape[0], -1), x.reshape(rows.shape[0], -1),
                          axis=1)
        r = rows.reshape(lead + out)
        return _tensor(r if batched else r[0], input.dtype, input.device)
    unpool.__name__ = f"max_unpool{n}d"
    unpool.__doc__ = ("The inverse of max_pool: each value written at its index in a zero "
                      "output (exact).")
    return unpool


max_unpool1d = _max_unpool(1)
max_unpool2d = _max_unpool(2)
max_unpool3d = _max_unpool(3)


def _fractional(n):
    def pool(input, kernel_size, output_size=None, output_ratio=None, return_indices=False,
             _random_samples=None):
        """Fractional max pooling (Graham): window starts floor((i + u) alpha) - floor(u alpha)
        with alpha = (in - k) / (out - 1) and u per (batch, plane, dim) from mpsim's stream (or
        _random_samples), the last window at in - k; max with indices as max_pool."""
        name = f"fractional_max_pool{n}d"
        batched = _batched(input, n, name)
        k = _tuple(kernel_size, n, name)
        spatial = tuple(input.shape[-n:])
        if output_size is None:
            if output_ratio is None:
                raise _C.InvalidArgumentError(f"[{name}] requires specifying either an "
                                              "output_size or an output_ratio")
            if isinstance(output_ratio, (list, tuple)):
                ratio = tuple(output_ratio) * (n if len(output_ratio) == 1 else 1)
            else:
                ratio = (float(output_ratio),) * n
            out = tuple(int(L * float(r)) for L, r in zip(spatial, ratio))
        else:
            out = _tuple(output_size, n, name)
        if any(o + kk - 1 > L for o, kk, L in zip(out, k, spatial)):
            raise _C.InvalidArgumentError(f"[{name}] output size {out} plus kernel size {k} "
                                          f"is too large for input {spatial}")
        x = _numpy(input)
        if not batched:
            x = x[None]
        nb, c = x.shape[:2]
        if _random_samples is not None:
            u = _random_samples.to("cpu").to(_C.float64).numpy().reshape(nb, c, n)
        else:
            u = _C.rand([nb, c, n], _C.float64, "cpu").numpy()
        best = np.full((nb, c) + out, -np.inf)
        where = np.zeros((nb, c) + out, np.int64)
        for b in range(nb):
            for ch in range(c):
                starts = []
                for dim in range(n):
                    o, L, kk = out[dim], spatial[dim], k[dim]
                    if o == 1:
                        starts.append(np.array([L - kk]))
                        continue
                    alpha = (L - kk) / (o - 1)
                    uu = u[b, ch, dim]
                    seq = (np.floor((np.arange(o) + uu) * alpha) - np.floor(uu * alpha))
                    seq = seq.astype(np.int64)
                    seq[-1] = L - kk
                    starts.append(seq)
                plane = x[b, ch]
                for o_idx in itertools.product(*[range(v) for v in out]):
                    win = tuple(slice(st[i], st[i] + kk) for st, i, kk in zip(starts, o_idx, k))
                    block = plane[win].reshape(-1)
                    nan = np.isnan(block)
                    j = int(nan.argmax()) if nan.any() else int(block.argmax())
                    best[(b, ch) + o_idx] = block[j]
                    local = np.unravel_index(j, k)
                    where[(b, ch) + o_idx] = np.ravel_multi_index(
                        tuple(lo + w.start for lo, w in zip(local, win)), spatial)
        values = _tensor(best if batched else best[0], input.dtype, input.device)
        if not return_indices:
            return values
        return values, _tensor(where if batched else where[0], _C.int64, input.device)
    pool.__name__ = f"fractional_max_pool{n}d"
    return pool


fractional_max_pool2d = _fractional(2)
fractional_max_pool3d = _fractional(3)

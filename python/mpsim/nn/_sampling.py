"""grid_sample, embedding_bag and torch 1.13's _scaled_dot_product_attention as NumPy/mpsim
compositions in float64 on the cpu, rounded once into the input's dtype and moved back to its
device. docs/ops.md, "Losses, distances and compositions in float64"."""

import numpy as np

from .. import _C


def _tensor(a, dtype, device):
    from .. import tensor
    return tensor(np.array(a, dtype=np.float64)).to(dtype).to(device)


def _reflect(x, twice_low, twice_high):
    if twice_low == twice_high:
        return np.zeros_like(x)
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    x = np.abs(x - lo)
    extra = np.fmod(x, span)
    flips = np.floor(x / span)
    return np.where(np.fmod(flips, 2) == 0, extra + lo, span - extra + lo)


def _source(coord, size, padding_mode, align_corners):
    """torch's grid_sampler_compute_source_index: unnormalize, then pad."""
    if align_corners:
        x = (coord + 1) / 2 * (size - 1)
    else:
        x = ((coord + 1) * size - 1) / 2
    return _pad(x, size, padding_mode, align_corners)


def _pad(x, size, padding_mode, align_corners):
    if padding_mode == "border":
        return np.clip(x, 0, size - 1)
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else _reflect(x, -1, 2 * size - 1)
        return np.clip(x, 0, size - 1)
    return x


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """input [N, C, H, W] (or [N, C, D, H, W]) sampled at grid [N, Ho, Wo, 2] ([N, Do, Ho, Wo,
    3]; (x, y[, z]) in [-1, 1]): 'bilinear' (trilinear in 5-d), 'nearest' (half to even) or
    'bicubic' (4-d, A = -0.75), padding 'zeros', 'border' or 'reflection', as torch's CPU
    kernel; in float64, rounded once."""
    import itertools
    name = "grid_sample"
    if mode not in ("bilinear", "nearest", "bicubic"):
        raise _C.InvalidArgumentError(f"[{name}] mode must be 'bilinear', 'nearest' or "
                                      f"'bicubic', got {mode!r}")
    if padding_mode not in ("zeros", "border", "reflection"):
        raise _C.InvalidArgumentError(f"[{name}] padding_mode must be 'zeros', 'border' or "
                                      f"'reflection', got {padding_mode!r}")
    nd = input.dim() - 2
    if nd not in (2, 3) or grid.dim() != input.dim() or grid.shape[-1] != nd or \
            grid.shape[0] != input.shape[0]:
        raise _C.ShapeError(f"[{name}] expected input [N, C, H, W] with grid [N, Ho, Wo, 2] or "
                            f"input [N, C, D, H, W] with grid [N, Do, Ho, Wo, 3], got "
                            f"{tuple(input.shape)} and {tuple(grid.shape)}")
    if mode == "bicubic" and nd != 2:
        raise _C.InvalidArgumentError(f"[{name}] bicubic interpolation only supports 4D input")
    align = bool(align_corners)
    x = input.to("cpu").to(_C.float64).numpy()
    g = grid.to("cpu").to(_C.float64).numpy()
    n, sizes = x.shape[0], x.shape[2:]
    batch = np.arange(n).reshape((n,) + (1,) * nd)
    coords = [g[..., nd - 1 - k] for k in range(nd)]  # per spatial dim, in x's dim order

    def tap(idx):
        """x[b, :, idx...] as [N, C, *out], 0 outside the input."""
        inside = np.ones(idx[0].shape, bool)
        for i, size in zip(idx, sizes):
            inside &= (i >= 0) & (i < size)
        clipped = tuple(np.clip(i, 0, size - 1) for i, size in zip(idx, sizes))
        v = np.moveaxis(x, 1, -1)[(batch,) + clipped]  # [N, *out, C]
        v = np.where(inside[..., None], v, 0.0)
        return np.moveaxis(v, -1, 1)

    if mode == "bicubic":
        h, w = sizes
        gx, gy = coords[1], coords[0]
        if align:
            sx, sy = (gx + 1) / 2 * (w - 1), (gy + 1) / 2 * (h - 1)
        else:
            sx, sy = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
        x0, y0 = np.floor(sx), np.floor(sy)
        tx, ty = sx - x0, sy - y0
        a = -0.75

        def coeffs(t):
            def near(u):
                return ((a + 2) * u - (a + 3)) * u * u + 1

            def far(u):
                return ((a * u - 5 * a) * u + 8 * a) * u - 4 * a
            return [far(t + 1), near(t), near(1 - t), far(2 - t)]
        cx, cy = coeffs(tx), coeffs(ty)
        out = 0.0
        for j in range(4):
            row = 0.0
            for i in range(4):
                px = _pad(x0 - 1 + i, w, padding_mode, align)
                py = _pad(y0 - 1 + j, h, padding_mode, align)
                ok = np.isfinite(px) & np.isfinite(py)
                ix = np.where(ok, px, -1).astype(np.int64)
                iy = np.where(ok, py, -1).astype(np.int64)
                row = row + tap([iy, ix]) * cx[i][:, None]
            out = out + row * cy[j][:, None]
        return _tensor(out, input.dtype, input.device)
    src = [_source(c, size, padding_mode, align) for c, size in zip(coords, sizes)]
    finite = np.ones(src[0].shape, bool)
    for s_ in src:
        finite &= np.isfinite(s_)
    src = [np.where(finite, s_, -10.0) for s_ in src]
    if mode == "nearest":
        out = tap([np.rint(s_).astype(np.int64) for s_ in src])
    else:
        low = [np.floor(s_).astype(np.int64) for s_ in src]
        frac = [s_ - lo for s_, lo in zip(src, low)]
        out = 0.0
        for corner in itertools.product((0, 1), repeat=nd):
            weight = np.ones(src[0].shape)
            for c, f in zip(corner, frac):
                weight = weight * (f if c else 1 - f)
            out = out + tap([lo + c for lo, c in zip(low, corner)]) * weight[:, None]
    out = np.where(finite[:, None], out, 0.0) if padding_mode == "zeros" else out
    return _tensor(out, input.dtype, input.device)


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """The sum, mean or max of the weight rows of each bag (2-d input: one bag per row; 1-d: bags
    from offsets), per_sample_weights scaling each row (sum only), padding_idx rows left out;
    an empty bag gives zeros. In float64, rounded once."""
    name = "embedding_bag"
    if mode not in ("sum", "mean", "max"):
        raise _C.InvalidArgumentError(f"[{name}] mode has to be one of sum, mean or max")
    renormed = None
    if max_norm is not None:  # weight's referenced rows renormalized in place, as torch; the
        from .functional import _renorm_rows  # bags sum the float64 rows, rounded once
        renormed = _renorm_rows(weight, input, max_norm, norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise _C.InvalidArgumentError(f"[{name}] embedding_bag: per_sample_weights was not "
                                      f"None. per_sample_weights is only supported for "
                                      f"mode='sum' (got mode='{mode}')")
    idx = input.to("cpu").to(_C.int64).numpy()
    w = weight.to("cpu").to(_C.float64).numpy() if renormed is None else renormed
    psw = None if per_sample_weights is None else \
        per_sample_weights.to("cpu").to(_C.float64).numpy().reshape(-1)
    if idx.ndim == 2:
        if offsets is not None:
            raise _C.InvalidArgumentError(f"[{name}] offsets has to be None if input is 2D")
        bags = [(r * idx.shape[1], (r + 1) * idx.shape[1]) for r in range(idx.shape[0])]
        idx = idx.reshape(-1)
    elif idx.ndim == 1:
        if offsets is None:
            raise _C.InvalidArgumentError(f"[{name}] offsets has to be a 1D Tensor but got None")
        off = offsets.to("cpu").to(_C.int64).numpy().reshape(-1).tolist()
        if include_last_offset:
            ends = off[1:]
            off = off[:-1]
        else:
            ends = off[1:] + [len(idx)]
        bags = list(zip(off, ends))
    else:
        raise _C.ShapeError(f"[{name}] input has to be 1D or 2D Tensor, but got Tensor of "
                            f"dimension {idx.ndim}")
    if idx.size and (idx.min() < 0 or idx.max() >= w.shape[0]):
        raise IndexError(f"[{name}] index out of range in self")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += w.shape[0]
    out = np.zeros((len(bags), w.shape[1]))
    for b, (lo, hi) in enumerate(bags):
        rows = [i for i in range(lo, hi) if padding_idx is None or idx[i] != padding_idx]
        if not rows:
            continue
        vals = w[idx[rows]]
        if psw is not None:
            vals = vals * psw[rows][:, None]
        out[b] = vals.max(0) if mode == "max" else (vals.sum(0) if mode == "sum"
                                                     else vals.sum(0) / len(rows))
    return _tensor(out, weight.dtype, weight.device)


def _scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                  need_attn_weights=False, is_causal=False):
    """torch 1.13's private form: (softmax(q k^T / sqrt(E) + mask) v, the attention weights);
    scores, softmax and the product in float64, each output rounded once (dropout_p > 0
    drops weights from mpsim's stream)."""
    scale = 1.0 / float(query.shape[-1]) ** 0.5
    q, k = query.to("cpu").to(_C.float64), key.to("cpu").to(_C.float64)
    scores = _C.mul(_C.matmul(q, k.transpose(-2, -1)), scale)  # in float64
    if is_causal:
        lq, lk = query.shape[-2], key.shape[-2]
        causal = _C.triu(_C.ones([lq, lk], _C.bool, "cpu"), 1)
        scores = _C.where(causal, float("-inf"), scores)
    if attn_mask is not None:
        m = attn_mask.to("cpu")
        scores = _C.where(m, scores, float("-inf")) if m.dtype == _C.bool \
            else _C.add(scores, m.to(_C.float64))
    w64 = _C.softmax(scores, -1, None)
    if dropout_p > 0:  # mpsim's stream (not torch's): the same distribution
        w64 = _C.dropout(w64, dropout_p, True)
    out = _C.matmul(w64, value.to("cpu").to(_C.float64))  # in float64, rounded once
    weights = w64.to(query.dtype).to(query.device)
    return out.to(query.dtype).to(query.device), weights  # torch 1.13 returns them either way


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    """The transposed 3-d convolution (the gradient of conv3d): each input voxel scatters its
    weighted kernel into the output, sums in float64 (NumPy), rounded once."""
    name = "conv_transpose3d"

    def three(v):
        return tuple(v) * (3 if len(v) == 1 else 1) if isinstance(v, (list, tuple)) else (v,) * 3
    s, p, op, d = three(stride), three(padding), three(output_padding), three(dilation)
    batched = input.dim() == 5
    if input.dim() not in (4, 5) or weight.dim() != 5:
        raise _C.ShapeError(f"[{name}] expected input [N, C, D, H, W] (or unbatched) and weight "
                            f"[C, C_out / groups, kD, kH, kW], got {tuple(input.shape)} and "
                            f"{tuple(weight.shape)}")
    x = input.to("cpu").to(_C.float64).numpy()
    if not batched:
        x = x[None]
    w = weight.to("cpu").to(_C.float64).numpy()
    n, cin = x.shape[:2]
    if cin != w.shape[0] or cin % groups:
        raise _C.ShapeError(f"[{name}] input channels {cin} do not match weight "
                            f"{tuple(w.shape)} with groups={groups}")
    cout_g = w.shape[1]
    k = w.shape[2:]
    size_in = x.shape[2:]
    size_out = tuple((L - 1) * ss - 2 * pp + dd * (kk - 1) + oo + 1
                     for L, ss, pp, dd, kk, oo in zip(size_in, s, p, d, k, op))
    full = tuple((L - 1) * ss + dd * (kk - 1) + 1 + oo for L, ss, dd, kk, oo in
                 zip(size_in, s, d, k, op))
    out = np.zeros((n, cout_g * groups) + tuple(max(f, 1) for f in full))
    cin_g = cin // groups
    for g in range(groups):
        xg = x[:, g * cin_g:(g + 1) * cin_g]
        wg = w[g * cin_g:(g + 1) * cin_g]
        for kd in range(k[0]):
            for kh in range(k[1]):
                for kw in range(k[2]):
                    contrib = np.einsum("nidhw,io->nodhw", xg, wg[:, :, kd, kh, kw])
                    sl = tuple(slice(off * dd, off * dd + (L - 1) * ss + 1, ss)
                               for off, dd, L, ss in zip((kd, kh, kw), d, size_in, s))
                    out[(slice(None), slice(g * cout_g, (g + 1) * cout_g)) + sl] += contrib
    crop = tuple(slice(pp, pp + so) for pp, so in zip(p, size_out))
    out = out[(slice(None), slice(None)) + crop]
    if bias is not None:
        out = out + bias.to("cpu").to(_C.float64).numpy().reshape(1, -1, 1, 1, 1)
    return _tensor(out if batched else out[0], input.dtype, input.device)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The connectionist temporal classification loss: -log of the summed probability of every
    alignment of each target (forward recursion in log space, float64); 'mean' divides each by
    its target length first (torch's)."""
    from ._losses import _reduction
    r = _reduction("ctc_loss", None, None, reduction)
    lp = log_probs.to("cpu").to(_C.float64).numpy()
    batched = lp.ndim == 3
    if not batched:
        lp = lp[:, None]
    t_len, nb, _ = lp.shape

    def ints(v):
        if isinstance(v, _C.Tensor):
            return v.to("cpu").to(_C.int64).numpy().reshape(-1)
        return np.asarray(v, np.int64).reshape(-1)
    il, tl = ints(input_lengths), ints(target_lengths)
    tg = targets.to("cpu").to(_C.int64).numpy()
    losses = np.zeros(nb)
    offset = 0
    for b in range(nb):
        if tg.ndim == 2 and batched:
            target = tg[b, :tl[b]]
        elif tg.ndim == 1 and batched:
            target = tg[offset:offset + tl[b]]
            offset += tl[b]
        else:
            target = tg.reshape(-1)[:tl[b]]
        ext = np.full(2 * len(target) + 1, blank)
        ext[1::2] = target
        alpha = np.full(len(ext), -np.inf)
        alpha[0] = lp[0, b, ext[0]]
        if len(ext) > 1:
            alpha[1] = lp[0, b, ext[1]]
        for t in range(1, il[b]):
            prev = alpha.copy()
            shifted1 = np.concatenate([[-np.inf], prev[:-1]])
            shifted2 = np.concatenate([[-np.inf, -np.inf], prev[:-2]])
            allow = np.zeros(len(ext), bool)
            allow[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
            stack = np.stack([prev, shifted1, np.where(allow, shifted2, -np.inf)])
            m = np.max(stack, 0)
            with np.errstate(invalid="ignore", divide="ignore"):
                total = m + np.log(np.sum(np.exp(stack - np.where(np.isinf(m), 0, m)), 0))
            alpha = np.where(np.isinf(m) & (m < 0), -np.inf, total) + lp[t, b, ext]
        ends = alpha[-2:] if len(ext) > 1 else alpha[-1:]
        m = np.max(ends)
        ll = -np.inf if np.isinf(m) else m + np.log(np.sum(np.exp(ends - m)))
        losses[b] = -ll
    if zero_infinity:
        losses = np.where(np.isinf(losses), 0.0, losses)
    if r == "mean":
        value = np.mean(losses / np.maximum(tl, 1))
    elif r == "sum":
        value = np.sum(losses)
    else:
        value = losses if batched else losses[0]
    return _tensor(np.asarray(value), log_probs.dtype, log_probs.device)

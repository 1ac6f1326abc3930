"""torch.nn.functional's losses and distances as compositions of mpsim's ops evaluated in
float64 on the cpu and rounded once into the input's dtype (and moved back to its device): each
result is within half an ulp of the double evaluation, which carries the formula's own double
rounding (a few 2^-53 relative, far below float32's). Reductions ('mean', 'sum') are mpsim's
golden sums over the float64 values. docs/ops.md, "Losses and distances"."""

import math

from .. import _C, _forms

_F64 = _C.float64


def _wide(t):
    """t as a float64 cpu tensor (a number stays a number)."""
    if isinstance(t, _C.Tensor):
        return t.to("cpu").to(_F64)
    return t


def _rsub(t, c):
    """c - t, one rounding."""
    return _C.add(_C.neg(t), c)


def _back(r, like):
    return r.to(like.dtype).to(like.device)


def _back_floating(r, like):
    """r in like's dtype, or float32 (torch's default) where like is an integer or bool tensor
    whose formula brings in floating values (torch promotes them so)."""
    dtype = like.dtype if like.dtype.is_floating_point else _C.float32
    return r.to(dtype).to(like.device)


def _reduction(name, size_average, reduce, reduction):
    """torch's legacy size_average/reduce folded into reduction ('none', 'mean', 'sum')."""
    if size_average is not None or reduce is not None:
        size_average = True if size_average is None else size_average
        reduce = True if reduce is None else reduce
        reduction = ("mean" if size_average else "sum") if reduce else "none"
    if reduction not in ("none", "mean", "sum"):
        raise _C.InvalidArgumentError(f"[{name}] {reduction!r} is not a valid value for "
                                      "reduction (expected 'none', 'mean' or 'sum')")
    return reduction


def _reduce(loss, reduction):
    if reduction == "mean":
        return _C.mean(loss)
    if reduction == "sum":
        return _C.sum(loss)
    return loss


def _check_float(name, *tensors):
    for t in tensors:
        if isinstance(t, _C.Tensor) and not t.dtype.is_floating_point:
            raise _C.DTypeError(f"[{name}] expected a floating point tensor, got {t.dtype}")


def _same_shape(name, input, target):
    if tuple(input.shape) != tuple(target.shape):
        raise _C.ShapeError(f"[{name}] target shape {tuple(target.shape)} must match input "
                            f"shape {tuple(input.shape)}")


def _pointwise(name, input, target, reduction, formula, broadcast=True):
    _check_float(name, input, target)
    if not broadcast:
        _same_shape(name, input, target)
    x, t = _wide(input), _wide(target)
    return _back(_reduce(formula(x, t), reduction), input)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """|input - target|, reduced."""
    r = _reduction("l1_loss", size_average, reduce, reduction)
    return _pointwise("l1_loss", input, target, r, lambda x, t: _C.abs(_C.sub(x, t)))


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """(input - target)^2, reduced."""
    r = _reduction("mse_loss", size_average, reduce, reduction)
    return _pointwise("mse_loss", input, target, r, lambda x, t: _C.square(_C.sub(x, t)))


def _huber(d, delta, scale):
    a = _C.abs(d)
    quadratic = _C.mul(_C.square(d), 0.5 * scale)
    linear = _C.mul(_C.sub(a, 0.5 * delta), delta * scale)
    return _C.where(_C.lt(a, delta), quadratic, linear)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (beta 0: |d|)."""
    r = _reduction("smooth_l1_loss", size_average, reduce, reduction)
    if beta < 0:
        raise _C.InvalidArgumentError("[smooth_l1_loss] beta must be non-negative")
    if beta == 0:
        return l1_loss(input, target, reduction=r)
    return _pointwise("smooth_l1_loss", input, target, r,
                      lambda x, t: _huber(_C.sub(x, t), beta, 1.0 / beta))


def huber_loss(input, target, reduction="mean", delta=1.0):
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta)."""
    r = _reduction("huber_loss", None, None, reduction)
    if delta <= 0:
        raise _C.InvalidArgumentError("[huber_loss] delta must be positive")
    return _pointwise("huber_loss", input, target, r,
                      lambda x, t: _C.mul(_huber(_C.sub(x, t), delta, 1.0 / delta), delta))


def _weighted(loss, weight):
    return loss if weight is None else _C.mul(loss, _wide(weight))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-w (t log x + (1 - t) log(1 - x)), each log clamped at -100 (torch's)."""
    r = _reduction("binary_cross_entropy", size_average, reduce, reduction)
    _check_float("binary_cross_entropy", input, target)
    _same_shape("binary_cross_entropy", input, target)
    x, t = _wide(input), _wide(target)
    if bool(_forms.any(_C.logical_or(_C.lt(x, 0.0), _C.gt(x, 1.0))).item()):
        raise _C.InvalidArgumentError(
            "[binary_cross_entropy] all elements of input should be between 0 and 1")
    log_x = _C.clamp(_C.log(x), -100.0, None)
    log_1x = _C.clamp(_C.log1p(_C.neg(x)), -100.0, None)
    loss = _C.neg(_C.add(_C.mul(t, log_x), _C.mul(_rsub(t, 1.0), log_1x)))
    return _back(_reduce(_weighted(loss, weight), r), input)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """(1 - t) x + (1 + (pw - 1) t) (log(1 + e^-|x|) + max(-x, 0)), times w (torch's form)."""
    r = _reduction("binary_cross_entropy_with_logits", size_average, reduce, reduction)
    _check_float("binary_cross_entropy_with_logits", input, target)
    _same_shape("binary_cross_entropy_with_logits", input, target)
    x, t = _wide(input), _wide(target)
    soft = _C.add(_C.log1p(_C.exp(_C.neg(_C.abs(x)))), _C.clamp(_C.neg(x), 0.0, None))
    if pos_weight is not None:
        lw = _C.add(_C.mul(_C.sub(_wide(pos_weight), 1.0), t), 1.0)
        soft = _C.mul(lw, soft)
    loss = _C.add(_C.mul(_rsub(t, 1.0), x), soft)
    return _back(_reduce(_weighted(loss, weight), r), input)


def _class_dim_last(x):
    """[N, C, d1, ...] -> [N, d1, ..., C]; [C] -> [1, C]."""
    if x.dim() == 1:
        return x.unsqueeze(0)
    return _C.movedim(x, 1, -1)


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """-w[t] input[t] per element (input of log-probabilities [N, C, ...] or [C]); 'mean'
    divides by the sum of the weights of the targets not ignored."""
    r = _reduction("nll_loss", size_average, reduce, reduction)
    _check_float("nll_loss", input)
    if target.dtype.is_floating_point:
        raise _C.DTypeError("[nll_loss] expected target of an integer dtype (class indices)")
    if input.dim() < 1:
        raise _C.ShapeError("[nll_loss] input must have at least one dimension")
    batch = () if input.dim() == 1 else (input.shape[0],) + tuple(input.shape[2:])
    if tuple(target.shape) != batch:
        raise _C.ShapeError(f"[nll_loss] expected target of shape {batch}, got "
                            f"{tuple(target.shape)}")
    classes = input.shape[0] if input.dim() == 1 else input.shape[1]
    x = _class_dim_last(_wide(input))
    t = target.to("cpu").to(_C.int64).reshape(list(x.shape[:-1]))
    ignored = _C.eq(t, ignore_index)
    safe = _C.where(ignored, 0, t)
    if bool(_forms.any(_C.logical_or(_C.lt(safe, 0), _C.ge(safe, classes))).item()):
        raise IndexError(f"[nll_loss] Target out of bounds: expected class indices in "
                         f"[0, {classes})")
    picked = _C.gather(x, -1, safe.unsqueeze(-1)).squeeze(-1)
    w = _C.ones([classes], _F64) if weight is None else _wide(weight)
    wt = _C.where(ignored, 0.0, _C.index_select(w, 0, safe.reshape([-1])).reshape(
        list(safe.shape)))
    loss = _C.neg(_C.mul(picked, wt))
    if input.dim() == 1:
        loss, wt = loss.squeeze(0), wt.squeeze(0)
    if r == "mean":
        return _back(_C.div(_C.sum(loss), _C.sum(wt)), input)
    return _back(_reduce(loss, r), input)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """nll_loss of log_softmax over the class dim (class indices), or -sum t log_softmax
    (class probabilities), with torch's label smoothing; in float64."""
    r = _reduction("cross_entropy", size_average, reduce, reduction)
    _check_float("cross_entropy", input)
    if not 0.0 <= label_smoothing <= 1.0:
        raise _C.InvalidArgumentError("[cross_entropy] label_smoothing must be in [0, 1]")
    class_dim = 0 if input.dim() == 1 else 1
    classes = input.shape[class_dim]
    logp = _C.log_softmax(_wide(input), class_dim)
    w = None if weight is None else _wide(weight)
    if target.dtype.is_floating_point:  # class probabilities
        _same_shape("cross_entropy", input, target)
        t = _wide(target)
        if label_smoothing > 0:
            t = _C.add(_C.mul(t, 1.0 - label_smoothing), label_smoothing / classes)
        terms = _C.mul(logp, t)
        if w is not None:
            shape = [1] * input.dim()
            shape[class_dim] = classes
            terms = _C.mul(terms, w.reshape(shape))
        loss = _C.neg(_C.sum(terms, [class_dim]))
        if r == "mean":
            n = 1 if input.dim() == 1 else input.numel() // classes
            return _back(_C.div(_C.sum(loss), float(n)), input)
        return _back(_reduce(loss, r), input)
    nll = nll_loss(logp, target, w, ignore_index=ignore_index, reduction=r)
    if label_smoothing == 0:
        return _back(nll, input)
    # torch: (1 - eps) nll + eps / C * smooth, smooth = -sum_c w_c logp_c (ignored: 0)
    t = target.to("cpu").to(_C.int64)
    ignored = _C.eq(t, ignore_index)
    terms = logp if w is None else _C.mul(
        logp, w.reshape([classes] + [1] * (input.dim() - 2)) if input.dim() > 1 else w)
    smooth = _C.neg(_C.sum(terms, [class_dim]))
    smooth = _C.where(ignored, 0.0, smooth)
    if r == "mean":
        if w is None:
            denom = float(t.numel() - int(_C.sum(ignored.to(_C.int64)).item()))
        else:
            safe = _C.where(ignored, 0, t)
            denom = _C.sum(_C.where(ignored, 0.0, _C.index_select(w, 0, safe.reshape([-1]))
                                    .reshape(list(safe.shape))))
        smooth = _C.div(_C.sum(smooth), denom)
    else:
        smooth = _reduce(smooth, r)
    nll64 = nll_loss(logp, target, w, ignore_index=ignore_index, reduction=r)
    out = _C.add(_C.mul(nll64, 1.0 - label_smoothing),
                 _C.mul(smooth, label_smoothing / classes))
    return _back(out, input)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    """target (log target - input) (0 where target is 0), or e^target (target - input) with
    log_target; 'batchmean' divides the sum by the first dim's size."""
    if reduction == "batchmean":
        r = "sum"
    else:
        r = _reduction("kl_div", size_average, reduce, reduction)
    _check_float("kl_div", input, target)
    x, t = _wide(input), _wide(target)
    if log_target:
        loss = _C.mul(_C.exp(t), _C.sub(t, x))
    else:
        loss = _C.sub(_C.xlogy(t, t), _C.mul(t, x))
    out = _reduce(loss, r)
    if reduction == "batchmean" and input.dim() > 0:
        out = _C.div(out, float(input.shape[0]))
    return _back(out, input)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """e^x - t x (log_input) or x - t log(x + eps); full adds Stirling's t log t - t +
    log(2 pi t) / 2 where t > 1."""
    r = _reduction("poisson_nll_loss", size_average, reduce, reduction)
    x, t = _wide(input), _wide(target)
    if log_input:
        loss = _C.sub(_C.exp(x), _C.mul(t, x))
    else:
        loss = _C.sub(x, _C.mul(t, _C.log(_C.add(x, eps))))
    if full:
        stirling = _C.add(_C.sub(_C.mul(t, _C.log(t)), t),
                          _C.mul(_C.log(_C.mul(t, 2 * math.pi)), 0.5))
        loss = _C.add(loss, _C.where(_C.gt(t, 1.0), stirling, 0.0))
    return _back_floating(_reduce(loss, r), input)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """(log max(var, eps) + (input - target)^2 / max(var, eps)) / 2 (+ log(2 pi) / 2 with
    full); var may lack the last dim or have it of size 1 (torch's)."""
    r = _reduction("gaussian_nll_loss", None, None, reduction)
    _check_float("gaussian_nll_loss", input, target, var)
    v = var
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            v = var.unsqueeze(-1)
        elif tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1:
            v = var
        else:
            raise _C.ShapeError("[gaussian_nll_loss] var is of incorrect size")
    x, t, v = _wide(input), _wide(target), _wide(v)
    if bool(_forms.any(_C.lt(v, 0.0)).item()):
        raise _C.InvalidArgumentError("[gaussian_nll_loss] var has negative entry/entries")
    v = _C.clamp(v, eps, None)
    loss = _C.mul(_C.add(_C.log(v), _C.div(_C.square(_C.sub(x, t)), v)), 0.5)
    if full:
        loss = _C.add(loss, 0.5 * math.log(2 * math.pi))
    return _back(_reduce(loss, r), input)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """x where target is 1, max(0, margin - x) where target is -1 (torch's sum of both)."""
    r = _reduction("hinge_embedding_loss", size_average, reduce, reduction)
    x, t = _wide(input), _wide(target)
    hinge = _C.where(_C.ne(t, 1.0), _C.clamp(_rsub(x, margin), 0.0, None), 0.0)
    same = _C.where(_C.ne(t, -1.0), x, 0.0)
    return _back(_reduce(_C.add(hinge, same), r), input)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -target (input1 - input2) + margin)."""
    r = _reduction("margin_ranking_loss", size_average, reduce, reduction)
    if input1.dim() != input2.dim() or input1.dim() != target.dim():
        raise _C.ShapeError("[margin_ranking_loss] input1, input2 and target must have the "
                            "same number of dimensions")
    a, b, t = _wide(input1), _wide(input2), _wide(target)
    loss = _C.clamp(_C.add(_C.neg(_C.mul(t, _C.sub(a, b))), margin), 0.0, None)
    return _back_floating(_reduce(loss, r), input1)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + e^(-target input))."""
    r = _reduction("soft_margin_loss", size_average, reduce, reduction)
    return _pointwise("soft_margin_loss", input, target, r,
                      lambda x, t: _softplus(_C.neg(_C.mul(t, x))), False)


def _softplus(z):
    """log(1 + e^z) = max(z, 0) + log1p(e^-|z|), without overflow."""
    return _C.add(_C.clamp(z, 0.0, None), _C.log1p(_C.exp(_C.neg(_C.abs(z)))))


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """-(t logsigmoid(x) + (1 - t) logsigmoid(-x)) w, averaged over the classes (last dim)."""
    r = _reduction("multilabel_soft_margin_loss", size_average, reduce, reduction)
    x, t = _wide(input), _wide(target)
    loss = _C.neg(_C.add(_C.mul(t, _C.logsigmoid(x)),
                         _C.mul(_rsub(t, 1.0), _C.logsigmoid(_C.neg(x)))))
    loss = _weighted(loss, weight)
    loss = _C.mean(loss, [-1]) if input.dim() > 0 else loss
    return _back(_reduce(loss, r), input)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """(x1 / max(|x1|, eps)) . (x2 / max(|x2|, eps)) along dim (broadcast; torch 1.13's
    form), in float64."""
    _check_float("cosine_similarity", x1, x2)
    shape = _broadcast_shape(x1, x2)
    a, b = _wide(x1).broadcast_to(shape), _wide(x2).broadcast_to(shape)
    na = _C.clamp(_C.sqrt(_C.sum(_C.square(a), [dim])), eps, None)
    nb = _C.clamp(_C.sqrt(_C.sum(_C.square(b), [dim])), eps, None)
    return _back(_C.div(_C.sum(_C.mul(a, b), [dim]), _C.mul(na, nb)), x1)


def _broadcast_shape(*ts):
    import numpy as np
    return list(np.broadcast_shapes(*(tuple(t.shape) for t in ts)))


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos where target is 1, max(0, cos - margin) where target is -1 (cos over the last
    dim, with torch's 1e-12 guard)."""
    r = _reduction("cosine_embedding_loss", size_average, reduce, reduction)
    a, b, t = _wide(input1), _wide(input2), _wide(target)
    dim = a.dim() - 1
    dot = _C.sum(_C.mul(a, b), [dim])
    m1 = _C.add(_C.sum(_C.square(a), [dim]), 1e-12)
    m2 = _C.add(_C.sum(_C.square(b), [dim]), 1e-12)
    cos = _C.div(dot, _C.sqrt(_C.mul(m1, m2)))
    pos = _C.where(_C.eq(t, 1.0), _rsub(cos, 1.0), 0.0)
    neg = _C.where(_C.eq(t, -1.0), _C.clamp(_C.sub(cos, margin), 0.0, None), 0.0)
    return _back_floating(_reduce(_C.add(pos, neg), r), input1)


def _pnorm(d, p, dim, keepdim):
    a = _C.abs(d)
    if p == float("inf"):
        return _C.amax(a, [dim], keepdim)
    if p == 0:
        return _C.sum(_C.ne(a, 0.0).to(_F64), [dim], keepdim)
    if p == 1:
        return _C.sum(a, [dim], keepdim)
    return _C.pow(_C.sum(_C.pow(a, float(p)), [dim], keepdim), 1.0 / p)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """|x1 - x2 + eps|_p over the last dim (torch's eps inside)."""
    a, b = _wide(x1), _wide(x2)
    d = _C.add(_C.sub(a, b), eps)
    dim = max(x1.dim(), x2.dim()) - 1
    if dim < 0:
        return _back_floating(_C.abs(d), x1)
    return _back_floating(_pnorm(d, p, -1, keepdim), x1)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with pairwise_distance (swap: the smaller of d(a, n)
    and d(p, n))."""
    r = _reduction("triplet_margin_loss", size_average, reduce, reduction)
    a, pos, neg = _wide(anchor), _wide(positive), _wide(negative)
    d_ap = _pnorm(_C.add(_C.sub(a, pos), eps), p, -1, False)
    d_an = _pnorm(_C.add(_C.sub(a, neg), eps), p, -1, False)
    if swap:
        d_an = _C.minimum(d_an, _pnorm(_C.add(_C.sub(pos, neg), eps), p, -1, False))
    loss = _C.clamp(_C.add(_C.sub(d_ap, d_an), margin), 0.0, None)
    return _back_floating(_reduce(loss, r), anchor)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) with distance_function (None: pairwise_distance)."""
    r = _reduction("triplet_margin_with_distance_loss", None, None, reduction)
    dist = distance_function
    p_, eps_ = 2.0, 1e-6
    if dist is not None and type(dist).__name__ == "PairwiseDistance" and \
            all(hasattr(dist, a) for a in ("norm", "eps")):  # torch.nn.PairwiseDistance's p, eps
        p_, eps_, dist = float(dist.norm), float(dist.eps), None
    if dist is None:  # pairwise distances in float64: one rounding of the loss
        a, pos, neg = _wide(anchor), _wide(positive), _wide(negative)

        def dist(x, y):
            return _pnorm(_C.add(_C.sub(x, y), eps_), p_, -1, False)
        anchor_out = anchor
        anchor, positive, negative = a, pos, neg
    else:
        anchor_out = anchor
    d_ap, d_an = dist(anchor, positive), dist(anchor, negative)
    if swap:
        d_an = _C.minimum(d_an, dist(positive, negative))
    loss = _C.clamp(_C.add(_C.sub(_wide(d_ap), _wide(d_an)), margin), 0.0, None)
    return _back_floating(_reduce(loss, r), anchor_out)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """sum over j != y of max(0, margin - x_y + x_j)^p w_y, divided by the class count."""
    r = _reduction("multi_margin_loss", size_average, reduce, reduction)
    if p not in (1, 2):
        raise _C.InvalidArgumentError("[multi_margin_loss] only p == 1 and p == 2 supported")
    x = _wide(input)
    x2 = x.reshape([1, -1]) if x.dim() <= 1 else x
    n, c = x2.shape
    y = target.to("cpu").to(_C.int64).reshape([n, 1])
    if bool(_forms.any(_C.logical_or(_C.lt(y, 0), _C.ge(y, c))).item()):
        raise IndexError(f"[multi_margin_loss] target out of range [0, {c})")
    xy = _C.gather(x2, 1, y)
    z = _C.clamp(_C.add(_C.sub(x2, xy), margin), 0.0, None)
    if p == 2:
        z = _C.square(z)
    if weight is not None:
        z = _C.mul(z, _C.index_select(_wide(weight), 0, y.reshape([-1])).reshape([n, 1]))
    own = _C.eq(_C.arange(c).reshape([1, c]), y)
    loss = _C.div(_C.sum(_C.where(own, 0.0, z), [1]), float(c))
    if x.dim() <= 1:
        loss = loss.reshape([])
    return _back(_reduce(loss, r), input)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """sum over targets j (up to the first -1) and non-targets i of max(0, 1 - (x_j - x_i)),
    divided by the class count."""
    r = _reduction("multilabel_margin_loss", size_average, reduce, reduction)
    x = _wide(input)
    x2 = x.reshape([1, -1]) if x.dim() <= 1 else x
    n, c = x2.shape
    t = target.to("cpu").to(_C.int64).reshape([n, c]).numpy()
    xs = x2.numpy()
    import numpy as np
    out = np.zeros(n)
    for row in range(n):
        targets = []
        for v in t[row]:
            if v < 0:
                break
            targets.append(int(v))
        is_target = np.zeros(c, bool)
        is_target[targets] = True
        for j in targets:
            out[row] += np.sum(np.maximum(0.0, 1.0 - (xs[row, j] - xs[row, ~is_target])))
    from .. import tensor as _tensor
    loss = _tensor(out / c, dtype=_F64)
    if x.dim() <= 1:
        loss = loss.reshape([])
    return _back(_reduce(loss, r), input)


def pdist(input, p=2):
    """The p-norm distances of every pair of rows i < j, in row-major order of the pairs."""
    if input.dim() != 2:
        raise _C.ShapeError(f"[pdist] expected a 2-d input, got {input.dim()}-d")
    n = input.shape[0]
    x = _wide(input)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    if not pairs:
        return _back(_C.zeros([0], _F64), input)
    from .. import tensor as _tensor
    ii = _tensor([i for i, _ in pairs], dtype=_C.int64)
    jj = _tensor([j for _, j in pairs], dtype=_C.int64)
    d = _C.sub(_C.index_select(x, 0, ii), _C.index_select(x, 0, jj))
    return _back(_pnorm(d, p, -1, False), input)


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance of every row of x1 to every row of x2 (batched), computed directly in
    float64 (compute_mode's matmul shortcut is not taken: it loses accuracy)."""
    _check_float("cdist", x1, x2)
    if x1.dim() < 2 or x2.dim() < 2 or x1.shape[-1] != x2.shape[-1]:
        raise _C.ShapeError("[cdist] expected inputs [*, P, M] and [*, R, M] with one M")
    if p < 0:
        raise _C.InvalidArgumentError("[cdist] p should be non-negative")
    a = _wide(x1).unsqueeze(-2)  # [*, P, 1, M]
    b = _wide(x2).unsqueeze(-3)  # [*, 1, R, M]
    return _back(_pnorm(_C.sub(a, b), p, -1, False), x1)

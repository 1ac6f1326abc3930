"""mpsim.nn.functional: torch.nn.functional's functions with its signatures (inplace= and
the other arguments torch takes), each an op of mpsim or a composition stated below
(docs/ops.md). inplace=True writes the result into the input and returns the input."""

from .. import _C


def _inplace(input, out, inplace):
    if inplace:
        input.copy_(out)
        return input
    return out


def relu(input, inplace=False):
    return _inplace(input, _C.relu(input), inplace)


def relu6(input, inplace=False):
    return _inplace(input, _C.relu6(input), inplace)


def elu(input, alpha=1.0, inplace=False):
    return _inplace(input, _C.elu(input, alpha), inplace)


def selu(input, inplace=False):
    return _inplace(input, _C.selu(input), inplace)


def celu(input, alpha=1.0, inplace=False):
    return _inplace(input, _C.celu(input, alpha), inplace)


def silu(input, inplace=False):
    return _inplace(input, _C.silu(input), inplace)


def mish(input, inplace=False):
    return _inplace(input, _C.mish(input), inplace)


def hardsigmoid(input, inplace=False):
    return _inplace(input, _C.hardsigmoid(input), inplace)


def hardswish(input, inplace=False):
    return _inplace(input, _C.hardswish(input), inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _inplace(input, _C.hardtanh(input, min_val, max_val), inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _inplace(input, _C.leaky_relu(input, negative_slope), inplace)


def threshold(input, threshold, value, inplace=False):
    return _inplace(input, _C.threshold(input, threshold, value), inplace)


def dropout(input, p=0.5, training=True, inplace=False):
    return _inplace(input, _C.dropout(input, p, training), inplace)


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
    """a * sigmoid(b) for the two halves of dim: sigmoid's bound, then one rounding."""
    a, b = _C.chunk(input, 2, dim)
    return _C.mul(a, _C.sigmoid(b))


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """input / max(norm(input, p, dim), eps): norm's bound, then one rounding."""
    if out is not None:
        raise _C.UnsupportedError("[normalize] out= is not supported")
    n = _C.clamp_min(_C.norm(input, p, [dim], True), eps)
    return _C.div(input, n)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    return _C.layer_norm(input, list(normalized_shape), weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    return _C.group_norm(input, num_groups, weight, bias, eps)


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    return _C.batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps)


def linear(input, weight, bias=None):
    return _C.linear(input, weight, bias)


def _pair(v):
    return list(v) if isinstance(v, (list, tuple)) else [v]


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    padding = padding if isinstance(padding, str) else _pair(padding)
    return _C.conv2d(input, weight, bias, _pair(stride), padding, _pair(dilation), groups)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _C.conv_transpose2d(input, weight, bias, _pair(stride), _pair(padding),
                               _pair(output_padding), groups, _pair(dilation))


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    return _C.avg_pool2d(input, _pair(kernel_size), _pair(stride) if stride else None,
                         _pair(padding), ceil_mode, count_include_pad, divisor_override)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    return _C.max_pool2d(input, _pair(kernel_size), _pair(stride) if stride else None,
                         _pair(padding), _pair(dilation), ceil_mode, return_indices)


def adaptive_avg_pool2d(input, output_size):
    return _C.adaptive_avg_pool2d(input, _pair(output_size))


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    if antialias:
        raise _C.UnsupportedError("[interpolate] antialias=True is not supported")
    return _C.interpolate(input, size, scale_factor, mode, align_corners)


def pad(input, pad, mode="constant", value=None):
    return _C.pad(input, list(pad), mode, value)


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None):
    return _C.scaled_dot_product_attention(query, key, value, attn_mask, dropout_p, is_causal,
                                           scale)


__all__ = [n for n in dir() if not n.startswith("_")]

"""mpsim: a golden-reference tensor library with a simulated Apple GPU ("mps") device.

Ops carry torch's names and keyword arguments (mpsim.softmax(x, dim=-1), mpsim.layer_norm(...));
they are generated from mpsim's op registry. See docs/python.md.
"""

import ctypes as _ctypes
import os as _os
import sys as _sys

_PACKAGED_LIBRARY = _os.path.join(_os.path.dirname(__file__), ".libs", "libmpsim.so.0")
if _os.path.exists(_PACKAGED_LIBRARY):  # a pip install: the library travels in the package
    _ctypes.CDLL(_PACKAGED_LIBRARY, mode=_ctypes.RTLD_GLOBAL)

from . import _C  # noqa: E402
from ._C import (  # noqa: F401  (re-exports)
    Tensor,
    as_tensor,
    bfloat16,
    cdouble,
    cfloat,
    chalf,
    complex32,
    complex64,
    complex128,
    bool,
    device,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    from_dlpack,
    from_numpy,
    get_num_threads,
    get_precision,
    half,
    initial_seed,
    int,
    int8,
    int16,
    int32,
    int64,
    char,
    short,
    long,
    manual_seed,
    precision,
    set_fallback_enabled,
    fallback_enabled,
    fallback_count,
    set_num_threads,
    set_precision,
    tensor,
    uint8,
    Error,
    ShapeError,
    InvalidArgumentError,
    SignatureError,
    DTypeError,
    OutOfMemoryError,
    UnsupportedError,
    DeviceError,
)

# Every op of the registry: a module function, and a Tensor method when its first argument is
# a tensor (x.softmax(-1)); hand-written methods of the same name (x.reshape, x.to) stay.
ops = tuple(sig["name"] for sig in _C._signatures)


def _method(function):
    def method(self, *args, **kwargs):
        return function(self, *args, **kwargs)

    method.__name__ = function.__name__
    method.__doc__ = function.__doc__
    return method


for _sig in _C._signatures:
    _name = _sig["name"]
    globals()[_name] = getattr(_C, _name)
    if _sig["args"] and _sig["args"][0][1] == "Tensor" and not hasattr(Tensor, _name) and \
            not _name.startswith(("special_", "linalg_")):  # torch has no such methods
        setattr(Tensor, _name, _method(getattr(_C, _name)))
if "matmul" in ops:
    Tensor.__matmul__ = _method(getattr(_C, "matmul"))
    Tensor.__rmatmul__ = lambda self, other: getattr(_C, "matmul")(other, self)
del _sig, _name


from ._forms import *  # noqa: E402,F401,F403 (torch's call forms: max(x, dim), var(x, unbiased))
from . import _forms  # noqa: E402

for _name in _forms._METHODS:
    setattr(Tensor, _name, _method(getattr(_forms, _name)) if _name[:4] != "new_" else
            getattr(_forms, _name))

from ._compositions import *  # noqa: E402,F401,F403 (compositions in float64: addcmul, lerp, ...)
from . import _compositions  # noqa: E402

for _name in _compositions._METHODS:
    if not hasattr(Tensor, _name):
        setattr(Tensor, _name, _method(getattr(_compositions, _name)))
del _name

# torch's aliases and operators that are other ops of mpsim
def true_divide(input, other):
    """div (torch.true_divide is its alias)."""
    return div(input, other)  # noqa: F821 (an op of the registry)


def floor_divide(input, other):
    """div with rounding_mode='floor' (torch 1.13's floor_divide)."""
    return div(input, other, rounding_mode="floor")  # noqa: F821


def rsub(input, other, alpha=1):
    """other - alpha * input."""
    if isinstance(other, Tensor):
        return sub(other, input, alpha=alpha)  # noqa: F821
    return add(mul(input, -alpha), other)  # noqa: F821


def _varargs(op):
    """torch's form f(*tensors) (or f(sequence)) of an op that takes a tensor list."""
    def call(*tensors, **kwargs):
        if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
            tensors = tuple(tensors[0])
        return op(list(tensors), **kwargs)
    call.__name__, call.__doc__ = op.__name__, op.__doc__
    return call


def _each(op):
    """torch's atleast_Nd: one tensor gives one tensor, several (or a sequence) a tuple."""
    def call(*tensors):
        if len(tensors) == 1 and not isinstance(tensors[0], (list, tuple)):
            return op(tensors[0])
        if len(tensors) == 1:
            tensors = tuple(tensors[0])
        return tuple(op(t) for t in tensors)
    call.__name__, call.__doc__ = op.__name__, op.__doc__
    return call


meshgrid = _varargs(meshgrid)  # noqa: F821
block_diag = _varargs(block_diag)  # noqa: F821
cartesian_prod = _varargs(cartesian_prod)  # noqa: F821
atleast_1d = _each(atleast_1d)  # noqa: F821
atleast_2d = _each(atleast_2d)  # noqa: F821
atleast_3d = _each(atleast_3d)  # noqa: F821


def _operand(other):
    return other if isinstance(other, Tensor) else tensor(other)


Tensor.__rdiv__ = Tensor.__rtruediv__
Tensor.__mod__ = lambda self, other: remainder(self, other)  # noqa: F821
Tensor.__rmod__ = lambda self, other: remainder(_operand(other), self)  # noqa: F821
Tensor.__floordiv__ = lambda self, other: floor_divide(self, other)
Tensor.__rfloordiv__ = lambda self, other: floor_divide(_operand(other), self)
Tensor.true_divide = true_divide
Tensor.floor_divide = floor_divide
def _matrix_transpose(name):
    def swap(self):
        if self.dim() == 0:
            return self
        if self.dim() < 2:
            raise InvalidArgumentError(f"[{name}] tensor.{name} is only supported on matrices or "
                                       f"batches of matrices. Got {self.dim()}-D tensor.")
        return self.transpose(-2, -1)
    return swap


Tensor.mT = property(_matrix_transpose("mT"), doc="the last two dims swapped")
Tensor.mH = property(_matrix_transpose("mH"),
                     doc="the last two dims swapped (the conjugate of a real tensor is itself)")
Tensor.H = property(lambda self: self.t() if self.dim() == 2 else _invalid_H(self),
                    doc="the transpose of a 2-d tensor (conjugated: itself for real dtypes)")


def _invalid_H(t):
    if t.dim() == 0:
        return t
    raise InvalidArgumentError(f"[H] tensor.H is only supported on matrices (2-D tensors). Got "
                               f"{t.dim()}-D tensor.")

from . import alloc, fft, linalg, masked, mps, nn, special, testing  # noqa: E402,F401

for _name in ("cdist", "pdist", "cosine_similarity", "pairwise_distance", "bilinear",
              "pixel_shuffle", "pixel_unshuffle", "prelu", "instance_norm", "kl_div",
              "binary_cross_entropy_with_logits", "cosine_embedding_loss",
              "hinge_embedding_loss", "margin_ranking_loss", "poisson_nll_loss",
              "triplet_margin_loss", "rrelu", "feature_alpha_dropout"):
    globals()[_name] = getattr(nn.functional, _name)  # torch has these at module level too

polygamma = special.polygamma
stft = fft.stft
istft = fft.istft
Tensor.stft = _method(fft.stft)
Tensor.istft = _method(fft.istft)
# torch's complex-part properties and conversions
Tensor.real = property(lambda self: _C.real(self))
Tensor.imag = property(lambda self: _C.imag(self))
for _name, _dtype in (("chalf", _C.complex32), ("cfloat", _C.complex64),
                      ("cdouble", _C.complex128)):
    setattr(Tensor, _name, lambda self, memory_format=None, _d=_dtype: self.to(_d))

for _name, _fn in linalg.TORCH_LEVEL.items():  # named tuples, as torch's return types
    globals()[_name] = _fn
    if _name != "lu_unpack":
        setattr(Tensor, _name, _method(_fn))
del _name, _fn

__all__ = [n for n in globals() if not n.startswith("_")]

from . import _integer_products  # noqa: E402 (matmul, addmm, einsum, ... of integer tensors)

_integer_products.install(_sys.modules[__name__], Tensor)

from . import _tensor_api  # noqa: E402 (in-place variants, bitwise operators, indexing, ...)

_tensor_api.install(Tensor)
from ._tensor_api import (  # noqa: E402,F401
    bitwise_and, bitwise_left_shift, bitwise_not, bitwise_or, bitwise_right_shift, bitwise_xor,
    gcd, lcm)

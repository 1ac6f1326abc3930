"""mpsim: a golden-reference tensor library with a simulated Apple GPU ("mps") device.

Ops carry torch's names and keyword arguments (mpsim.softmax(x, dim=-1), mpsim.layer_norm(...));
they are generated from mpsim's op registry. See docs/python.md.
"""

import ctypes as _ctypes
import os as _os

_PACKAGED_LIBRARY = _os.path.join(_os.path.dirname(__file__), ".libs", "libmpsim.so.0")
if _os.path.exists(_PACKAGED_LIBRARY):  # a pip install: the library travels in the package
    _ctypes.CDLL(_PACKAGED_LIBRARY, mode=_ctypes.RTLD_GLOBAL)

from . import _C  # noqa: E402
from ._C import (  # noqa: F401  (re-exports)
    Tensor,
    as_tensor,
    bfloat16,
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
    int32,
    int64,
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
            not _name.startswith("special_"):  # torch has no such methods
        setattr(Tensor, _name, _method(getattr(_C, _name)))
if "matmul" in ops:
    Tensor.__matmul__ = _method(getattr(_C, "matmul"))
    Tensor.__rmatmul__ = lambda self, other: getattr(_C, "matmul")(other, self)
del _sig, _name

from . import alloc, mps, nn, special, testing  # noqa: E402,F401

__all__ = [n for n in globals() if not n.startswith("_")]

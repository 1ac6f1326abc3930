"""out= and the in-place methods write an elementwise op's result straight into the given tensor
(Note [out destination], core/ops.cc): every unary and binary op of the registry, in place and
with out=, gives the bits of its out-of-place result, whatever the overlap of out with the
inputs, its layout, dtype or device."""

import numpy as np
import pytest

import mpsim
from mpsim import _C

SIGNATURES = {s["name"]: s for s in _C._signatures}


def _defaulted(args):
    return all(a[2] for a in args)


UNARY = sorted(n for n, s in SIGNATURES.items()
               if s["args"] and s["args"][0][1] == "Tensor" and _defaulted(s["args"][1:]))
BINARY = sorted(n for n, s in SIGNATURES.items()
                if len(s["args"]) >= 2 and s["args"][0][1] == "Tensor"
                and s["args"][1][1] in ("Tensor", "Tensor|Scalar") and _defaulted(s["args"][2:]))

BINARY_FNS = [getattr(mpsim, n) for n in BINARY]
rng = np.random.default_rng(7)


def bits(t):
    a = np.ascontiguousarray(np.asarray(t.to("cpu")))
    return a.dtype, a.shape, a.tobytes()


def inputs():
    """float32 tensors inside most functions' domains (0.05..0.95), of lengths around the
    vector sizes and threads' splits, a transposed (dense, not contiguous) one, and empty."""
    for n in (1, 5, 16, 17, 33, 64, 100, 1000, 4099, 0):
        yield mpsim.tensor(rng.uniform(0.05, 0.95, n).astype(np.float32))
    yield mpsim.tensor(rng.uniform(0.05, 0.95, (37, 29)).astype(np.float32)).t()


def reference(fn, *args):
    try:
        ref = fn(*args)
    except mpsim.Error:
        return None  # not this op's dtype or domain
    return ref


def skip_random(fn):
    probe = mpsim.tensor(rng.uniform(0.05, 0.95, 1000).astype(np.float32))
    try:
        first = fn(probe, probe) if fn in BINARY_FNS else fn(probe)
    except mpsim.Error:
        return
    if isinstance(first, mpsim.Tensor):
        second = fn(probe, probe) if fn in BINARY_FNS else fn(probe)
        if bits(first) != bits(second):
            pytest.skip("a random op (bernoulli, dropout): no two calls agree")


def op_under_test(name):
    """mpsim.name and its in-place method (None where there is none); a random op skips."""
    fn = getattr(mpsim, name)
    skip_random(fn)
    return fn, getattr(mpsim.Tensor, name + "_", None)


@pytest.mark.parametrize("name", UNARY)
def test_unary_out_and_in_place_give_the_out_of_place_bits(name):
    fn, inplace = op_under_test(name)
    for x in inputs():
        ref = reference(fn, x)
        if not isinstance(ref, mpsim.Tensor) or tuple(ref.shape) != tuple(x.shape):
            continue
        out = mpsim.empty_like(ref)
        assert fn(x, out=out) is out
        assert bits(out) == bits(ref), name
        if inplace is not None and ref.dtype == x.dtype:
            y = x.clone()
            assert inplace(y) is y
            assert bits(y) == bits(ref), name + "_"
            same = x.clone()  # out= the input itself: torch's in-place spelling
            fn(same, out=same)
            assert bits(same) == bits(ref), name


@pytest.mark.parametrize("name", BINARY)
def test_binary_out_and_in_place_give_the_out_of_place_bits(name):
    fn, inplace = op_under_test(name)
    for a in inputs():
        b = mpsim.tensor(rng.uniform(0.05, 0.95, tuple(a.shape)).astype(np.float32))
        ref = reference(fn, a, b)
        if not isinstance(ref, mpsim.Tensor) or tuple(ref.shape) != tuple(a.shape):
            continue
        out = mpsim.empty_like(ref)
        assert fn(a, b, out=out) is out
        assert bits(out) == bits(ref), name
        if ref.dtype != a.dtype:
            continue
        for into_first in (True, False):  # out= either operand
            a2, b2 = a.clone(), b.clone()
            fn(a2, b2, out=a2 if into_first else b2)
            assert bits(a2 if into_first else b2) == bits(ref), name
        if inplace is not None:
            a2 = a.clone()
            assert inplace(a2, b) is a2
            assert bits(a2) == bits(ref), name + "_"
            a2 = a.clone()
            inplace(a2, a2)  # both operands self
            assert bits(a2) == bits(reference(fn, a, a)), name + "_"


def wrote(fn_name, out, *args):
    return _C._call_into(out, fn_name, getattr(_C, fn_name), *args)[1]


def test_elementwise_ops_write_into_out_without_a_copy():
    x = mpsim.tensor(rng.standard_normal(1000).astype(np.float32))
    y = mpsim.tensor(rng.standard_normal(1000).astype(np.float32))
    out = mpsim.empty(1000)
    for name in ("exp", "sigmoid", "neg", "abs", "gelu", "silu", "atan"):
        assert wrote(name, out, x), name
    assert wrote("add", out, x, y) and wrote("mul", out, x, 2.0)
    assert wrote("exp", x.clone(), x)
    xc = x.clone()
    assert wrote("exp", xc, xc)  # in place on the cpu
    # broadcast operands into a full out
    col, row = mpsim.ones(3, 1), mpsim.ones(1, 4)
    assert wrote("add", mpsim.empty(3, 4), col, row)
    # a transposed (dense) input: out takes its layout
    m = mpsim.tensor(rng.standard_normal((5, 7)).astype(np.float32)).t()
    assert wrote("exp", mpsim.empty(5, 7).t(), m)
    assert not wrote("exp", mpsim.empty(7, 5), m)  # contiguous out: not the result's layout


@pytest.mark.parametrize("case", ["shifted", "strided", "dtype", "broadcast", "composite"])
def test_outs_that_do_not_qualify_still_get_the_result(case):
    x = mpsim.tensor(rng.uniform(0.05, 0.95, 1001).astype(np.float32))
    if case == "shifted":  # out overlaps the input one element along: the copy path
        base = x.clone()
        ref = mpsim.exp(base[1:])
        assert not wrote("exp", base[:-1], base[1:])
        mpsim.exp(base[1:], out=base[:-1])
        assert bits(base[:-1]) == bits(ref)
        base = x.clone()
        ref = mpsim.add(base[:-1], base[1:])
        mpsim.add(base[:-1], base[1:], out=base[1:])
        assert bits(base[1:]) == bits(ref)
    elif case == "strided":
        out = mpsim.zeros(2002)[::2]
        assert not wrote("exp", out, x)
        mpsim.exp(x, out=out)
        assert bits(out) == bits(mpsim.exp(x))
    elif case == "dtype":
        out = mpsim.zeros(1001, dtype=mpsim.float64)
        assert not wrote("exp", out, x)
        mpsim.exp(x, out=out)
        assert bits(out) == bits(mpsim.exp(x).to(mpsim.float64))
    elif case == "broadcast":  # the expanded operand overlaps out: refused, still right
        a = mpsim.tensor(rng.uniform(0.05, 0.95, (4, 4)).astype(np.float32))
        row = a[0]
        ref = mpsim.add(a, row)
        assert not wrote("add", a, a, row)
        mpsim.add(a, row, out=a)
        assert bits(a) == bits(ref)
    else:  # a Python function around an op may read x after the op: not offered out
        from mpsim._tensor_api import _call_into
        y = x.clone()
        result, did = _call_into(y, "exp", lambda v: mpsim.mul(mpsim.exp(v), v), y)
        assert not did and bits(result) == bits(mpsim.mul(mpsim.exp(x), x))


def test_the_destination_goes_only_to_the_named_op():
    x = mpsim.tensor(rng.standard_normal(100).astype(np.float32))
    out = mpsim.zeros(100)
    result, used = _C._call_into(out, "sigmoid", lambda v: mpsim.exp(v), x)
    assert not used and bits(out) == bits(mpsim.zeros(100)) and bits(result) == bits(mpsim.exp(x))
    # the first call of the op claims it, qualifying or not: the next one allocates
    def twice(v):
        return _C.exp(v[:10]), _C.exp(v)
    (first, second), used = _C._call_into(out, "exp", twice, x)
    assert not used and bits(out) == bits(mpsim.zeros(100))
    # an error inside leaves no destination behind for the next op
    with pytest.raises(mpsim.Error):
        _C._call_into(out, "exp", lambda v: _C.exp(_C.add(v, mpsim.ones(3))), x)
    assert bits(mpsim.exp(x)) == bits(mpsim.exp(x.clone())) and bits(out) == bits(mpsim.zeros(100))


def test_mps_outs():
    x = mpsim.tensor(rng.standard_normal(4099).astype(np.float32))
    xm = x.to("mps")
    out = mpsim.empty(4099, device="mps")
    assert wrote("sigmoid", out, xm)
    assert mpsim.sigmoid(xm, out=out) is out
    assert bits(out) == bits(mpsim.sigmoid(x))
    y = xm.clone()
    assert not wrote("exp", y, y)  # in place on mps: the copy path
    y.exp_()
    assert bits(y) == bits(mpsim.exp(x))


def test_augmented_assignment_writes_in_place():
    a = mpsim.tensor(rng.uniform(0.05, 0.95, 1000).astype(np.float32))
    b = mpsim.tensor(rng.uniform(0.05, 0.95, 1000).astype(np.float32))
    for spelled, fn in (("+=", mpsim.add), ("-=", mpsim.sub), ("*=", mpsim.mul),
                        ("/=", mpsim.div)):
        for other in (b, 3.0, b[:1]):
            ref = fn(a, other)
            x = a.clone()
            view = x[:]
            ns = {"x": x, "other": other}
            exec(f"x {spelled} other", ns)
            assert ns["x"] is x and bits(x) == bits(ref) and bits(view) == bits(ref), spelled
    i = mpsim.arange(10)
    with pytest.raises(mpsim.DTypeError, match="can't be cast"):
        i /= 2  # a float result cannot go into an integer tensor, as torch


def _fresh(n):
    return mpsim.tensor(rng.uniform(0.05, 0.95, n).astype(np.float32))


# Elementwise ops with more arguments than the unary and binary sweeps above fill in: x (the
# tensor written in place) first.
MORE = {
    "clamp scalars": ("clamp", lambda x, t: (x, 0.2, 0.8)),
    "clamp tensors": ("clamp", lambda x, t: (x, t * 0.5, t * 0.5 + 0.4)),
    "clamp_min": ("clamp_min", lambda x, t: (x, 0.5)),
    "clamp_max": ("clamp_max", lambda x, t: (x, 0.5)),
    "threshold": ("threshold", lambda x, t: (x, 0.5, -1.0)),
    "where": ("where", lambda x, t: (t > 0.5, x, t)),
    "lerp scalar": ("lerp", lambda x, t: (x, t, 0.3)),
    "lerp tensor": ("lerp", lambda x, t: (x, t, t)),
    "addcmul": ("addcmul", lambda x, t: (x, t, t)),
    "addcdiv": ("addcdiv", lambda x, t: (x, t, t + 1)),
    "pow scalar": ("pow", lambda x, t: (x, 2.2)),
    "float_power": ("float_power", lambda x, t: (x.double(), t.double())),
    "ldexp": ("ldexp", lambda x, t: (x, mpsim.ones(tuple(x.shape), dtype=mpsim.int64))),
    "softplus params": ("softplus", lambda x, t: (x, 2.0, 1.0)),
    "gelu tanh": ("gelu", lambda x, t: (x,)),
}


@pytest.mark.parametrize("case", sorted(MORE))
def test_ops_with_more_arguments_in_place_and_with_out(case):
    name, make = MORE[case]
    fn = getattr(mpsim, name, None)
    if fn is None:
        pytest.skip(f"mpsim has no {name}")
    kwargs = {"approximate": "tanh"} if case == "gelu tanh" else {}
    for n in (1, 17, 1000, 4099):
        x, t = _fresh(n), _fresh(n)
        args = make(x, t)
        ref = fn(*args, **kwargs)
        out = mpsim.empty_like(ref)
        assert fn(*args, out=out, **kwargs) is out and bits(out) == bits(ref), case
        first = 1 if name == "where" else 0  # where's condition is not x
        y = args[first].clone()
        fn(*[y if i == first else a for i, a in enumerate(args)], out=y, **kwargs)
        assert bits(y) == bits(ref), case
        inplace = getattr(mpsim.Tensor, name + "_", None)
        if inplace is not None and first == 0:
            y = args[0].clone()
            assert inplace(y, *args[1:], **kwargs) is y and bits(y) == bits(ref), case


@pytest.mark.parametrize("name, args", [
    ("relu", ()), ("relu6", ()), ("elu", (0.7,)), ("selu", ()), ("celu", (0.7,)), ("silu", ()),
    ("mish", ()), ("hardsigmoid", ()), ("hardswish", ()), ("hardtanh", (-0.5, 0.5)),
    ("leaky_relu", (0.02,)), ("threshold", (0.1, -3.0)), ("dropout", (0.0, True))])
def test_functional_inplace_writes_into_the_input(name, args):
    F = mpsim.nn.functional
    for n in (1, 17, 1000, 4099):
        x = mpsim.tensor(rng.standard_normal(n).astype(np.float32))
        ref = getattr(F, name)(x, *args)
        y = x.clone()
        view = y[:]
        assert getattr(F, name)(y, *args, inplace=True) is y
        assert bits(y) == bits(ref) and bits(view) == bits(ref), name
    # one kernel each; relu6 and hardtanh are clamp, leaky_relu and threshold a where of
    # other ops (copied in), and dropout with p = 0 returns the input
    if name not in ("relu6", "hardtanh", "leaky_relu", "threshold", "dropout"):
        assert wrote(name, x.clone(), x, *args) and wrote(name, x, x, *args), name

"""mpsim.torch.bound: the composed error bound of a whole model (docs/torch.md, "How far a
whole run may be from exact").

Note [composed bound]
A float32 run of a model differs from the exact result because every op rounds. Let op i
produce y_i with a local error of at most l_i per element (its bound from mpsim.testing for the
compute model, on the inputs it was given), and let G_i = d out_k / d y_i be the gradient of one
output element with respect to that op's output. To first order the run's error at out_k is
sum_i G_i . delta_i with |delta_i| <= l_i, so

    |out_k - exact_k| <= sum_i sum_j |G_i[j]| l_i[j]   (+ the same for numbers rounded to
                                                        float32 where they enter an op)

This is the tightest bound the per-op bounds give: it uses the model's true sensitivities
(cancellation between layers included) where multiplying per-op worst cases |W_n|...|W_1|
grows without limit with depth. bound() gets the G_i by reverse accumulation: the model runs
once in float64 (every floating tensor, parameter and factory promoted) under a
TorchDispatchMode that records each aten call; then, for each output element asked for, a sweep
from the last call to the first re-executes each call on its recorded inputs under autograd to
carry the cotangent back (torch's own derivative of each aten op), adding |cotangent| x l_i at
every call. Terms of order l^2 are dropped (l is a few float32 ULPs, so they sit about 2^-20
below the bound; the bound is widened by that factor). Branches (comparisons, argmax, where's
condition, max's choice) are taken as the exact run takes them; a flipped branch is outside a
first-order bound, and the caller compares such outputs (tokens, indices) for equality."""

import copy

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import _aten
from ._check import _ModulePaths

SECOND_ORDER = 2.0 ** -20
# Factories whose floating values are constants: their rounding to float32 is their own error.
_FACTORIES = {"zeros", "ones", "zeros_like", "ones_like", "empty", "empty_like", "full",
              "full_like", "new_zeros", "new_ones", "new_empty", "new_full", "empty_strided",
              "scalar_tensor", "arange", "fill", "fill_", "linspace", "_to_copy"}
# Ops in _aten.EXACT that compute floating values (run leaves them to torch): no local bound.
_NOT_EXACT_ON_FLOATS = {"cumsum"}


class NoBound(Exception):
    """An aten call whose local error bound is unknown."""


class Element:
    """One output element's composed bound: `.output` (which floating output of fn), `.index`
    (flat), `.exact`, `.bound`, `.top` (the three calls contributing most: (call index, aten
    op, module, share of the bound))."""

    def __init__(self, output, index, exact, bound, top):
        self.output, self.index, self.exact, self.bound, self.top = output, index, exact, \
            bound, top

    def __repr__(self):
        return f"Element(output={self.output}, index={self.index}, bound={self.bound:.3g})"


class Bound:
    """What bound() computed: `.exact` (fn's result from the float64 run, with fn's structure),
    `.elements` (an Element per output element asked for), `.compute`, `.calls` (aten calls
    with a local error). `ratio(actual)`: the largest |actual - exact| / bound over the
    elements (<= 1: the run is within what correct ops may do; a non-finite mismatch is inf)."""

    def __init__(self, exact, elements, compute, calls):
        self.exact, self.elements, self.compute, self.calls = exact, elements, compute, calls

    def ratio(self, actual):
        outs = _floating(actual)
        worst = 0.0
        for el in self.elements:
            a = float(outs[el.output].detach().reshape(-1)[el.index])
            x = el.exact
            if a == x or (np.isnan(a) and np.isnan(x)):
                continue
            if not (np.isfinite(a) and np.isfinite(x)) or el.bound == 0:
                return float("inf")
            worst = max(worst, abs(a - x) / el.bound)
        return worst

    def holds(self, actual):
        return self.ratio(actual) <= 1.0

    def __repr__(self):
        worst = max(self.elements, key=lambda e: e.bound / max(abs(e.exact), 1e-300))
        return (f"Bound(compute={self.compute!r}, {len(self.elements)} elements, "
                f"{self.calls} calls; largest relative bound {worst.bound:.3g} at output "
                f"{worst.output}[{worst.index}])")


def _floating(v):
    if isinstance(v, (list, tuple)):
        return [t for x in v for t in _floating(x)]
    return [v] if isinstance(v, torch.Tensor) and v.is_floating_point() else []


def _promote(v):
    """Floating tensors (and torch dtypes) as float64, elsewhere v as it is."""
    if isinstance(v, torch.Tensor):
        return v.double() if v.is_floating_point() and v.dtype != torch.float64 else v
    if isinstance(v, (list, tuple)):
        return type(v)(_promote(x) for x in v)
    if isinstance(v, dict):
        return {k: _promote(x) for k, x in v.items()}
    if isinstance(v, torch.dtype):
        return torch.float64 if v.is_floating_point else v
    return v


def _as_float32(v):
    if isinstance(v, torch.Tensor):
        return v.float() if v.dtype == torch.float64 else v
    if isinstance(v, (list, tuple)):
        return type(v)(_as_float32(x) for x in v)
    if isinstance(v, dict):
        return {k: _as_float32(x) for k, x in v.items()}
    if isinstance(v, torch.dtype) and v == torch.float64:
        return torch.float32
    return v


def _rounding32(t):
    """Half a float32 ULP where float32 does not hold t's value (how it enters a float32 op)."""
    from mpsim.testing._model import ulp
    v = t.detach().numpy()
    with np.errstate(over="ignore"):
        held = (v.astype(np.float32).astype(np.float64) == v) | ~np.isfinite(v)
    return torch.from_numpy(np.where(held, 0.0, 0.5 * ulp(v, "float32")))


def _tensors(args):
    """(position path, tensor) of every floating tensor among args (lists one level deep)."""
    found = []
    for i, v in enumerate(args):
        if isinstance(v, torch.Tensor) and v.is_floating_point():
            found.append(((i,), v))
        elif isinstance(v, (list, tuple)):
            found += [((i, j), x) for j, x in enumerate(v)
                      if isinstance(x, torch.Tensor) and x.is_floating_point()]
    return found


class _Call:
    def __init__(self, index, func, args, kwargs, outs, local, module):
        self.index, self.func, self.args, self.kwargs = index, func, args, kwargs
        self.outs, self.local, self.module = outs, local, module

    def vjp(self, cotangents):
        """Gradients for the floating tensor arguments, given cotangents for the outputs."""
        inputs = _tensors(self.args)
        leaves = [t.detach().requires_grad_() for _, t in inputs]
        args = [list(v) if isinstance(v, (list, tuple)) else v for v in self.args]
        for (path, _), leaf in zip(inputs, leaves):
            if len(path) == 1:
                args[path[0]] = leaf
            else:
                args[path[0]][path[1]] = leaf
        with torch.enable_grad():
            out = self.func(*args, **self.kwargs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        pairs = [(outs[i], c) for i, c in cotangents.items() if outs[i].requires_grad]
        if not pairs or not leaves:
            return []
        grads = torch.autograd.grad([o for o, _ in pairs], leaves, [c for _, c in pairs],
                                    allow_unused=True)
        return [(t, g) for (_, t), g in zip(inputs, grads) if g is not None]

    def number_share(self, cotangents):
        """sum |cotangent x d out / d s| x rounding(s) over the Python floats s among the
        arguments that float32 does not hold (they enter a float32 kernel rounded); the
        derivative by central difference in float64."""
        share = 0.0
        for i, s in enumerate(self.args):
            if not isinstance(s, float) or not np.isfinite(s):
                continue
            r = float(_rounding32(torch.tensor(s, dtype=torch.float64)))
            if r == 0.0:
                continue
            h = 2.0 ** -20 * max(abs(s), 2.0 ** -126)
            ends = []
            for v in (s + h, s - h):
                args = list(self.args)
                args[i] = v
                with torch.no_grad():
                    out = self.func(*args, **self.kwargs)
                ends.append(list(out) if isinstance(out, (list, tuple)) else [out])
            for k, c in cotangents.items():
                d = (ends[0][k] - ends[1][k]) / (2 * h)
                share += float(torch.nansum((c * d).abs())) * r
        return share


class _Tape(TorchDispatchMode):
    def __init__(self, compute, paths):
        super().__init__()
        self.compute, self.paths, self.calls, self.produced = compute, paths, [], {}

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        args, kwargs = _promote(tuple(args)), _promote(dict(kwargs or {}))
        out = func(*args, **kwargs)
        outs = list(out) if isinstance(out, (list, tuple)) else [out]
        if any(isinstance(t, torch.Tensor) and t.is_floating_point() for t in outs):
            with torch.no_grad():
                local = self.local(func, args, kwargs, outs)
            call = _Call(len(self.calls), func, args, kwargs, outs, local, self.paths.current())
            self.calls.append(call)
            for i, t in enumerate(outs):
                if isinstance(t, torch.Tensor):
                    self.produced[id(t)] = (call, i)
        return out

    def local(self, func, args, kwargs, outs):
        """Each floating output's own error bound (None: the op moves or selects values)."""
        from mpsim.testing import _verdict
        name = func.overloadpacket.__name__
        if name in _FACTORIES:
            return [_rounding32(t) if isinstance(t, torch.Tensor) and t.is_floating_point()
                    else None for t in outs]
        if name in _aten.EXACT and name not in _NOT_EXACT_ON_FLOATS:
            return None
        try:
            mapped = _aten.call(func, _as_float32(list(args)), _as_float32(kwargs))
        except _aten.Unmapped as e:
            raise NoBound(str(e)) from None
        if mapped is None:
            return None
        op, margs, mkwargs, index = mapped
        _, _, terms, _ = _verdict._evaluate(
            op, margs, mkwargs, None if self.compute == "golden" else self.compute)
        kernel, rounding, own = terms[0]
        term = own if self.compute == "golden" else kernel + rounding + own
        local = [None] * len(outs)
        local[index] = torch.from_numpy(np.ascontiguousarray(term, dtype=np.float64))
        return local

    def sweep(self, output, index):
        """(bound, {call index: contribution}) of one element of one output tensor."""
        seed = torch.zeros_like(output).reshape(-1)
        seed[index] = 1.0
        cot = {id(output): seed.reshape(output.shape)}
        total, parts = 0.0, {}
        for call in reversed(self.calls):
            mine = {i: cot.pop(id(t)) for i, t in enumerate(call.outs)
                    if isinstance(t, torch.Tensor) and id(t) in cot}
            if not mine:
                continue
            share = 0.0
            for i, c in mine.items():
                if call.local is not None and call.local[i] is not None:
                    share += float(torch.nansum(c.abs() * call.local[i]))
            if call.local is not None:  # numbers rounded into a kernel that computes
                share += call.number_share(mine)
            for t, g in call.vjp(mine):
                if id(t) in self.produced:
                    cot[id(t)] = cot[id(t)] + g if id(t) in cot else g
                else:  # a model input, parameter or number: rounded to float32 on entry
                    share += float((g.abs() * _rounding32(t)).sum())
            if share:
                parts[call.index] = parts.get(call.index, 0.0) + share
                total += share
        return total, parts


def bound(fn, *args, compute="golden", indices=None, samples=None, seed=0, **kwargs):
    """The composed first-order bound (Note [composed bound]) on |float32 run - exact| at
    elements of fn(*args, **kwargs)'s floating outputs, for a run whose every aten op is
    within its bound under `compute`: "golden" for mpsim's own ops (mpsim.torch.run), or a
    compute model of mpsim.testing (None: PyTorch's CUDA kernels, "torch_cpu", "tf32", ...).
    indices: flat indices into the first floating output, or (output, flat index) pairs;
    samples: how many more elements to draw at random with `seed` (default 16 without
    indices, 0 with them). fn is a function or an nn.Module (deep-copied
    and run in float64; fn is not changed). Returns a Bound. Raises mpsim.UnsupportedError for
    an aten op without a local bound."""
    import mpsim
    from mpsim.testing._model import model
    if compute != "golden":
        model(compute, "float32")  # a ValueError for an unknown compute model, up front
    if isinstance(fn, torch.nn.Module):
        fn = copy.deepcopy(fn).double()
    with _ModulePaths(fn) as paths:
        tape = _Tape(compute, paths)
        try:
            with torch.no_grad(), tape:
                exact = fn(*_promote(args), **_promote(kwargs))
        except NoBound as err:
            raise mpsim.UnsupportedError(
                f"[mpsim.torch.bound] {err} has no error bound in mpsim") from None
    outs = _floating(exact)
    indices = [(0, int(i)) if not isinstance(i, (tuple, list)) else (int(i[0]), int(i[1]))
               for i in (indices or [])]
    samples = (16 if not indices else 0) if samples is None else samples
    sizes = [t.numel() for t in outs]
    if samples and sum(sizes):
        picks = np.random.default_rng(seed).choice(sum(sizes), size=min(samples, sum(sizes)),
                                                   replace=False)
        starts = np.cumsum([0] + sizes)
        for p in sorted(picks):
            o = int(np.searchsorted(starts, p, side="right") - 1)
            if (o, int(p - starts[o])) not in indices:
                indices.append((o, int(p - starts[o])))
    elements = []
    for o, i in indices:
        if not 0 <= o < len(outs) or not 0 <= i < outs[o].numel():
            raise IndexError(f"[mpsim.torch.bound] element {(o, i)} is outside fn's floating "
                             f"outputs ({[tuple(t.shape) for t in outs]})")
        value = float(outs[o].reshape(-1)[i])
        try:
            total, parts = tape.sweep(outs[o], i) if np.isfinite(value) else (0.0, {})
        except RuntimeError as err:
            raise mpsim.UnsupportedError(f"[mpsim.torch.bound] torch has no derivative to "
                                         f"carry the bound back: {err}") from None
        top = sorted(parts.items(), key=lambda kv: -kv[1])[:3]
        top = [(k, str(tape.calls[k].func), tape.calls[k].module, v / total) for k, v in top]
        elements.append(Element(o, i, value, total * (1 + SECOND_ORDER), top))
    return Bound(exact, elements, compute, sum(
        1 for c in tape.calls if c.local is not None and any(x is not None for x in c.local)))

"""mpsim.torch.check and its Report."""

import json

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import _aten


class Row:
    """One aten call: its index in call order, op, module path, inputs, and verdict."""

    def __init__(self, index, aten, module, inputs, status, worst_ratio=0.0, nan_introduced=False,
                 detail=""):
        self.index, self.aten, self.module, self.inputs = index, aten, module, inputs
        self.status, self.worst_ratio, self.nan_introduced = status, worst_ratio, nan_introduced
        self.detail = detail

    @property
    def failed(self):
        return self.status == "judged" and (self.worst_ratio > 1 or self.nan_introduced)

    def as_dict(self):
        return {"index": self.index, "aten": self.aten, "module": self.module,
                "inputs": self.inputs, "status": self.status, "worst_ratio": self.worst_ratio,
                "nan_introduced": self.nan_introduced, "detail": self.detail}


class Report:
    """The verdict on every aten call of a run: `.ok`, `.rows` (call order), `.first_failure`
    (the first call beyond its bound or with NaN/inf where the exact result is finite),
    `.to_json()`; str() is a table, worst rows first, the first failure marked."""

    def __init__(self, rows, compute):
        self.rows, self.compute = rows, compute
        self.first_failure = next((r for r in rows if r.failed), None)
        self.ok = self.first_failure is None

    def __bool__(self):
        return self.ok

    def counts(self):
        c = {}
        for r in self.rows:
            c[r.status] = c.get(r.status, 0) + 1
        return c

    def to_json(self):
        return json.dumps({"ok": self.ok, "compute": self.compute, "counts": self.counts(),
                           "first_failure": self.first_failure.as_dict()
                           if self.first_failure else None,
                           "rows": [r.as_dict() for r in self.rows]})

    def table(self, limit=25):
        judged = sorted((r for r in self.rows if r.status == "judged"),
                        key=lambda r: (not r.nan_introduced, -r.worst_ratio))
        lines = [f"{'#':>5}  {'aten op':38} {'module':28} {'worst/bound':>11}  inputs"]
        for r in judged[:limit]:
            mark = "  <- first failure" if r is self.first_failure else ""
            ratio = "NaN/inf" if r.nan_introduced else f"{r.worst_ratio:.3g}"
            ins = ", ".join(r.inputs)
            lines.append(f"{r.index:>5}  {r.aten:38.38} {r.module or '-':28.28} {ratio:>11}  "
                         f"{ins[:60]}{mark}")
        c = self.counts()
        lines.append(f"{'ok' if self.ok else 'FAIL'}: {c.get('judged', 0)} calls judged, "
                     f"{c.get('exact', 0)} exact (views, copies, indexing), "
                     f"{c.get('unmapped', 0)} without an mpsim op, {c.get('error', 0)} not "
                     f"judged (mpsim raised), {c.get('skipped', 0)} skipped; compute "
                     f"{self.compute or 'default'}")
        if self.first_failure is not None:
            f = self.first_failure
            lines.append(f"first failure: call {f.index}, {f.aten} in {f.module or '-'}: "
                         f"{f.detail}")
        return "\n".join(lines)

    __str__ = table


def _describe(v):
    if isinstance(v, torch.Tensor):
        return f"{str(v.dtype).replace('torch.', '')}{list(v.shape)}"
    if isinstance(v, (list, tuple)) and v and isinstance(v[0], torch.Tensor):
        return "[" + ", ".join(_describe(x) for x in v) + "]"
    return None


class _ModulePaths:
    """The module path of the running call: global forward hooks keep a stack of the names
    of `root`'s modules (empty when fn is not a module)."""

    def __init__(self, root):
        self.names = {id(m): n for n, m in root.named_modules()} if isinstance(
            root, torch.nn.Module) else {}
        self.stack = []
        self.handles = []

    def __enter__(self):
        mod = torch.nn.modules.module

        def pre(module, inputs):
            self.stack.append(self.names.get(id(module), type(module).__name__))

        def post(module, inputs, output):
            if self.stack:
                self.stack.pop()

        self.handles = [mod.register_module_forward_pre_hook(pre),
                        mod.register_module_forward_hook(post)]
        return self

    def __exit__(self, *exc):
        for h in self.handles:
            h.remove()

    def current(self):
        named = [n for n in self.stack if n]
        return named[-1] if named else ""


class _Judge(TorchDispatchMode):
    def __init__(self, paths, compute, ops, skip, sample):
        super().__init__()
        self.paths, self.compute, self.ops, self.skip = paths, compute, ops, skip
        self.sample = sample
        self.rows = []
        self.rng = np.random.default_rng(0)

    def _selected(self, func):
        names = {func.overloadpacket.__name__, str(func)}
        if self.ops is not None and not names & self.ops:
            return False
        return not (self.skip and names & self.skip)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = str(func)
        inputs = [d for d in (_describe(v) for v in list(args) + list(kwargs.values())) if d]
        row = Row(len(self.rows), name, self.paths.current(), inputs, "skipped")
        self.rows.append(row)
        if not self._selected(func) or func.overloadpacket.__name__.endswith("_") and \
                func.overloadpacket.__name__ not in ("copy_", "fill_"):
            return out
        try:
            mapped = _aten.call(func, args, kwargs)
        except _aten.Unmapped as e:
            row.status, row.detail = "unmapped", str(e)
            return out
        if mapped is None:
            row.status = "exact"
            return out
        op, margs, mkwargs, index = mapped
        actual = out[index] if isinstance(out, (tuple, list)) else out
        from mpsim.testing import check as judge
        try:
            indices = None
            if self.sample is not None and actual.numel() > self.sample:
                indices = np.sort(self.rng.choice(actual.numel(), self.sample, replace=False))
            values = actual.detach().reshape(-1)[torch.from_numpy(indices).to(actual.device)] \
                if indices is not None else actual.detach()
            compute = self.compute
            if compute is None and actual.device.type == "cpu":
                compute = "torch_cpu"  # PyTorch's CPU kernels (docs/verdicts.md)
            v = judge(values, op, *margs, compute=compute, indices=indices, **mkwargs)
        except Exception as e:  # an argument variant mpsim refuses: reported, not judged
            row.status, row.detail = "error", f"{type(e).__name__}: {e}"
            return out
        row.status, row.worst_ratio = "judged", v.worst_ratio
        row.nan_introduced = v.nan_mismatch > 0
        if row.failed:
            row.detail = v.report().split("\n")[1].strip() if "\n" in v.report() else ""
        return out


def check(fn, *args, compute=None, ops=None, skip=None, sample=None, **kwargs):
    """Runs fn(*args, **kwargs) (a function or an nn.Module) as it is, on whatever device its
    tensors are on, and judges every aten op call against mpsim's golden result from the same
    inputs within mpsim.testing's bound for `compute`. Returns a Report.

    compute: as mpsim.testing.check's; None judges a call on the CPU with PyTorch's CPU kernels'
    model ("torch_cpu") and one on a GPU with PyTorch's CUDA kernels' (the default).
    ops / skip: aten names ("addmm" or "aten.addmm.default") to judge only / to leave out.
    sample: judge at most this many elements of each output (chosen at random, seeded): the
    golden result is still computed whole; a bug confined to unsampled elements is missed."""
    from mpsim.testing._model import model
    model(compute, "float32")  # an unknown compute model fails here, not in every call
    ops = set(ops) if ops is not None else None
    skip = set(skip) if skip else set()
    with torch.no_grad(), _ModulePaths(fn) as paths:
        judge = _Judge(paths, compute, ops, skip, sample)
        with judge:
            fn(*args, **kwargs)
    return Report(judge.rows, compute)

"""mpsim.torch.run: a model's aten ops executed by mpsim."""

import warnings

import torch
from torch.utils._python_dispatch import TorchDispatchMode

from . import _aten
from ._check import _ModulePaths


class RunInfo:
    """What the last run did: `.calls` (aten calls executed by mpsim), `.native` (exact data
    movement and views left to torch), `.fallbacks` ({aten op: calls run by torch}), and on mps
    `.memory` (the device's memory statistics after the run: peak_allocated_bytes, ...)."""

    def __init__(self):
        self.calls, self.native, self.fallbacks, self.memory = 0, 0, {}, None


_last = RunInfo()


def last_run():
    return _last


def _to_mpsim(v, device):
    import mpsim
    if isinstance(v, torch.Tensor):
        if v.device.type != "cpu":
            raise mpsim.DeviceError(f"mpsim.torch.run takes CPU tensors, got one on {v.device}")
        if v.dim() == 0:  # a wrapped Python number (x / 3.0): a number again
            return v.item()
        v = v.detach()
        t = mpsim.tensor(v.numpy()) if v.dtype == torch.bool else mpsim.from_dlpack(v)
        return t.to(device) if device != "cpu" else t
    if isinstance(v, (list, tuple)) and v and all(isinstance(x, torch.Tensor) for x in v):
        return [_to_mpsim(x, device) for x in v]
    if type(v).__name__ == "dtype" and type(v).__module__ == "torch":
        return str(v).replace("torch.", "")
    return v


def _to_torch(t):
    import mpsim
    t = t.to("cpu") if t.device != "cpu" else t
    if t.dtype == mpsim.bool:  # DLPack has no bool in torch 1.13
        return torch.from_numpy(t.numpy())
    return torch.from_dlpack(t)


class _Runner(TorchDispatchMode):
    def __init__(self, paths, device, precision, fallback, info):
        super().__init__()
        self.paths, self.device, self.precision = paths, device, precision
        self.fallback, self.info, self.warned = fallback, info, set()

    def _fall_back(self, func, args, kwargs, why):
        import mpsim
        name = str(func)
        where = self.paths.current() or "the model's top level"
        if self.fallback != "torch":
            raise mpsim.UnsupportedError(
                f"[mpsim.torch.run] {name} ({why}) has no mpsim op; called from {where} "
                "(fallback='torch' runs it on torch)")
        if name not in self.warned:
            warnings.warn(f"mpsim.torch.run: {name} runs on torch ({why}; from {where})")
            self.warned.add(name)
        self.info.fallbacks[name] = self.info.fallbacks.get(name, 0) + 1
        return func(*args, **kwargs)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        import mpsim
        kwargs = kwargs or {}
        try:
            mapped = _aten.call(func, args, kwargs)
        except _aten.Unmapped as e:
            return self._fall_back(func, args, kwargs, str(e))
        if mapped is None:  # exact data movement, views and fills: torch's own, bit for bit
            self.info.native += 1
            return func(*args, **kwargs)
        op, margs, mkwargs, index = mapped
        if any(isinstance(v, torch.Tensor) and v.device.type != "cpu" for v in args):
            return self._fall_back(func, args, kwargs, "a tensor off the CPU")
        reference = None
        if func.overloadpacket.__name__.startswith("native_") or \
                func.overloadpacket.__name__.startswith("_scaled_dot") or \
                func.overloadpacket.__name__.startswith("_native"):
            reference = func(*args, **kwargs)  # the auxiliary outputs (saved statistics)
        with mpsim.precision(self.precision):
            result = getattr(mpsim, op)(*[_to_mpsim(v, self.device) for v in margs],
                                        **{k: _to_mpsim(v, self.device)
                                           for k, v in mkwargs.items()})
        out = _to_torch(result)
        self.info.calls += 1
        if reference is not None:
            outs = list(reference)
            outs[index] = out.to(outs[index].dtype)
            return tuple(outs)
        return out


def run(fn, *args, device="cpu", precision="golden", fallback="error", **kwargs):
    """Calls fn(*args, **kwargs) (a function or an nn.Module, its tensors on the CPU) with every
    aten op that computes values executed by mpsim on `device` ("cpu" or "mps") in `precision`
    ("golden" or "fast"); views, copies, indexing and fills stay torch's (exact). Returns what
    fn returns, as torch CPU tensors. An aten op mpsim lacks raises mpsim.UnsupportedError naming
    it and the module that called it; fallback="torch" runs it on torch instead, warns once per
    op and counts it (last_run().fallbacks)."""
    import mpsim
    global _last
    if device not in ("cpu", "mps"):
        raise ValueError(f"device must be 'cpu' or 'mps', got {device!r}")
    if fallback not in ("error", "torch"):
        raise ValueError(f"fallback must be 'error' or 'torch', got {fallback!r}")
    info = RunInfo()
    _last = info
    if device == "mps":
        mpsim.mps.reset_peak_memory_stats() if hasattr(mpsim.mps, "reset_peak_memory_stats") \
            else None
    with torch.no_grad(), _ModulePaths(fn) as paths:
        with _Runner(paths, device, precision, fallback, info):
            out = fn(*args, **kwargs)
    if device == "mps":
        mpsim.mps.synchronize()
        info.memory = mpsim.mps.memory_stats()
    return out

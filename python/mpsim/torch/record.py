"""Record a PyTorch model's aten calls for mpsim.torch.check_recording (docs/torch.md).

This file needs torch and NumPy only (no compiled mpsim): copy it to a machine that cannot
build mpsim (a GPU server), then

    import record                       # this file
    record.record(model, x, path="unet_fp16.npz")

and judge the file anywhere mpsim is installed: mpsim.torch.check_recording("unet_fp16.npz").
Each value-computing call's inputs are stored whole (calls whose inputs exceed max_input_bytes
are listed but not stored), its arguments as JSON, and its output sampled (at most `sample`
elements, with their flat indices)."""

import json

import numpy as np
import torch
from torch.utils._python_dispatch import TorchDispatchMode

# Calls that only move or create values: not recorded (their results are exact).
_NOT_RECORDED = {
    "view", "_unsafe_view", "_reshape_alias", "reshape", "t", "transpose", "permute", "expand",
    "slice", "select", "unsqueeze", "squeeze", "clone", "contiguous", "alias", "as_strided",
    "split", "split_with_sizes", "chunk", "unbind", "detach", "lift_fresh", "lift_fresh_copy",
    "copy_", "embedding", "index_select", "gather", "index", "cat", "stack", "zeros", "ones",
    "empty", "full", "arange", "randn", "rand", "normal_", "uniform_", "_to_copy", "empty_strided",
    "scalar_tensor", "fill_", "zero_", "new_zeros", "new_empty", "new_ones", "new_full",
    "_local_scalar_dense", "upsample_nearest2d", "sym_size", "sym_stride", "sym_numel",
}


def _encode(v, arrays, key, limit):
    """A JSON description of an argument; tensors go to `arrays`."""
    if isinstance(v, torch.Tensor):
        t = v.detach().cpu().contiguous()
        if t.numel() * t.element_size() > limit:
            raise OverflowError(f"{t.numel() * t.element_size()} bytes")
        dtype = str(t.dtype).replace("torch.", "")
        arrays[key] = t.view(torch.int16).numpy() if dtype == "bfloat16" else t.numpy()
        return {"tensor": key, "dtype": dtype}
    if isinstance(v, (list, tuple)):
        return {"list": [_encode(x, arrays, f"{key}.{i}", limit) for i, x in enumerate(v)]}
    if isinstance(v, torch.dtype):
        return {"dtype": str(v).replace("torch.", "")}
    if isinstance(v, torch.device):
        return {"device": str(v)}
    if isinstance(v, (bool, int, float, str)) or v is None:
        if isinstance(v, float) and not np.isfinite(v):
            return {"float": repr(v)}
        return v
    return {"repr": repr(v)}


class _Recorder(TorchDispatchMode):
    def __init__(self, names, sample, max_input_bytes):
        super().__init__()
        self.names, self.sample, self.limit = names, sample, max_input_bytes
        self.stack, self.calls, self.arrays = [], [], {}
        self.rng = np.random.default_rng(0)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func.overloadpacket.__name__
        if name in _NOT_RECORDED or name.endswith("_"):
            return out
        i = len(self.calls)
        call = {"index": i, "op": name, "overload": func._overloadname, "aten": str(func),
                "schema": str(func._schema),
                "module": next((n for n in reversed(self.stack) if n), "")}
        try:
            local = {}
            call["args"] = [_encode(a, local, f"c{i}.a{j}", self.limit)
                            for j, a in enumerate(args)]
            call["kwargs"] = {k: _encode(v, local, f"c{i}.k{k}", self.limit)
                              for k, v in kwargs.items()}
            self.arrays.update(local)
        except OverflowError as e:
            call["skipped"] = f"inputs too large to store ({e})"
        outs = out if isinstance(out, (tuple, list)) else [out]
        first = outs[0]
        if isinstance(first, torch.Tensor) and "skipped" not in call:
            flat = first.detach().reshape(-1)
            n = flat.numel()
            idx = np.arange(n) if n <= self.sample else \
                np.sort(self.rng.choice(n, self.sample, replace=False))
            vals = flat[torch.from_numpy(idx).to(flat.device)].cpu()
            dtype = str(vals.dtype).replace("torch.", "")
            self.arrays[f"c{i}.out.idx"] = idx.astype(np.int64)
            self.arrays[f"c{i}.out.val"] = vals.view(torch.int16).numpy() \
                if dtype == "bfloat16" else vals.numpy()
            call["out"] = {"dtype": dtype, "shape": list(first.shape),
                           "device": first.device.type}
        self.calls.append(call)
        return out


def record(fn, *args, path, sample=2048, max_input_bytes=64 << 20, **kwargs):
    """Runs fn(*args, **kwargs) on its device and writes every value-computing aten call to
    `path` (.npz): inputs whole (up to max_input_bytes per call), arguments, and `sample`
    elements of the output. Returns what fn returns."""
    names = {id(m): n for n, m in fn.named_modules()} if isinstance(fn, torch.nn.Module) else {}
    rec = _Recorder(names, sample, max_input_bytes)
    hooks = torch.nn.modules.module

    def pre(module, inputs):
        rec.stack.append(names.get(id(module), ""))

    def post(module, inputs, output):
        if rec.stack:
            rec.stack.pop()

    handles = [hooks.register_module_forward_pre_hook(pre),
               hooks.register_module_forward_hook(post)]
    try:
        with torch.no_grad(), rec:
            result = fn(*args, **kwargs)
    finally:
        for h in handles:
            h.remove()
    meta = {"format": "mpsim.torch.record 1", "torch": torch.__version__,
            "device": torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu",
            "tf32": bool(torch.backends.cuda.matmul.allow_tf32),
            "cudnn_tf32": bool(torch.backends.cudnn.allow_tf32), "calls": rec.calls}
    rec.arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez_compressed(path, **rec.arrays)
    return result

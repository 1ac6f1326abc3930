"""mpsim.torch.check_recording: judge a file of mpsim.torch.record here."""

import json
import types

import numpy as np
import torch

from . import _aten
from ._check import Report, Row


class _Func:
    """What _aten.call reads of an aten op: its packet name, overload and schema (as recorded;
    for a recording that predates schemas, PyTorch 2.x's from _aten.SCHEMAS_2X, else this
    torch's, else none)."""

    def __init__(self, name, overload, schema=None):
        self.overloadpacket = types.SimpleNamespace(__name__=name)
        self._overloadname = overload
        if schema is None and overload == "default":
            schema = _aten.SCHEMAS_2X.get(name)
        if schema is None:
            live = getattr(getattr(torch.ops.aten, name, None), overload, None)
            schema = str(live._schema) if live is not None else None
        self._schema = torch._C.parse_schema(schema) if schema else None


def _decode(d, z):
    if isinstance(d, dict):
        if "tensor" in d:
            a = z[d["tensor"]]
            if d["dtype"] == "bfloat16":
                return torch.from_numpy(a.copy()).view(torch.bfloat16)
            return torch.from_numpy(a.copy())
        if "list" in d:
            return [_decode(x, z) for x in d["list"]]
        if "dtype" in d:
            return getattr(torch, d["dtype"])
        if "device" in d:
            return torch.device("cpu")
        if "float" in d:
            return float(d["float"])
        return None
    return d


def check_recording(path, compute=None):
    """Judges every call stored by mpsim.torch.record in `path` against mpsim's golden result
    from its stored inputs: a Report, as check() gives. compute None judges a call recorded on
    a GPU with PyTorch's CUDA kernels' model ("tf32" when the recording had TF32 on for
    float32 products) and one recorded on the CPU with "torch_cpu"."""
    from mpsim.testing import check as judge
    from mpsim.testing._model import model
    model(compute, "float32")  # an unknown compute model fails here, not in every call
    z = np.load(path)
    meta = json.loads(bytes(z["meta"]).decode())
    rows = []
    for call in meta["calls"]:
        inputs = []
        row = Row(call["index"], call["aten"], call["module"], inputs, "skipped")
        rows.append(row)
        if "skipped" in call:
            row.detail = call["skipped"]
            continue
        args = [_decode(a, z) for a in call["args"]]
        kwargs = {k: _decode(v, z) for k, v in call["kwargs"].items()}
        inputs += [f"{str(a.dtype).replace('torch.', '')}{list(a.shape)}" for a in args
                   if isinstance(a, torch.Tensor)]
        try:
            func = _Func(call["op"], call["overload"], call.get("schema"))
            mapped = _aten.call(func, args, kwargs)
        except _aten.Unmapped as e:
            row.status, row.detail = "unmapped", str(e)
            continue
        if mapped is None or "out" not in call:
            row.status = "exact"
            continue
        op, margs, mkwargs, _ = mapped
        out = call["out"]
        vals = z[f"c{call['index']}.out.val"]
        if out["dtype"] == "bfloat16":
            vals = torch.from_numpy(vals.copy()).view(torch.bfloat16)
        c = compute
        if c is None:
            float32_product = op in ("mm", "bmm", "addmm", "baddbmm", "conv2d",
                                     "conv_transpose2d") and out["dtype"] == "float32"
            tf32 = meta["cudnn_tf32"] if op.startswith("conv") else meta["tf32"]
            c = "torch_cpu" if out["device"] == "cpu" else ("tf32" if float32_product and tf32
                                                            else None)
        try:
            v = judge(vals, op, *margs, compute=c, indices=z[f"c{call['index']}.out.idx"],
                      **mkwargs)
        except Exception as e:
            row.status, row.detail = "error", f"{type(e).__name__}: {e}"
            continue
        row.status, row.worst_ratio, row.nan_introduced = "judged", v.worst_ratio, \
            v.nan_mismatch > 0
        if row.failed:
            row.detail = v.report().split("\n")[1].strip() if "\n" in v.report() else ""
    return Report(rows, compute)

"""Prints docs/verdicts.md's validation tables from the stored GPU outputs: per case, check's
verdict, torch.testing.assert_close's with its default tolerances, and the largest
|actual - golden| / bound (the bound's tightness); per planted bug, who catches it.

    PYTHONPATH=build/python /usr/bin/python3 tools/verdicts/report.py \
        tests/fixtures/verdicts/h200.npz
"""

import importlib.util
import json
import pathlib
import sys

import numpy as np
import torch

import mpsim
from mpsim.testing import _verdict, check

HERE = pathlib.Path(__file__).resolve().parent
spec = importlib.util.spec_from_file_location("gpu_cases", HERE / "gpu_cases.py")
g = importlib.util.module_from_spec(spec)
spec.loader.exec_module(g)

ELEMENTWISE = ("exp", "sin", "cos", "tanh", "erf", "sigmoid", "gelu")


def torch_default_catches(values, case, golden):
    """torch.testing.assert_close with its defaults for the output's dtype fails?"""
    dtype = getattr(torch, case["dtype"]) if case["op"] not in ("argmax",) else torch.float64
    a = torch.from_numpy(np.asarray(values, np.float64)).to(dtype)
    e = torch.from_numpy(golden).to(dtype)
    try:
        torch.testing.assert_close(a, e)
        return False
    except AssertionError:
        return True


def main(path):
    z = np.load(path)
    meta = json.loads(bytes(z["meta"]).decode())
    cases = {c["id"]: c for c in g.cases()}
    print(f"Outputs of {meta['device']}, PyTorch {meta['torch']}, CUDA {meta['cuda']}.\n")
    rows, worst_by_family, alarms = [], {}, []
    goldens = {}
    for cid in meta["cases"]:
        c = cases[cid]
        args, kwargs = g.make_inputs(c, torch)
        idx = z[cid + "/idx"]
        v = check(z[cid + "/val"], c["op"], *args, compute=c["compute"], indices=idx, **kwargs)
        _, outs, _, _ = _verdict._evaluate(c["op"], args, kwargs, c["compute"])
        golden = _verdict._float64(outs[0]).reshape(-1)[idx]
        goldens[cid] = golden
        t_alarm = torch_default_catches(z[cid + "/val"], c, golden)
        if t_alarm:
            alarms.append(cid)
        fam = c["op"]
        worst_by_family[fam] = max(worst_by_family.get(fam, (0, ""))[0], v.worst_ratio), \
            cid if v.worst_ratio >= worst_by_family.get(fam, (0, ""))[0] else \
            worst_by_family[fam][1]
        rows.append((cid, v.ok, v.worst_ratio, t_alarm))
    ok = sum(r[1] for r in rows)
    print(f"Genuine outputs: {len(rows)}; check passes {ok} (false alarms: {len(rows) - ok}); "
          f"torch.testing.assert_close's defaults fail {len(alarms)} (false alarms): "
          f"{', '.join(alarms) or 'none'}.\n")
    print("| op | largest \\|actual - golden\\| / bound | case |\n|---|---|---|")
    for fam, (w, cid) in sorted(worst_by_family.items()):
        print(f"| {fam} | {w:.3g} | {cid} |")
    print("\n| planted bug | made by | check catches | assert_close catches |\n|---|---|---|---|")
    for bug, base, _ in meta["bugs"]:
        c = cases[base]
        args, kwargs = g.make_inputs(c, torch)
        vals = z["bug:" + bug + "/val"]
        v = check(vals, c["op"], *args, compute=c["compute"], indices=z["bug:" + bug + "/idx"],
                  **kwargs)
        t = torch_default_catches(vals, c, goldens[base])
        print(f"| {bug} ({base}) | a wrong kernel on the GPU | {'yes' if not v else 'NO'} "
              f"({v.worst_ratio:.3g}) | {'yes' if t else 'no'} |")
    for op in ELEMENTWISE:
        cid = f"{op}-float32"
        c = cases[cid]
        args, kwargs = g.make_inputs(c, torch)
        idx = z[cid + "/idx"]
        genuine = z[cid + "/val"].astype(np.float64)
        ulps = np.spacing(np.abs(genuine).astype(np.float32)).astype(np.float64)
        _, _, terms, _ = _verdict._evaluate(op, args, kwargs, None)
        kernel = terms[0][0].reshape(-1)[idx]
        some = np.arange(genuine.size) % 100 == 0
        bugs = {"16 ULP on 1% of the elements": np.where(some, genuine + 16 * ulps, genuine),
                "the budget + 4 ULP on every element": goldens[cid] + kernel + 4 * ulps,
                "one NaN where the result is finite":
                    np.where(np.arange(genuine.size) == 7, np.nan, genuine)}
        for name, bad in bugs.items():
            v = check(bad, op, *args, indices=idx, **kwargs)
            t = torch_default_catches(bad, c, goldens[cid])
            print(f"| {op}: {name} | the genuine output, changed | "
                  f"{'yes' if not v else 'NO'} ({v.worst_ratio:.3g}) | {'yes' if t else 'no'} |")


if __name__ == "__main__":
    main(sys.argv[1])

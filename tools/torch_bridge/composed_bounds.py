"""The composed bound of each test model (tests/python/torch_models.py) against its runs:
mpsim.torch.run on cpu (golden) with compute="golden", and torch's own float32 CPU run with
compute="torch_cpu", at the 8 elements farthest from the float64 run and 8 drawn at random:

    PYTHONPATH=build/python /usr/bin/python3 tools/torch_bridge/composed_bounds.py

prints the Markdown table of docs/torch.md ("bound: how far a whole run may be from exact")."""

import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "python"))

import torch  # noqa: E402

import mpsim.torch as mt  # noqa: E402
from test_torch_bridge import MODELS, worst_elements  # noqa: E402


def main():
    print("| model | calls | largest bound / max exact | mpsim run: error / bound | "
          "torch float32: error / bound (torch_cpu) | largest share of the bound |")
    print("|---|---|---|---|---|---|")
    for name, (fn, args) in sorted(MODELS.items()):
        ours = mt.run(fn, *args)
        exact = mt.bound(fn, *args, samples=0).exact
        if not ours.is_floating_point():
            print(f"| {name} | | | tokens equal: {torch.equal(ours, exact)} | | |")
            continue
        with torch.no_grad():
            theirs = fn(*args)
        b = mt.bound(fn, *args, indices=worst_elements(ours, exact), samples=8)
        t = mt.bound(fn, *args, compute="torch_cpu", indices=worst_elements(theirs, exact),
                     samples=8)
        scale = float(exact.abs().max())
        largest = max(e.bound for e in b.elements)
        top = max(b.elements, key=lambda e: e.bound).top[0]
        print(f"| {name} | {b.calls} | {largest / scale:.2g} | {b.ratio(ours):.2g} | "
              f"{t.ratio(theirs):.2g} | {top[1]} ({top[2] or 'top level'}) {top[3]:.0%} |")


if __name__ == "__main__":
    main()

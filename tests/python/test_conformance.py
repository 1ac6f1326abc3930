"""PyTorch 1.13's OpInfo database as the conformance gate (tests/python/conformance.py,
docs/conformance.md): no op passes fewer float32 samples (first table) or samples of the other
dtypes (second table) on cpu or mps than docs/conformance.md records, and no recorded op goes
missing."""

import pathlib
import re

import numpy as np

import conformance
import mpsim

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "conformance.md"


def recorded(marker="conformance table"):
    text = DOC.read_text().split(f"<!-- {marker} -->")[1].split(
        f"<!-- end of {marker} -->")[0]
    rows = {}
    for line in text.splitlines():
        m = re.match(r"\| (\S+) \| (\d+) \| (\d+|-) \| (\d+|-) \|", line)
        if m:
            rows[m.group(1)] = (int(m.group(2)), m.group(3), m.group(4))
    return rows


def check_against_docs(marker, dtypes):
    want = recorded(marker)
    assert len(want) == len(conformance.names()) - len(conformance.EXCLUDED & set(
        conformance.names()))
    with mpsim.precision("golden"):
        got = {r.name: r for r in conformance.run(dtypes=dtypes)}
    worse = []
    for name, (samples, cpu, mps) in want.items():
        r = got[name]
        if cpu == "-":
            continue
        if r.why == "missing":
            worse.append(f"{name}: missing")
        elif r.cpu < int(cpu) or r.mps < int(mps):
            worse.append(f"{name}: cpu {r.cpu}/{r.samples} (was {cpu}), mps {r.mps} "
                         f"(was {mps}): {r.why}")
    assert not worse, "\n".join(worse)
    better = [n for n, (s, c, m) in want.items() if got[n].why != "missing" and
              (c == "-" or got[n].cpu > int(c) or got[n].mps > int(m))]
    if better:
        print("passing more than docs/conformance.md records (regenerate it):", better)


def test_no_op_passes_fewer_float32_samples_than_docs_record():
    check_against_docs("conformance table", (conformance.torch.float32,))


def test_no_op_passes_fewer_samples_of_the_other_dtypes_than_docs_record():
    check_against_docs("dtypes table", conformance.OTHER_DTYPES)


def test_the_comparison_catches_a_wrong_value_and_a_wrong_dtype():
    import numpy as np
    import torch
    import mpsim
    t = torch.tensor([1.0, 2.0, 3.0])
    exact = t.double() / 3
    assert conformance.compare(t / 3, mpsim.tensor(np.float32([1, 2, 3])) / 3, exact) is None
    off = mpsim.tensor(np.float32([1 / 3, 2 / 3, 1.0001]))
    assert "values off" in conformance.compare(t / 3, off, exact)
    assert "dtype" in conformance.compare(t / 3, mpsim.tensor(np.float64([1, 2, 3])) / 3,
                                          exact)
    assert "shape" in conformance.compare(t / 3, mpsim.tensor(np.float32([1, 2])), exact)


def test_tied_indices_are_judged_by_the_values_they_pick():
    import types
    import torch
    sample = types.SimpleNamespace(input=torch.tensor([3.0, 1.0, 3.0]), args=(1,), kwargs={})
    canon = conformance.CANONICAL["topk"]
    theirs = (torch.tensor([3.0]), torch.tensor([0]))
    tie = (mpsim.tensor(np.float32([3.0])), mpsim.tensor(np.int64([2])))
    wrong = (mpsim.tensor(np.float32([3.0])), mpsim.tensor(np.int64([1])))
    assert conformance.compare(canon(theirs, sample), canon(tie, sample), None) is None
    assert conformance.compare(canon(theirs, sample), canon(wrong, sample), None) is not None
    sort_sample = types.SimpleNamespace(input=torch.tensor([2.0, 2.0]), args=(), kwargs={})
    sort = conformance.CANONICAL["sort"]
    repeated = (mpsim.tensor(np.float32([2.0, 2.0])), mpsim.tensor(np.int64([0, 0])))
    assert conformance.compare(sort(torch.sort(sort_sample.input), sort_sample),
                               sort(repeated, sort_sample), None) is not None

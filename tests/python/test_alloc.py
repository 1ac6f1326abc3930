"""mpsim.alloc: PyTorch memory snapshots as mpsim allocation traces, and their replay.

No CUDA here: the snapshots are built as torch.cuda.memory._snapshot() returns them (a dict
whose "device_traces" holds one list of entries per device)."""

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

import mpsim
from mpsim.alloc import UNKNOWN_FREE, convert_torch_snapshot

SEG = 0x7F0000000000


def entry(action, addr=None, size=0, **extra):
    e = {"action": action, "size": size, "stream": 0, "frames": [], **extra}
    if addr is not None:
        e["addr"] = addr
    return e


# One device's history as PyTorch records it: each free is free_requested then
# free_completed; the address SEG is reused after its free; a free of an address allocated
# before recording began; the caching allocator's own segment actions, an OOM and a snapshot.
DEVICE0 = [
    entry("segment_alloc", SEG, 2 << 20),
    entry("alloc", SEG, 512),
    entry("alloc", SEG + 512, 1024),
    entry("free_requested", SEG, 512),
    entry("free_completed", SEG, 512),
    entry("alloc", SEG, 256),
    entry("free_requested", 0x1234, 64),
    entry("free_completed", 0x1234, 64),
    entry("oom", size=1 << 40, device_free=0),
    entry("free_requested", SEG + 512, 1024),
    entry("free_completed", SEG + 512, 1024),
    entry("snapshot", 0, 0),
    entry("segment_free", SEG, 2 << 20),
]
TEXT0 = """\
# mpsim allocator trace from a PyTorch memory snapshot, device 0
# events 5 allocs 3 frees 2 live at the end 1
# skipped: free_completed of an unknown address 1, free_requested 3, oom 1, segment_alloc 1, \
segment_free 1, snapshot 1
a 1 512
a 2 1024
f 1
a 3 256
f 2
"""


def snapshot(*devices):
    return {"segments": [], "device_traces": list(devices)}


def mpsim_bin():
    """The `mpsim` program of the build this module comes from (or $MPSIM_BIN)."""
    path = Path(os.environ.get("MPSIM_BIN") or
                Path(mpsim.__file__).resolve().parents[2] / "tools" / "mpsim")
    if not path.exists():
        pytest.skip(f"the mpsim program is not built at {path}")
    return str(path)


def test_trace_text_maps_alloc_and_free_completed():
    assert mpsim.alloc.trace_from_torch_snapshot(snapshot(DEVICE0)) == TEXT0


def test_counts_of_what_was_skipped():
    r = convert_torch_snapshot(snapshot(DEVICE0))
    assert (r.device, r.allocs, r.frees, r.alloc_over_live) == (0, 3, 2, 0)
    assert r.skipped == {"segment_alloc": 1, "free_requested": 3, UNKNOWN_FREE: 1, "oom": 1,
                         "snapshot": 1, "segment_free": 1}


def test_alloc_at_a_live_address_frees_the_older_block_first():
    r = convert_torch_snapshot(snapshot([entry("alloc", 64, 100), entry("alloc", 64, 200),
                                         entry("free_completed", 64, 200)]))
    assert r.text.splitlines()[-4:] == ["a 1 100", "f 1", "a 2 200", "f 2"]
    assert r.alloc_over_live == 1 and r.frees == 2
    assert "# 1 alloc(s) at a live address: the older block was freed first\n" in r.text


def test_device_choice():
    other = [entry("alloc", 8, 4096)]
    # The only device with events is taken by default.
    assert convert_torch_snapshot(snapshot([], other)).device == 1
    with pytest.raises(ValueError, match=r"events on devices \[0, 1\]; choose one with device=N"):
        convert_torch_snapshot(snapshot(DEVICE0, other))
    r = convert_torch_snapshot(snapshot(DEVICE0, other), device=1)
    assert r.text.endswith("a 1 4096\n") and r.allocs == 1
    with pytest.raises(ValueError, match="device 2 is not in the snapshot"):
        convert_torch_snapshot(snapshot(DEVICE0, other), device=2)
    empty = convert_torch_snapshot(snapshot())
    assert empty.allocs == 0 and empty.text.startswith("# mpsim allocator trace")


@pytest.mark.parametrize("bad,match", [
    ([], "not a PyTorch memory snapshot"),
    ({"segments": []}, "not a PyTorch memory snapshot"),
    ({"device_traces": {}}, "one list of entries per device"),
    (snapshot([entry("alloc", None, 10)]), r"entry 0 \(alloc\) has no non-negative integer 'addr'"),
    (snapshot([entry("alloc", 16, -1)]), r"entry 0 \(alloc\) has no non-negative integer 'size'"),
    (snapshot([entry("free_completed", "16")]), "'addr'"),
])
def test_bad_snapshots_raise_value_error(bad, match):
    with pytest.raises(ValueError, match=match):
        mpsim.alloc.trace_from_torch_snapshot(bad)


def test_alloc_replay_accepts_the_trace(tmp_path):
    trace = tmp_path / "snapshot.trace"
    trace.write_text(mpsim.alloc.trace_from_torch_snapshot(snapshot(DEVICE0)))
    p = subprocess.run([mpsim_bin(), "alloc-replay", str(trace), "--allocator", "buddy,caching",
                        "--json"], capture_output=True, text=True, timeout=60)
    assert p.returncode == 0, p.stderr
    report = json.loads(p.stdout)
    assert (report["events"], report["allocs"], report["frees"]) == (5, 3, 2)
    assert report["peak_requested_bytes"] == 512 + 1024
    assert all(a["invariant_violations"] == 0 for a in report["allocators"])


def run_module(*args):
    env = dict(os.environ, PYTHONPATH=str(Path(mpsim.__file__).resolve().parents[1]))
    return subprocess.run([sys.executable, "-m", "mpsim.alloc", *map(str, args)],
                          capture_output=True, text=True, env=env, timeout=60)


def test_module_converts_a_pickled_snapshot(tmp_path):
    pickled = tmp_path / "snapshot.pickle"
    pickled.write_bytes(pickle.dumps(snapshot(DEVICE0)))
    out = tmp_path / "out.trace"
    p = run_module(pickled, "-o", out)
    assert p.returncode == 0, p.stderr
    assert out.read_text() == TEXT0
    assert p.stderr.startswith("device 0: 3 allocs, 2 frees; skipped: ")
    p = run_module(pickled, "-o", "-")
    assert p.returncode == 0 and p.stdout == TEXT0


def test_module_bad_input_is_one_line_and_exit_2(tmp_path):
    garbage = tmp_path / "garbage.pickle"
    garbage.write_bytes(b"not a pickle")
    not_snapshot = tmp_path / "list.pickle"
    not_snapshot.write_bytes(pickle.dumps([1, 2]))
    out = tmp_path / "out.trace"
    for path in (garbage, not_snapshot, tmp_path / "missing.pickle"):
        p = run_module(path, "-o", out)
        assert p.returncode == 2 and len(p.stderr.splitlines()) == 1, p.stderr
        assert p.stderr.startswith("python3 -m mpsim.alloc: error: ")
        assert not out.exists()


def test_module_output_keeps_what_the_path_names(tmp_path):
    """Note [safe outputs]: never over its own input, a link stays a link, read-only kept."""
    pickled = tmp_path / "snapshot.pickle"
    pickled.write_bytes(pickle.dumps(snapshot(DEVICE0)))
    before = pickled.read_bytes()
    p = run_module(pickled, "-o", pickled)
    assert p.returncode == 2 and "it is the input" in p.stderr, p.stderr
    assert pickled.read_bytes() == before
    real = tmp_path / "real.trace"
    real.write_text("old")
    link = tmp_path / "link.trace"
    link.symlink_to("real.trace")
    p = run_module(pickled, "-o", link)
    assert p.returncode == 0, p.stderr
    assert link.is_symlink() and real.read_text() == TEXT0
    ro = tmp_path / "ro.trace"
    ro.write_text("keep")
    ro.chmod(0o444)
    p = run_module(pickled, "-o", ro)
    assert p.returncode == 2 and "read-only" in p.stderr, p.stderr
    assert ro.read_text() == "keep"
    p = run_module(pickled, "-o", "/dev/full")
    assert p.returncode == 2 and "No space left" in p.stderr, p.stderr

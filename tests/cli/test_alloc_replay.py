"""`mpsim alloc-replay` on traces: the timeline CSV, runs under a memory limit, the bisected
minimum limit, the size syntax of --limit, bad trace paths, --json, and the progress line.

The figures of the small traces are computed by hand from the buddy allocator's rules
(docs/allocator.md): blocks are runs of 256-byte units at the lowest address that fits, and
reserved memory is counted in 2 MiB commit granules that stay committed once touched.

Run by ctest (tests/cli/CMakeLists.txt) as: /usr/bin/python3 -m pytest
tests/cli/test_alloc_replay.py, with MPSIM_BIN naming the built program.
"""
import csv
import json
import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

import cli_pty

MPSIM = os.environ.get("MPSIM_BIN", "mpsim")
MIB = 1 << 20
GRANULE = 2 * MIB
SHARED_SD = Path(__file__).resolve().parents[2].parent / "shared/traces/sd15_unet_fp16_8steps.trace"


def mpsim(*args, **kwargs):
    p = subprocess.run([MPSIM, *map(str, args)], capture_output=True, text=True, timeout=120,
                       **kwargs)
    return p.returncode, p.stdout, p.stderr


def write(path, text):
    path.write_text(text)
    return path


# Six events with small blocks: every figure fits in one granule.
SMALL = "# hand-computed\na 1 1000\na 2 3000\nf 1\na 3 600\nf 2\nf 3\n"
# (requested, allocated = sizes rounded up to 256 B) after each event; reserved is one granule.
SMALL_ROWS = [(1000, 1024), (4000, 4096), (3000, 3072), (3600, 3840), (600, 768), (0, 0)]

# Granules g0 = [0, 2M), g1 = [2M, 4M), g2 = [4M, 6M). Block 1 takes [0, 1M) and commits g0,
# block 2 [1M, 3M) commits g1 (4 MiB reserved); after block 1's free, block 3 (3 MiB) does not
# fit in [0, 1M) and goes to [3M, 6M), committing g2: 6 MiB reserved, peak requested 5 MiB.
# Under a 4 MiB limit event 3 fails with 2 MiB in use; 6 MiB is the smallest limit that fits.
LIMITED = "a 1 1048576\na 2 2097152\nf 1\na 3 3145728\nf 2\nf 3\n"


@pytest.fixture
def small(tmp_path):
    return write(tmp_path / "small.trace", SMALL)


@pytest.fixture
def limited(tmp_path):
    return write(tmp_path / "limited.trace", LIMITED)


def test_timeline_csv_holds_the_hand_computed_figures(small, tmp_path):
    out = tmp_path / "timeline.csv"
    rc, stdout, err = mpsim("alloc-replay", small, "--allocator", "buddy,caching",
                            "--timeline", out)
    assert rc == 0, err
    assert f"timeline             {out}" in stdout
    with open(out, newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["allocator", "event", "requested", "allocated", "reserved"]
    expected = [[name, str(i), str(req), str(alloc), str(GRANULE)]
                for name in ("buddy", "caching") for i, (req, alloc) in enumerate(SMALL_ROWS)]
    assert rows[1:] == expected


def test_timeline_of_a_peer_samples_its_resident_set(small, tmp_path):
    out = tmp_path / "timeline.csv"
    rc, _, err = mpsim("alloc-replay", small, "--allocator", "malloc", "--timeline", out)
    assert rc == 0, err
    with open(out, newline="") as f:
        rows = list(csv.DictReader(f))
    assert [int(r["requested"]) for r in rows] == [req for req, _ in SMALL_ROWS]
    # The peer's allocated bytes are its requests rounded to the replay's 256-byte alignment.
    assert [int(r["allocated"]) for r in rows] == [alloc for _, alloc in SMALL_ROWS]
    assert all(int(r["reserved"]) >= 0 for r in rows)


def test_timeline_to_a_missing_directory_is_bad_input(small, tmp_path):
    rc, out, err = mpsim("alloc-replay", small, "--timeline", tmp_path / "no" / "t.csv")
    assert rc == 2 and out == ""
    assert len(err.splitlines()) == 1 and "timeline" in err


@pytest.mark.parametrize("allocator", ["buddy", "caching"])
def test_limit_reports_the_first_failing_event(limited, allocator):
    rc, out, err = mpsim("alloc-replay", limited, "--allocator", allocator, "--limit", "4M",
                         "--json")
    assert rc == 1, err  # a trace that does not fit is a failed check
    report = json.loads(out)
    assert report["limit_bytes"] == 4 * MIB
    (a,) = report["allocators"]
    assert a["allocator"] == allocator and a["invariant_violations"] == 0
    assert a["limit"]["fits"] is False
    failure = a["limit"]["first_failure"]
    assert failure["event"] == 3 and failure["id"] == 3 and failure["bytes"] == 3 * MIB
    assert failure["requested_in_use_bytes"] == 2 * MIB
    assert failure["allocated_in_use_bytes"] == 2 * MIB
    assert failure["reserved_bytes"] == 4 * MIB
    assert "out of memory" in failure["message"]

    rc, out, err = mpsim("alloc-replay", limited, "--allocator", allocator, "--limit", "4M")
    assert rc == 1, err
    assert ("under the limit      fails at event 3 (a 3 3145728 = 3.00 MiB): in use 2.00 MiB "
            "requested, 2.00 MiB allocated; 4.00 MiB reserved") in out


def test_limit_that_fits_reports_no_failure(limited):
    rc, out, err = mpsim("alloc-replay", limited, "--allocator", "buddy,caching", "--limit", "6M",
                         "--json")
    assert rc == 0, err
    for a in json.loads(out)["allocators"]:
        assert a["limit"] == {"bytes": 6 * MIB, "fits": True, "first_failure": None,
                              "peak_reserved_bytes": 6 * MIB}
        assert a["invariant_checks"] == 6 and a["invariant_violations"] == 0
    rc, out, _ = mpsim("alloc-replay", limited, "--limit", "6291456")
    assert rc == 0 and "under the limit      fits: no event fails (peak reserved 6.00 MiB)" in out


def test_min_limit_is_the_smallest_that_fits(limited):
    rc, out, err = mpsim("alloc-replay", limited, "--allocator", "buddy,caching", "--min-limit",
                         "--json")
    assert rc == 0, err
    for a in json.loads(out)["allocators"]:
        assert a["min_limit"]["bytes"] == 6 * MIB
        assert a["min_limit"]["granule_bytes"] == GRANULE
    rc, out, _ = mpsim("alloc-replay", limited, "--min-limit")
    assert rc == 0
    assert "min limit            6.00 MiB (6291456 B; one 2.00 MiB granule less fails" in out


@pytest.mark.skipif(not SHARED_SD.exists(), reason=f"shared trace not found at {SHARED_SD}")
@pytest.mark.parametrize("allocator", ["buddy", "caching"])
def test_min_limit_on_the_sd_unet_trace(allocator):
    rc, out, err = mpsim("alloc-replay", SHARED_SD, "--allocator", allocator, "--min-limit",
                         "--json")
    assert rc == 0, err
    report = json.loads(out)
    (a,) = report["allocators"]
    found = a["min_limit"]["bytes"]
    assert found % GRANULE == 0
    assert report["peak_requested_bytes"] <= found <= a["peak_reserved_bytes"]
    rc, out, err = mpsim("alloc-replay", SHARED_SD, "--allocator", allocator, "--limit", found,
                         "--json")
    assert rc == 0, err
    assert json.loads(out)["allocators"][0]["limit"]["fits"] is True
    rc, out, err = mpsim("alloc-replay", SHARED_SD, "--allocator", allocator, "--limit",
                         found - GRANULE, "--json")
    assert rc == 1, err
    assert json.loads(out)["allocators"][0]["limit"]["fits"] is False


@pytest.mark.parametrize("text,bytes_", [("8G", 8 << 30), ("8GiB", 8 << 30), ("8gb", 8 << 30),
                                         ("512MiB", 512 * MIB), ("64k", 64 << 10),
                                         ("1048576", MIB), ("3 M", 3 * MIB)])
def test_limit_sizes(small, text, bytes_):
    rc, out, err = mpsim("alloc-replay", small, "--limit", text, "--json")
    # Below one 2 MiB granule nothing fits (exit 1); the limit is parsed all the same.
    assert rc == (0 if bytes_ >= GRANULE else 1), err
    assert json.loads(out)["limit_bytes"] == bytes_


@pytest.mark.parametrize("text", ["8X", "-1G", "0", "1.5G", "", "G8", "abc", "99999999E",
                                  "8 G B"])
def test_bad_limit_is_one_line_and_exit_2(small, text):
    rc, out, err = mpsim("alloc-replay", small, "--limit", text)
    assert rc == 2 and out == ""
    assert len(err.splitlines()) == 1, err
    assert err.startswith("mpsim alloc-replay: error: --limit: ")


def test_limit_needs_an_allocator_with_a_limit(small):
    for flag in (["--limit", "1G"], ["--min-limit"]):
        rc, out, err = mpsim("alloc-replay", small, "--allocator", "buddy,malloc", *flag)
        assert rc == 2 and out == "" and len(err.splitlines()) == 1 and "'malloc'" in err


def test_a_directory_is_not_a_trace(tmp_path):
    rc, out, err = mpsim("alloc-replay", tmp_path)
    assert rc == 2 and out == ""
    assert err == f"mpsim alloc-replay: error: [alloc trace] cannot read '{tmp_path}': it is a " \
                  "directory, not a trace file\n"


def test_a_missing_trace(tmp_path):
    rc, out, err = mpsim("alloc-replay", tmp_path / "none.trace")
    assert rc == 2 and out == ""
    assert err.splitlines() == [f"mpsim alloc-replay: error: [alloc trace] cannot read "
                                f"'{tmp_path / 'none.trace'}': No such file or directory"]


def test_an_unreadable_trace(tmp_path):
    path = write(tmp_path / "locked.trace", SMALL)
    path.chmod(0)
    # root reads any file: run the program as nobody, for whom the file is unreadable too. That
    # needs the program (and its library beside it) reachable by others: a build under a 0700
    # directory (mktemp -d) is not, and then this case cannot be made as root.
    as_nobody = (lambda: os.setuid(65534)) if os.geteuid() == 0 else None
    if as_nobody is not None:
        program = Path(shutil.which(MPSIM) or MPSIM).resolve()
        if not all(p.stat().st_mode & stat.S_IXOTH for p in [program, *program.parents]):
            pytest.skip(f"{program} is not reachable by nobody, and root reads any file")
    rc, out, err = mpsim("alloc-replay", path, preexec_fn=as_nobody)
    assert rc == 2 and out == ""
    assert err.splitlines() == [f"mpsim alloc-replay: error: [alloc trace] cannot read "
                                f"'{path}': Permission denied"]


def test_json_report(small):
    rc, out, err = mpsim("alloc-replay", small, "--allocator", "buddy,caching", "--json")
    assert rc == 0 and err == ""
    report = json.loads(out)
    assert {k: report[k] for k in ("events", "allocs", "frees", "peak_requested_bytes",
                                   "limit_bytes", "timeline")} == {
        "events": 6, "allocs": 3, "frees": 3, "peak_requested_bytes": 4000,
        "limit_bytes": None, "timeline": None}
    assert [a["allocator"] for a in report["allocators"]] == ["buddy", "caching"]
    for a in report["allocators"]:
        assert a["peak_reserved_bytes"] == GRANULE
        assert a["ratio"] == pytest.approx(GRANULE / 4000)
        assert a["invariant_checks"] == 6 and a["invariant_violations"] == 0
        assert "limit" not in a and "min_limit" not in a


def read_pty(*args):
    return cli_pty.read_pty(MPSIM, *args)


def test_progress_only_on_a_terminal_and_not_with_json(limited):
    rc, _, err = mpsim("alloc-replay", limited, "--min-limit")
    assert rc == 0 and err == ""  # stderr is a pipe here: no progress line
    rc, out, tty = read_pty("alloc-replay", limited, "--min-limit")
    assert rc == 0 and "min limit" in out
    assert "alloc-replay: buddy: timed pass: 1 / 6 events" in tty
    assert tty.endswith("\r\x1b[K")  # the line is cleared before the report
    rc, out, tty = read_pty("alloc-replay", limited, "--min-limit", "--json")
    assert rc == 0 and json.loads(out)["allocators"][0]["min_limit"]["bytes"] == 6 * MIB
    assert tty == ""


def test_stress_still_runs_and_is_quiet_off_a_terminal():
    rc, out, err = mpsim("alloc-replay", "--stress", "--ops", "2000", "--allocator", "caching",
                         "--json")
    assert rc == 0 and err == ""
    assert json.loads(out)["invariant_violations"] == 0

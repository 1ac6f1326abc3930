"""mpsim.batch and `python3 -m mpsim.batch` (docs/scale-out.md): golden outputs for a manifest,
the same bits however sharded, resumable by checksum, failures reported by id; on a Dask
cluster, also when a worker is killed mid-run."""

import json
import os
import pathlib
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import mpsim
import mpsim.batch as batch


def write_manifest(path, n_extra=0):
    np.save(path.parent / "a.npy", np.random.default_rng(0).standard_normal((8, 16)).astype(
        np.float32))
    cases = [
        {"id": "mm", "op": "matmul", "inputs": [{"npy": "a.npy"}, {"shape": [16, 4], "seed": 3}]},
        {"id": "gelu-bf16", "op": "gelu",
         "inputs": [{"shape": [1000], "dtype": "bfloat16", "seed": 5}],
         "attrs": {"approximate": "tanh"}},
        {"id": "softmax", "op": "softmax",
         "inputs": [{"shape": [4, 77], "dtype": "float16", "seed": 6,
                     "distribution": "uniform", "low": -5, "high": 5}],
         "attrs": {"dim": -1}},
        {"id": "bad", "op": "matmul", "inputs": [{"npy": "a.npy"}, {"npy": "a.npy"}]},
        {"id": "var_mean", "op": "var_mean", "inputs": [{"shape": [6, 9], "seed": 8}],
         "attrs": {"dim": [1]}},
        {"id": "ints", "op": "exp", "inputs": [{"shape": [5], "seed": 9, "distribution":
                                                "randint", "high": 4, "dtype": "int64"}]},
    ]
    cases += [{"id": f"conv-{i}", "op": "conv2d", "inputs": [
        {"shape": [1, 16, 32, 32], "seed": 100 + i}, {"shape": [16, 16, 3, 3], "seed": 200 + i}],
        "attrs": {"padding": 1}} for i in range(n_extra)]
    path.write_text("".join(json.dumps(c) + "\n" for c in cases))
    return cases


def files(d):
    return {p.name: p.read_bytes() for p in pathlib.Path(d).glob("*.npy")}


def test_outputs_are_golden_and_the_same_however_sharded(tmp_path):
    m = tmp_path / "m.jsonl"
    write_manifest(m)
    whole = batch.run(m, tmp_path / "whole")
    assert [e["id"] for e in whole] == ["mm", "gelu-bf16", "softmax", "bad", "var_mean", "ints"]
    for k in range(3):
        batch.run_shard(m, tmp_path / "sharded", (k, 3))
    assert files(tmp_path / "whole") == files(tmp_path / "sharded")
    assert sorted(files(tmp_path / "whole")) == ["gelu-bf16.npy", "ints.npy", "mm.npy",
                                                 "softmax.npy", "var_mean.0.npy",
                                                 "var_mean.1.npy"]
    # the values: the op on the inputs the specs describe
    mpsim.manual_seed(3)
    b = mpsim.randn([16, 4])
    a = np.load(tmp_path / "a.npy")
    np.testing.assert_array_equal(np.load(tmp_path / "whole" / "mm.npy"),
                                  mpsim.matmul(mpsim.tensor(a), b).numpy())
    bf = np.load(tmp_path / "whole" / "gelu-bf16.npy")
    assert bf.dtype == np.dtype("V2") and bf.shape == (1000,)
    entry = next(e for e in whole if e["id"] == "softmax")
    assert entry["outputs"][0]["dtype"] == "float16" and len(entry["outputs"][0]["sha256"]) == 64


def test_a_failed_case_is_reported_and_the_others_finish(tmp_path):
    m = tmp_path / "m.jsonl"
    write_manifest(m)
    entries = batch.run(m, tmp_path / "out")
    bad = [e for e in entries if e["status"] != "ok"]
    assert [e["id"] for e in bad] == ["bad"] and "ShapeError" in bad[0]["error"]
    assert sum(e["status"] == "ok" for e in entries) == 5


def test_resume_reuses_verified_outputs_and_recomputes_the_rest(tmp_path):
    m = tmp_path / "m.jsonl"
    write_manifest(m)
    out = tmp_path / "out"
    batch.run_shard(m, out, (0, 1))
    before = files(out)
    (out / "softmax.npy").write_bytes(b"corrupted")
    again = batch.run_shard(m, out, (0, 1))
    reused = {e["id"] for e in again if e.get("reused")}
    assert reused == {"mm", "gelu-bf16", "var_mean", "ints"}  # softmax: checksum; bad: failed
    assert files(out) == before


@pytest.mark.parametrize("line,message", [
    ("not json", "not JSON"),
    ('{"id": "x"}', "string id and op"),
    ('{"id": "../x", "op": "exp"}', "not a file name"),
    ('{"id": "x", "op": "no_such_op"}', "unknown op"),
])
def test_bad_manifests_name_the_line(tmp_path, line, message):
    m = tmp_path / "m.jsonl"
    ok = '{"id": "ok", "op": "exp", "inputs": [{"shape": [2], "seed": 1}]}\n'
    m.write_text(ok + line + "\n")
    with pytest.raises(batch.ManifestError, match=f"m.jsonl:2: .*{message}"):
        batch.load_manifest(m)


def test_command_line_exit_codes(tmp_path):
    m = tmp_path / "m.jsonl"
    write_manifest(m)

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "mpsim.batch", *map(str, args)],
                              capture_output=True, text=True, env=dict(os.environ))

    p = cli(m, "--out", tmp_path / "o", "--quiet")
    assert p.returncode == 1 and "case bad failed" in p.stderr and "5 of 6" in p.stdout
    assert cli(m, "--out", tmp_path / "o", "--shard", "3/3").returncode == 2
    assert cli(tmp_path / "missing.jsonl", "--out", tmp_path / "o").returncode == 2


def test_dask_cluster_with_a_worker_killed_mid_run(tmp_path):
    distributed = pytest.importorskip("distributed")
    m = tmp_path / "m.jsonl"
    write_manifest(m, n_extra=40)
    local = batch.run(m, tmp_path / "local")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None, silence_logs=50) as cluster, \
            distributed.Client(cluster) as client:
        pids = client.run(os.getpid)
        victim = sorted(pids.values())[0]

        def kill_after_the_first_shard():  # mid-run: one shard written, seven to go
            while not list((tmp_path / "dask").glob("index-*-of-8.jsonl")):
                time.sleep(0.01)
            os.kill(victim, signal.SIGKILL)

        killer = threading.Thread(target=kill_after_the_first_shard, daemon=True)
        killer.start()
        entries = batch.run(m, tmp_path / "dask", client=client, shards=8)
        killer.join(timeout=5)
        assert victim not in client.run(os.getpid).values()  # the nanny started a new one
    assert [e["id"] for e in entries] == [e["id"] for e in local]  # each case once, in order
    assert files(tmp_path / "dask") == files(tmp_path / "local")
    index = (tmp_path / "dask" / "index.jsonl").read_text().splitlines()
    assert len(index) == len(local)

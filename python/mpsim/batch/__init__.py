"""Golden outputs for a manifest of cases, sharded and resumable (docs/scale-out.md).

    python3 -m mpsim.batch MANIFEST.jsonl --out DIR [--shard K/N]
    mpsim.batch.run("cases.jsonl", "goldens/")                 # one machine
    mpsim.batch.run("cases.jsonl", "goldens/", client=client)  # a Dask cluster

A manifest has one JSON object per line: {"id": "mm-0001", "op": "matmul", "inputs": [...],
"attrs": {...}}. An input is {"npy": "path"} (relative to the manifest's directory) or a
generator spec {"shape": [64, 320], "dtype": "float16", "distribution": "normal", "seed": 7}
(distribution normal, uniform (low, high) or randint (low, high); mpsim's counter-based
generator, so every machine makes the same values). Each case's outputs are written to
DIR/<id>.npy (DIR/<id>.<k>.npy for several) and listed with their SHA-256 in the shard's index
DIR/index-K-of-N.jsonl; a case already there with matching checksums is not recomputed. A case
that fails is listed with its error and does not stop the others. The outputs are the same
bits however the cases are sharded."""

import hashlib
import json
import os
import pathlib
import sys
import tempfile

import numpy as np

DISTRIBUTIONS = ("normal", "uniform", "randint")


class ManifestError(ValueError):
    """A manifest line that is not a case."""


def load_manifest(path):
    """The manifest's cases, in file order; ManifestError names the line of a bad one."""
    import mpsim
    cases, seen = [], set()
    for n, line in enumerate(pathlib.Path(path).read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            case = json.loads(line)
        except json.JSONDecodeError as e:
            raise ManifestError(f"{path}:{n}: not JSON ({e})") from None
        if not isinstance(case, dict) or not isinstance(case.get("id"), str) or \
                not isinstance(case.get("op"), str):
            raise ManifestError(f"{path}:{n}: a case needs a string id and op")
        if not case["id"] or "/" in case["id"] or case["id"].startswith("."):
            raise ManifestError(f"{path}:{n}: id {case['id']!r} is not a file name")
        if case["id"] in seen:
            raise ManifestError(f"{path}:{n}: id {case['id']!r} repeats")
        if case["op"] not in mpsim.ops:
            raise ManifestError(f"{path}:{n}: unknown op {case['op']!r}")
        seen.add(case["id"])
        case["_line"] = n
        cases.append(case)
    return cases


def _input(spec, base):
    import mpsim
    if "npy" in spec:
        a = np.load(base / spec["npy"], allow_pickle=False)
        if a.dtype.kind == "V" and a.dtype.itemsize == 2:  # bfloat16 by mpsim's convention
            bits = a.view(np.uint16).astype(np.uint32) << 16
            return mpsim.tensor(bits.view(np.float32), dtype=mpsim.bfloat16)
        return mpsim.tensor(a)
    dist = spec.get("distribution", "normal")
    if dist not in DISTRIBUTIONS:
        raise ValueError(f"distribution {dist!r} is not one of {', '.join(DISTRIBUTIONS)}")
    shape = [int(s) for s in spec["shape"]]
    dtype = getattr(mpsim, spec.get("dtype", "float32"))
    mpsim.manual_seed(int(spec["seed"]))
    if dist == "normal":
        return mpsim.randn(shape, dtype=dtype)
    if dist == "uniform":
        return mpsim.uniform(shape, spec.get("low", 0.0), spec.get("high", 1.0), dtype=dtype)
    return mpsim.randint(int(spec.get("low", 0)), int(spec["high"]), shape, dtype=dtype)


def _save(tensor, path):
    """np.save of an mpsim tensor (bfloat16 as '<V2' records), written whole or not at all."""
    import mpsim
    if tensor.dtype == mpsim.bfloat16:
        bits = tensor.to(mpsim.float32).numpy().view(np.uint32) >> 16
        array = bits.astype(np.uint16).view("V2")
    else:
        array = tensor.numpy()
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix="." + path.name)
    with os.fdopen(fd, "wb") as f:
        np.save(f, array)
    os.replace(tmp, path)


def _sha256(path):
    return hashlib.sha256(pathlib.Path(path).read_bytes()).hexdigest()


def run_case(case, base, out_dir, precision="golden"):
    """Computes one case; its index entry."""
    import mpsim
    entry = {"id": case["id"], "op": case["op"]}
    try:
        inputs = [_input(s, base) for s in case.get("inputs", [])]
        with mpsim.precision(case.get("precision", precision)):
            result = getattr(mpsim, case["op"])(*inputs, **case.get("attrs", {}))
        outs = list(result) if isinstance(result, (list, tuple)) else [result]
        entry["outputs"] = []
        for k, t in enumerate(outs):
            name = f"{case['id']}.npy" if len(outs) == 1 else f"{case['id']}.{k}.npy"
            _save(t, out_dir / name)
            entry["outputs"].append({"file": name, "sha256": _sha256(out_dir / name),
                                     "shape": list(t.shape),
                                     "dtype": str(t.dtype).replace("mpsim.", "")})
        entry["status"] = "ok"
    except Exception as e:  # the case's own failure: recorded, the others go on
        entry["status"], entry["error"] = "error", f"{type(e).__name__}: {e}"
    return entry


def _done(entry, out_dir):
    return entry.get("status") == "ok" and all(
        (out_dir / o["file"]).exists() and _sha256(out_dir / o["file"]) == o["sha256"]
        for o in entry["outputs"])


def run_shard(manifest, out_dir, shard=(0, 1), progress=False):
    """Computes every N-th case of the manifest from the K-th (shard = (K, N)), skipping those
    whose outputs are already there with their checksums; writes and returns the shard's index
    entries (in manifest order)."""
    k, n = shard
    if not (isinstance(n, int) and isinstance(k, int) and n >= 1 and 0 <= k < n):
        raise ValueError(f"shard K/N needs 0 <= K < N, got {k}/{n}")
    manifest = pathlib.Path(manifest)
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    cases = load_manifest(manifest)[k::n]
    index = out_dir / f"index-{k}-of-{n}.jsonl"
    previous = {}
    if index.exists():
        for line in index.read_text().splitlines():
            e = json.loads(line)
            previous[e["id"]] = e
    entries = []
    for i, case in enumerate(cases):
        old = previous.get(case["id"])
        if old is not None and _done(old, out_dir):
            entry = dict(old, reused=True)
        else:
            entry = run_case(case, manifest.parent, out_dir)
        entries.append(entry)
        if progress:
            failed = sum(e["status"] != "ok" for e in entries)
            print(f"\rmpsim batch {k}/{n}: {i + 1}/{len(cases)} cases, {failed} failed",
                  end="", file=sys.stderr, flush=True)
    if progress:
        print(file=sys.stderr)
    fd, tmp = tempfile.mkstemp(dir=out_dir, prefix="." + index.name)
    with os.fdopen(fd, "w") as f:
        for e in entries:
            f.write(json.dumps({key: v for key, v in e.items() if key != "reused"}) + "\n")
    os.replace(tmp, index)
    return entries


def run(manifest, out_dir, client=None, shards=None, progress=False):
    """All the manifest's cases: on this machine (client None), or as `shards` tasks (default:
    twice the workers) on a dask.distributed Client, each computing one shard; a task lost with
    its worker is run again by Dask and reuses what the lost run finished. Writes
    OUT_DIR/index.jsonl (every case, in manifest order) and returns its entries."""
    out_dir = pathlib.Path(out_dir)
    load_manifest(manifest)  # a bad manifest fails here, before any work
    if client is None:
        n = shards or 1
        parts = [run_shard(manifest, out_dir, (k, n), progress) for k in range(n)]
    else:
        n = shards or 2 * max(1, len(client.scheduler_info()["workers"]))
        futures = [client.submit(run_shard, str(manifest), str(out_dir), (k, n), pure=False)
                   for k in range(n)]
        parts = client.gather(futures)
    order = {c["id"]: i for i, c in enumerate(load_manifest(manifest))}
    entries = sorted((e for p in parts for e in p), key=lambda e: order[e["id"]])
    with open(out_dir / "index.jsonl", "w") as f:
        for e in entries:
            f.write(json.dumps({key: v for key, v in e.items() if key != "reused"}) + "\n")
    return entries

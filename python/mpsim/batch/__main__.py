"""python3 -m mpsim.batch MANIFEST.jsonl --out DIR [--shard K/N]: golden outputs for a manifest
(mpsim.batch; docs/scale-out.md). Exit status: 0 every case computed, 1 some case failed (each
listed with its id), 2 bad input (the manifest, the options)."""

import argparse
import sys

from . import ManifestError, run, run_shard


def main(argv):
    parser = argparse.ArgumentParser(prog="mpsim batch", description=(
        "Compute golden outputs for a manifest of cases (JSON lines), resumable and sharded."))
    parser.add_argument("manifest")
    parser.add_argument("--out", required=True, help="the output directory")
    parser.add_argument("--shard", default=None, metavar="K/N",
                        help="compute every N-th case from the K-th (0 <= K < N)")
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    try:
        if args.shard:
            k, _, n = args.shard.partition("/")
            try:
                shard = (int(k), int(n))
            except ValueError:
                raise ValueError(f"--shard takes K/N, got {args.shard!r}") from None
            entries = run_shard(args.manifest, args.out, shard, progress=not args.quiet)
        else:
            entries = run(args.manifest, args.out, progress=not args.quiet)
    except (ManifestError, ValueError, OSError) as e:
        print(f"mpsim batch: error: {e}", file=sys.stderr)
        return 2
    failed = [e for e in entries if e["status"] != "ok"]
    for e in failed:
        print(f"mpsim batch: case {e['id']} failed: {e['error']}", file=sys.stderr)
    reused = sum(1 for e in entries if e.get("reused"))
    print(f"{len(entries) - len(failed)} of {len(entries)} cases computed ({reused} reused from "
          f"an earlier run), {len(failed)} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

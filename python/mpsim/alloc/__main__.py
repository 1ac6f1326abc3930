"""python3 -m mpsim.alloc SNAPSHOT.pickle -o TRACE: a pickled PyTorch memory snapshot to an mpsim
allocation trace (see mpsim.alloc). Exit 0 on success, 2 on bad input (one line on stderr)."""

import argparse
import os
import pickle
import sys

from . import convert_torch_snapshot


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        prog="python3 -m mpsim.alloc",
        description="Convert a pickled PyTorch memory snapshot (torch.cuda.memory._dump_snapshot) "
                    "into an mpsim allocation trace for `mpsim alloc-replay`. Only load "
                    "snapshots you trust: unpickling can run code.")
    parser.add_argument("snapshot", help="the pickled snapshot")
    parser.add_argument("-o", "--output", required=True,
                        help="the trace file to write ('-': stdout)")
    parser.add_argument("--device", type=int, default=None,
                        help="the device whose trace to convert (default: the only one with "
                             "events)")
    args = parser.parse_args(argv)

    try:
        with open(args.snapshot, "rb") as f:
            snapshot = pickle.load(f)
        result = convert_torch_snapshot(snapshot, args.device)
    except (OSError, pickle.UnpicklingError, EOFError, ValueError, AttributeError,
            ModuleNotFoundError) as e:
        print(f"python3 -m mpsim.alloc: error: {args.snapshot}: {e}", file=sys.stderr)
        return 2
    if args.output == "-":
        sys.stdout.write(result.text)
    else:
        # Written beside the target and renamed, so a failure leaves no partial trace.
        tmp = f"{args.output}.tmp{os.getpid()}"
        try:
            with open(tmp, "w") as f:
                f.write(result.text)
            os.replace(tmp, args.output)
        except OSError as e:
            if os.path.exists(tmp):
                os.remove(tmp)
            print(f"python3 -m mpsim.alloc: error: cannot write {args.output}: {e}",
                  file=sys.stderr)
            return 2
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(result.skipped.items())) or "none"
    print(f"device {result.device}: {result.allocs} allocs, {result.frees} frees; skipped: "
          f"{skipped}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

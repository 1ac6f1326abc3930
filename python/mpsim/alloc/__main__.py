"""python3 -m mpsim.alloc SNAPSHOT.pickle -o TRACE: a pickled PyTorch memory snapshot to an mpsim
allocation trace (see mpsim.alloc). Exit 0 on success, 2 on bad input (one line on stderr)."""

import argparse
import os
import pickle
import stat
import sys
import tempfile

from . import convert_torch_snapshot


def write_output(path, text, inputs=()):
    """Writes `text` to `path` as mpsim's C++ tools do (Note [safe outputs] in
    base/output_file.h): a regular file (or nothing) through a temporary file renamed over it, at
    the file a symbolic link points to; a FIFO or device written through; a directory, a file
    without write permission or one of `inputs` refused with OSError."""
    target = os.path.realpath(path)
    try:
        st = os.stat(target)
    except FileNotFoundError:
        st = None
    if st is not None:
        for name in inputs:
            if os.path.exists(name) and os.path.samefile(name, target):
                raise OSError(f"it is the input '{name}'; choose another output")
        if stat.S_ISDIR(st.st_mode):
            raise OSError("it is a directory")
        if not stat.S_ISREG(st.st_mode):
            with open(target, "w") as f:  # a FIFO or a device: in place, as np.save
                f.write(text)
            return
        if not os.access(target, os.W_OK) or not st.st_mode & 0o222:
            raise OSError("the file is read-only (not replaced)")
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(target) or ".",
                               prefix=os.path.basename(target) + ".tmp.")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(text)
        if st is not None:
            os.chmod(tmp, stat.S_IMODE(st.st_mode))
        else:
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, target)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


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
        try:
            write_output(args.output, result.text, inputs=[args.snapshot])
        except OSError as e:
            print(f"python3 -m mpsim.alloc: error: cannot write {args.output}: {e}",
                  file=sys.stderr)
            return 2
    skipped = ", ".join(f"{k} {v}" for k, v in sorted(result.skipped.items())) or "none"
    print(f"device {result.device}: {result.allocs} allocs, {result.frees} frees; skipped: "
          f"{skipped}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""python3 -m mpsim.torch check SCRIPT.py:FUNCTION [--compute M] [--sample N] [--json]

FUNCTION() (no arguments) returns (model, args) or (model, args, kwargs): the model (an
nn.Module or a function) and its inputs; every aten call of model(*args, **kwargs) is judged
by mpsim.torch.check (docs/torch.md). Exit status: 0 every call passes, 1 some call fails,
2 bad input (the script, the function, the options)."""

import argparse
import importlib.util
import pathlib
import sys


def _load(target):
    path, sep, name = target.rpartition(":")
    if not sep or not path or not name:
        raise ValueError(f"expected SCRIPT.py:FUNCTION, got {target!r}")
    script = pathlib.Path(path)
    if not script.is_file():
        raise ValueError(f"no script {path}")
    sys.path.insert(0, str(script.resolve().parent))
    spec = importlib.util.spec_from_file_location(script.stem, script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    fn = getattr(module, name, None)
    if not callable(fn):
        raise ValueError(f"{path} has no function {name}")
    made = fn()
    if not isinstance(made, tuple) or len(made) not in (2, 3):
        raise ValueError(f"{name}() must return (model, args) or (model, args, kwargs)")
    model, args = made[0], tuple(made[1])
    kwargs = dict(made[2]) if len(made) == 3 else {}
    return model, args, kwargs


def main(argv):
    parser = argparse.ArgumentParser(prog="python3 -m mpsim.torch", description=(
        "Judge every aten call of a PyTorch model against mpsim's golden path."))
    sub = parser.add_subparsers(dest="command", required=True)
    check_p = sub.add_parser("check", help="run the model and judge each call")
    check_p.add_argument("target", help="SCRIPT.py:FUNCTION returning (model, args[, kwargs])")
    check_p.add_argument("--compute", default=None, help="as mpsim.testing.check's")
    check_p.add_argument("--sample", type=int, default=None, help="elements judged per output")
    check_p.add_argument("--json", action="store_true", help="print the report as JSON")
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    from . import check
    try:
        model, margs, mkwargs = _load(args.target)
        report = check(model, *margs, compute=args.compute, sample=args.sample, **mkwargs)
    except (ValueError, OSError, ImportError) as e:
        print(f"python3 -m mpsim.torch check: error: {e}", file=sys.stderr)
        return 2
    print(report.to_json() if args.json else report)
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

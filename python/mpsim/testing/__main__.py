"""python3 -m mpsim.testing check OP --actual OUT.npy --in A.npy [--in B.npy] [--attr k=v]
[--compute tf32] [--json]: judges a kernel's output with mpsim.testing.check (docs/verdicts.md).
`mpsim check` runs this. Exit status: 0 pass, 1 fail, 2 bad input."""

import argparse
import ast
import sys

import numpy as np


def _load(path):
    """A .npy file as an mpsim tensor (bfloat16 is mpsim's '<V2' convention)."""
    import mpsim
    a = np.load(path, allow_pickle=False)
    if a.dtype.kind == "V" and a.dtype.itemsize == 2:
        bits = a.view(np.uint16).astype(np.uint32) << 16
        return mpsim.tensor(bits.view(np.float32), dtype=mpsim.bfloat16)
    return mpsim.tensor(a)


def _value(text):
    """An attribute's value: a Python literal (1, 1e-5, True, None, [1, 2], 'tanh'), true/false,
    a comma-separated list of numbers, or else the text itself."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    if "," in text:
        try:
            return [ast.literal_eval(p) for p in text.split(",")]
        except (ValueError, SyntaxError):
            pass
    return text


def _compute(text):
    if text is None or text == "none":
        return None
    if text.startswith("fast_math"):
        _, _, k = text.partition(":")
        try:
            return ("fast_math", float(k))
        except ValueError:
            raise ValueError("--compute fast_math:K needs the ULP budget K, e.g. fast_math:4")
    return text


def main(argv):
    parser = argparse.ArgumentParser(prog="mpsim check", description=(
        "Judge a kernel's output against mpsim's golden result within the error bound of the "
        "kernel's arithmetic (exit 0 pass, 1 fail, 2 bad input)."))
    parser.add_argument("op", help="the op's torch name (matmul, nn.functional.gelu, ...)")
    parser.add_argument("--actual", required=True, help="the kernel's output (.npy)")
    parser.add_argument("--in", dest="inputs", action="append", default=[],
                        help="a tensor argument (.npy), in the op's order (repeat)")
    parser.add_argument("--attr", action="append", default=[], metavar="NAME=VALUE",
                        help="a keyword argument (repeat)")
    parser.add_argument("--compute", default=None, help=(
        "the kernel's arithmetic: none (default: PyTorch's CUDA kernels), tf32, "
        "float16_accumulate, bfloat16_accumulate, fast_math:K, sequential"))
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    if len(argv) < 1 or argv[0] != "check":
        parser.print_usage(sys.stderr)
        print("mpsim check: error: the command is 'check'", file=sys.stderr)
        return 2
    try:
        args = parser.parse_args(argv[1:])
    except SystemExit as e:
        return 0 if e.code == 0 else 2
    from mpsim.testing import check
    try:
        tensors = [_load(p) for p in args.inputs]
        actual = _load(args.actual)
        kwargs = {}
        for item in args.attr:
            name, sep, text = item.partition("=")
            if not sep or not name:
                raise ValueError(f"--attr takes NAME=VALUE, got {item!r}")
            kwargs[name.strip()] = _value(text)
        verdict = check(actual, args.op, *tensors, compute=_compute(args.compute), **kwargs)
    except (OSError, ValueError, TypeError, RuntimeError) as e:
        print(f"mpsim check: error: {e}", file=sys.stderr)
        return 2
    print(verdict.to_json() if args.json else verdict.report())
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

#!/usr/bin/python3
"""Prints PyTorch's float -> uint8/int8/int16/int32/int64/bool conversions as the C++ rows of kTorchCasts
in tests/dtype_test.cc (Note [dtype conversion] in core/convert.h).

Run with Debian's python3-torch 1.13 on x86-64:  /usr/bin/python3 tests/torch_cast_table.py
Each value is first rounded to the source dtype by PyTorch (the row holds the rounded value,
exactly, as a hex double); rows whose rounded value repeats are dropped. Every conversion is
also checked on a 1000-element contiguous tensor and a strided view (PyTorch's vectorized and
scalar loops), which give the same results on x86.
"""
import math

import torch

VALUES = [
    math.nan, math.inf, -math.inf, -0.0, 0.9, -0.9, 2.5, -2.5, -1.0, -1.5, 255.5, 256.0, 300.0,
    -129.0, 200.0, 40000.0, -40000.0, 70000.5, 65504.0, 2.0**31 - 1, 2147483647.9, -2.0**31, -2147483648.5, -2.0**31 - 1, 2.0**31,
    2.0**32, 2.0**32 + 5, 1e10, -1e10, 2.0**40 + 7, 2.0**63, -2.0**63, 2.0**64, 3e38, 1e300,
]
SOURCES = [(torch.float32, "Float32"), (torch.float64, "Float64"), (torch.float16, "Float16"),
           (torch.bfloat16, "BFloat16")]
TARGETS = [torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64, torch.bool]


def literal(v):
    if math.isnan(v):
        return "kNaN"
    if math.isinf(v):
        return "kInf" if v > 0 else "-kInf"
    if v == 0:
        return "-0.0" if math.copysign(1, v) < 0 else "0.0"
    mantissa, exponent = v.hex().split("p")
    return mantissa.rstrip("0").rstrip(".") + "p" + exponent


def integer(v, bits):
    if v == -2**(bits - 1):
        return "INT%d_MIN" % bits
    return str(v) + ("LL" if bits == 64 else "")


def main():
    print("// PyTorch %s (%s)" % (torch.__version__, "/usr/bin/python3 tests/torch_cast_table.py"))
    for dtype, name in SOURCES:
        seen = set()
        for value in VALUES:
            src = torch.tensor([value], dtype=torch.float64).to(dtype)
            exact = src.double().item()
            key = "nan" if math.isnan(exact) else (exact, math.copysign(1, exact))
            if key in seen:
                continue
            seen.add(key)
            out = []
            for target in TARGETS:
                one = src.to(target).item()
                big = src.expand(1000).contiguous()
                strided = big.view(500, 2).t()
                for t in (big, strided):
                    assert set(t.to(target).flatten().tolist()) == {one}, (name, value, target)
                out.append(one)
            u8, i8, i16, i32, i64, b = out
            print("    {DType::%s, %s, %d, %d, %d, %s, %s, %s},  // %r" %
                  (name, literal(exact), u8, i8, i16, integer(i32, 32), integer(i64, 64),
                   "true" if b else "false", exact))


if __name__ == "__main__":
    main()

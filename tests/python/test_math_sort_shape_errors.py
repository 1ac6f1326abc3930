"""Bad inputs of the math family, the sort and scan ops and the shape compositions: each an
mpsim error naming the op, the argument and what was expected (docs/ops.md)."""

import numpy as np
import pytest

import mpsim

X = mpsim.tensor(np.arange(12, dtype=np.float32).reshape(3, 4))
I = mpsim.tensor(np.arange(6, dtype=np.int64))


@pytest.mark.parametrize("call, error, text", [
    (lambda: mpsim.celu(X, 0), mpsim.InvalidArgumentError, r"\[celu\] alpha must be nonzero"),
    (lambda: mpsim.elu(I), mpsim.DTypeError, r"\[elu\] expected a floating point tensor, got int64"),
    (lambda: mpsim.hypot(I, I), mpsim.DTypeError, r"\[hypot\] expected a floating point"),
    (lambda: mpsim.fmod(I, 0), mpsim.Error, r"\[fmod\].*division by zero"),
    (lambda: mpsim.round(I, decimals=2), mpsim.DTypeError, r"\[round\] decimals"),
    (lambda: mpsim.frac(I), mpsim.DTypeError, r"\[frac\]"),
    (lambda: mpsim.logcumsumexp(I, 0), mpsim.DTypeError, r"\[logcumsumexp\] expected a floating"),
    (lambda: mpsim.cumsum(X, 2), mpsim.ShapeError, r"\[cumsum\] dim 2 is out of range"),
    (lambda: mpsim.sort(X, 5), mpsim.ShapeError, r"\[sort\] dim 5 is out of range"),
    (lambda: mpsim.topk(X, 5), mpsim.InvalidArgumentError, r"\[topk\] selected index k out of range"),
    (lambda: mpsim.kthvalue(X, 0), mpsim.InvalidArgumentError, r"\[kthvalue\] .*k = 0"),
    (lambda: mpsim.movedim(X, [0], [0, 1]), mpsim.InvalidArgumentError, r"\[movedim\]"),
    (lambda: mpsim.movedim(X, [0, 0], [0, 1]), mpsim.InvalidArgumentError, r"\[movedim\] repeated"),
    (lambda: mpsim.rot90(X, 1, [0, 0]), mpsim.InvalidArgumentError, r"\[rot90\] .*different"),
    (lambda: mpsim.rot90(I, 1, [0, 1]), mpsim.InvalidArgumentError, r"\[rot90\] expected total dims"),
    (lambda: mpsim.roll(X, [1, 2], [0]), mpsim.InvalidArgumentError, r"\[roll\] shifts and dim"),
    (lambda: mpsim.diff(X, -1), mpsim.InvalidArgumentError, r"\[diff\] order must be non-negative"),
    (lambda: mpsim.fliplr(I), mpsim.InvalidArgumentError, r"\[fliplr\] Input must be >= 2-d"),
    (lambda: mpsim.meshgrid(I, I, indexing="yx"), mpsim.InvalidArgumentError, r"\[meshgrid\] indexing"),
    (lambda: mpsim.unflatten(X, 1, [3, 3]), mpsim.Error, r"unflatten|reshape"),
    (lambda: mpsim.norm(X, "nuc", dim=0), mpsim.InvalidArgumentError,
     r"\[norm\] the nuclear norm needs two dims"),
    (lambda: mpsim.eye(-1), mpsim.InvalidArgumentError, r"\[eye\] n and m must be non-negative"),
    (lambda: mpsim.empty(2, requires_grad=True), mpsim.UnsupportedError, r"\[empty\] requires_grad"),
    (lambda: X.to(memory_format="sparse"), mpsim.InvalidArgumentError, r"\[to\] memory_format"),
    (lambda: mpsim.var(X, 0, True, correction=1), mpsim.SignatureError, r"\[var\] takes unbiased"),
])
def test_bad_input_is_a_clear_error(call, error, text):
    with pytest.raises(error, match=text):
        call()

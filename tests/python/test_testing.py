"""mpsim.testing.assert_close: torch.testing's tolerances and messages, for every tensor kind."""

import re

import numpy as np
import pytest
import torch

import mpsim
from mpsim.testing import assert_close


def test_accepts_mpsim_torch_and_numpy():
    values = [1.0, 2.0, 3.0]
    kinds = [mpsim.tensor(values), torch.tensor(values), np.array(values, np.float32)]
    for a in kinds:
        for b in kinds:
            assert_close(a, b)
    assert_close(mpsim.tensor(values, dtype=mpsim.bfloat16), torch.tensor(values).bfloat16())
    assert_close(2.0, 2.0)


@pytest.mark.parametrize("dtype,rtol,atol", [
    ("float16", 1e-3, 1e-5), ("bfloat16", 1.6e-2, 1e-5), ("float32", 1.3e-6, 1e-5),
    ("float64", 1e-7, 1e-7)])
def test_default_tolerances_match_torch(dtype, rtol, atol):
    assert mpsim.testing.DEFAULT_TOLERANCES[dtype] == (rtol, atol)
    expected = torch.tensor([1.0, 100.0], dtype=getattr(torch, dtype))
    inside = expected.double() * (1 + 0.5 * rtol)
    # what torch accepts, mpsim accepts (and vice versa), in the same dtype
    torch.testing.assert_close(inside.to(expected.dtype), expected)
    assert_close(inside.to(expected.dtype), expected)
    assert_close(mpsim.from_dlpack(inside.to(expected.dtype).contiguous()), expected)
    outside = (expected.double() * (1 + 4 * rtol) + 4 * atol).to(expected.dtype)
    with pytest.raises(AssertionError):
        torch.testing.assert_close(outside, expected)
    with pytest.raises(AssertionError):
        assert_close(outside, expected)


def test_integers_compare_exactly():
    assert_close(mpsim.tensor([1, 2, 3]), np.array([1, 2, 3]))
    with pytest.raises(AssertionError, match="Tensor-likes are not equal!"):
        assert_close(mpsim.tensor([1, 2, 3]), np.array([1, 2, 4]))


def test_message_matches_torch():
    actual = torch.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.5]])
    expected = torch.tensor([[1.0, 2.5, 3.0], [4.0, 5.0, 6.0]])
    with pytest.raises(AssertionError) as torch_error:
        torch.testing.assert_close(actual, expected)
    with pytest.raises(AssertionError) as ours:
        assert_close(mpsim.from_dlpack(actual), expected.numpy())
    assert str(ours.value) == str(torch_error.value)
    assert "Mismatched elements: 2 / 6 (33.3%)" in str(ours.value)
    assert "Greatest absolute difference: 0.5 at index (0, 1)" in str(ours.value)
    assert re.search(r"Greatest relative difference: 0.2 at index \(0, 1\) \(up to 1.3e-06",
                     str(ours.value))


def test_nan_handling():
    nan = float("nan")
    with pytest.raises(AssertionError, match="Mismatched elements: 1 / 2"):
        assert_close(np.array([1.0, nan]), np.array([1.0, nan]))
    assert_close(np.array([1.0, nan]), np.array([1.0, nan]), equal_nan=True)
    assert_close(np.array([np.inf, -np.inf]), np.array([np.inf, -np.inf]))
    with pytest.raises(AssertionError):
        assert_close(np.array([np.inf]), np.array([-np.inf]))


def test_shape_dtype_and_argument_checks():
    with pytest.raises(AssertionError, match="'shape' do not match"):
        assert_close(np.zeros(2), np.zeros(3))
    with pytest.raises(AssertionError, match="'dtype' do not match: float32 != float64"):
        assert_close(np.zeros(2, np.float32), np.zeros(2))
    assert_close(np.zeros(2, np.float32), np.zeros(2), check_dtype=False)
    with pytest.raises(ValueError, match="atol"):
        assert_close(np.zeros(2), np.zeros(2), rtol=1e-3)
    assert_close(np.array([1.0]), np.array([1.1]), rtol=0, atol=0.2)
    with pytest.raises(AssertionError, match="custom"):
        assert_close(np.array([1.0]), np.array([2.0]), msg="custom")

"""C++ errors as Python exceptions; failed and interrupted work leaves the device usable."""

import os
import signal
import threading
import time

import numpy as np
import pytest

import mpsim
from mpsim.testing import assert_close


def test_exception_hierarchy():
    assert issubclass(mpsim.Error, RuntimeError)
    assert issubclass(mpsim.ShapeError, ValueError) and issubclass(mpsim.ShapeError, mpsim.Error)
    assert issubclass(mpsim.InvalidArgumentError, ValueError)
    assert issubclass(mpsim.SignatureError, TypeError)
    assert issubclass(mpsim.DTypeError, TypeError)
    assert issubclass(mpsim.OutOfMemoryError, MemoryError)
    assert issubclass(mpsim.UnsupportedError, NotImplementedError)
    assert issubclass(mpsim.DeviceError, RuntimeError)
    for e in [mpsim.ShapeError, mpsim.DTypeError, mpsim.OutOfMemoryError, mpsim.UnsupportedError]:
        assert issubclass(e, RuntimeError)  # torch raises RuntimeError for these


def test_shape_error_is_value_error_with_message():
    with pytest.raises(ValueError, match=r"\[add\] shapes \[2, 3\] and \[4\] cannot be broadcast"):
        mpsim.add(mpsim.zeros(2, 3), mpsim.zeros(4))
    with pytest.raises(mpsim.ShapeError):
        mpsim.zeros(2, 3) + mpsim.zeros(4)


def test_invalid_argument_is_value_error():
    with pytest.raises(mpsim.InvalidArgumentError):
        mpsim.gelu(mpsim.zeros(2), approximate="cubic")


def test_bad_call_is_type_error():
    with pytest.raises(TypeError, match="softmax"):
        mpsim.softmax(mpsim.zeros(2), dim=0, bogus=1)
    with pytest.raises(TypeError):
        mpsim.softmax()  # a missing argument
    with pytest.raises(TypeError):
        mpsim.sum(mpsim.zeros(2), dim=object())


def test_dtype_error_is_type_error():
    with pytest.raises(TypeError, match="float64"):
        mpsim.zeros(2, dtype=mpsim.float64, device="mps")
    with pytest.raises(mpsim.DTypeError):
        mpsim.silu(mpsim.tensor([1, 2]))


def test_device_error():
    with pytest.raises(mpsim.DeviceError, match="tpu"):
        mpsim.tensor([1.0], device="tpu")
    with pytest.raises(TypeError, match="tpu"):  # through an op's signature: a bad call
        mpsim.zeros(2, device="tpu")
    with pytest.raises(RuntimeError):
        mpsim.add(mpsim.zeros(2), mpsim.zeros(2, device="mps"))


def test_out_of_memory_is_memory_error_and_recoverable():
    # Buffers of earlier tests' commands are freed when those commands complete: wait for them.
    mpsim.mps.synchronize()
    before = mpsim.mps.memory_allocated()
    mpsim.mps.fail_allocation(1)
    with pytest.raises(MemoryError):
        mpsim.zeros(1024, device="mps")
    assert mpsim.mps.memory_allocated() == before
    assert mpsim.ones(4, device="mps").sum().item() == 4


def test_unsupported_is_not_implemented_error():
    mpsim.mps.set_op_enabled("softmax", False)
    fallback = mpsim.fallback_enabled()
    mpsim.set_fallback_enabled(False)
    try:
        with pytest.raises(NotImplementedError, match="softmax"):
            mpsim.softmax(mpsim.zeros(4, device="mps"), dim=0)
        mpsim.set_fallback_enabled(True)
        n = mpsim.fallback_count("softmax")
        assert_close(mpsim.softmax(mpsim.zeros(4, device="mps"), dim=0), np.full(4, 0.25,
                                                                                np.float32))
        assert mpsim.fallback_count("softmax") == n + 1
    finally:
        mpsim.set_fallback_enabled(fallback)
        mpsim.mps.set_op_enabled("softmax", True)


def test_failed_command_surfaces_at_synchronize_and_device_recovers():
    x = mpsim.ones(16, device="mps")
    mpsim.mps.fail_command(1)
    y = x * 2  # fails when the queue runs it
    with pytest.raises(mpsim.Error):
        mpsim.mps.synchronize()
    del y
    assert (x * 3).sum().item() == 48  # the device still works


def _interrupt_soon(delay):
    def fire():
        time.sleep(delay)
        os.kill(os.getpid(), signal.SIGINT)
    threading.Thread(target=fire, daemon=True).start()


def test_ctrl_c_during_a_long_cpu_op_leaves_mpsim_usable():
    x = mpsim.randn((1024, 1024))
    _interrupt_soon(0.01)
    with pytest.raises(KeyboardInterrupt):
        for _ in range(2000):  # the op runs without the GIL; the interrupt lands between ops
            mpsim.exp(x)
    assert_close(mpsim.exp(mpsim.zeros(3)), np.ones(3, np.float32))


def test_ctrl_c_during_synchronize_leaves_the_device_usable():
    x = mpsim.randn((1024, 1024), device="mps")
    y = None
    _interrupt_soon(0.02)
    with pytest.raises(KeyboardInterrupt):
        for _ in range(50):
            y = mpsim.exp(x)
        mpsim.mps.synchronize()  # interrupted while the queue is busy
        time.sleep(5)  # (a fast machine finished the queue first: the sleep is interrupted)
    mpsim.mps.synchronize()  # the queued work completes
    assert_close(mpsim.exp(mpsim.zeros(3, device="mps")), np.ones(3, np.float32))
    assert y.shape == (1024, 1024)


def test_ints_outside_int64_name_the_op_and_the_argument():
    """Overflow when unpacking long, as torch says it, with the op and the argument named."""
    x = mpsim.zeros(2, 3)
    cases = {
        "[zeros] argument 'size'": lambda: mpsim.zeros(2**63),
        "[index]": lambda: x[:, 2**63],
        "[__setitem__] value": lambda: x.__setitem__(0, 2**70),
        "[__add__] other": lambda: x + 2**70,
        "[__rsub__] other": lambda: 2**70 - x,
        "[sum] argument 'dim'": lambda: mpsim.sum(x, dim=2**64),
        "[reshape] size": lambda: x.reshape(2**63, 1),
    }
    for where, fn in cases.items():
        with pytest.raises(mpsim.InvalidArgumentError) as info:
            fn()
        message = str(info.value)
        assert message.startswith(where) and "Overflow when unpacking long" in message, message
    with pytest.raises(mpsim.InvalidArgumentError, match=r"\[view\] size: .*dtype"):
        x.view(2, mpsim.int32)
    assert x.tolist() == [[0, 0, 0], [0, 0, 0]]


def test_integers_near_int64_limits_are_errors_in_every_op_family():
    """Note [checked sizes]: every op that makes a shape from user integers refuses values near
    2^62 with an mpsim error naming the op, never a wrapped size, a crash or a huge allocation."""
    x = mpsim.zeros(4, 4)
    img = mpsim.zeros(1, 1, 4, 4)
    w = mpsim.zeros(1, 1, 3, 3)
    big = 2**62
    cases = {
        "narrow": lambda: x.narrow(0, big, big),
        "split": lambda: mpsim.split(x, [big, big], 0),
        "reshape": lambda: x.reshape(-1, big),
        "expand": lambda: x.expand(big, big, 4),
        "repeat": lambda: mpsim.repeat(x, [big, big]),
        "arange": lambda: mpsim.arange(0, 2**63 - 1, 1),
        "linspace": lambda: mpsim.linspace(0, 1, big),
        "select": lambda: x.select(0, -big),
        "unsqueeze": lambda: x.unsqueeze(big),
        "index_select": lambda: mpsim.index_select(x, 0, mpsim.tensor([big])),
        "sum": lambda: mpsim.sum(x, dim=[big]),
        "softmax": lambda: mpsim.softmax(x, dim=big),
        "randint": lambda: mpsim.randint(0, 2, (big, big)),
        "zeros": lambda: mpsim.zeros(big, big),
        "pad": lambda: mpsim.pad(x, [big, big]),
        "cat": lambda: mpsim.cat([x, x], big),
        "conv2d": lambda: mpsim.conv2d(img, w, padding=big),
        "conv2d dilation": lambda: mpsim.conv2d(img, w, dilation=big),
        "conv_transpose2d": lambda: mpsim.conv_transpose2d(img, w, stride=big),
        "max_pool2d": lambda: mpsim.max_pool2d(img, 3, dilation=big),
        "interpolate": lambda: mpsim.interpolate(img, scale_factor=1e300),
        "adaptive_avg_pool2d": lambda: mpsim.adaptive_avg_pool2d(img, [big, 1]),
    }
    for name, fn in cases.items():
        with pytest.raises(mpsim.Error) as info:
            fn()
        assert str(info.value).startswith("["), (name, str(info.value))

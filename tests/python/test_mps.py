"""mpsim.mps: the memory API, events and the profiler of the simulated device."""

import json

import numpy as np

import mpsim


def test_memory_api():
    assert mpsim.mps.is_available() and mpsim.mps.device_count() == 1
    mpsim.mps.synchronize()
    mpsim.mps.empty_cache()
    base = mpsim.mps.current_allocated_memory()
    assert mpsim.mps.memory_allocated() == base
    mpsim.mps.reset_peak_memory_stats()
    x = mpsim.zeros(1 << 20, device="mps")  # 4 MiB
    assert mpsim.mps.current_allocated_memory() >= base + (4 << 20)
    assert mpsim.mps.driver_allocated_memory() >= mpsim.mps.current_allocated_memory()
    assert mpsim.mps.memory_reserved() == mpsim.mps.driver_allocated_memory()
    assert mpsim.mps.max_memory_allocated() >= base + (4 << 20)
    stats = mpsim.mps.memory_stats()
    assert isinstance(stats["allocated_bytes"], int) and stats["num_allocs"] >= 1
    assert isinstance(stats["external_fragmentation"], float)
    del x
    mpsim.mps.synchronize()
    assert mpsim.mps.current_allocated_memory() == base
    peak = mpsim.mps.max_memory_allocated()
    mpsim.mps.reset_peak_memory_stats()
    assert mpsim.mps.max_memory_allocated() <= peak
    assert mpsim.mps.recommended_max_memory() == mpsim.mps.properties()["recommended_max_memory"]


def test_memory_fraction_limits_allocations():
    limit = mpsim.mps.recommended_max_memory()
    mpsim.mps.set_per_process_memory_fraction(0.001)
    try:
        too_big = int(limit * 0.002) // 4
        try:
            mpsim.zeros(too_big, device="mps")
        except MemoryError as e:
            assert "mps" in str(e).lower()
        else:
            raise AssertionError("no OutOfMemoryError above the memory fraction")
    finally:
        mpsim.mps.set_per_process_memory_fraction(0)
    assert mpsim.ones(4, device="mps").sum().item() == 4


def test_events():
    start = mpsim.mps.Event(enable_timing=True)
    end = mpsim.mps.Event(enable_timing=True)
    start.record()
    x = mpsim.randn((256, 256), device="mps")
    for _ in range(4):
        x = mpsim.tanh(x)
    end.record()
    end.synchronize()
    assert start.query() and end.query()
    assert end.elapsed_time(end) == 0 or end.elapsed_time(end) >= 0
    assert start.elapsed_time(end) >= 0
    end.wait()


def test_profiler():
    mpsim.mps.profiler.start()
    x = mpsim.ones((64, 64), device="mps")
    y = mpsim.softmax(mpsim.exp(x), dim=-1)
    mpsim.mps.synchronize()
    mpsim.mps.profiler.stop()
    ops = [r["op"] for r in mpsim.mps.profiler.records()]
    assert "exp" in ops and "softmax" in ops
    record = next(r for r in mpsim.mps.profiler.records() if r["op"] == "softmax")
    assert record["dtype"] is mpsim.float32 and record["simulated_device_s"] > 0
    summary = {s["op"]: s for s in mpsim.mps.profiler.summary()}
    assert summary["exp"]["calls"] == 1
    assert "softmax" in mpsim.mps.profiler.summary_table()
    json.loads(mpsim.mps.profiler.chrome_trace_json())
    np.testing.assert_allclose(y.numpy(), np.full((64, 64), 1 / 64, np.float32), rtol=1e-6)

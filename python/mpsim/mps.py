"""The simulated mps device: torch.mps's memory API, events and the op profiler.

Every function acts on the one simulated device, mps:0. See docs/device.md for the model.
"""

from ._C import mps as _mps

Event = _mps.Event
profiler = _mps.profiler

is_available = _mps.is_available
device_count = _mps.device_count
synchronize = _mps.synchronize
current_allocated_memory = _mps.current_allocated_memory
driver_allocated_memory = _mps.driver_allocated_memory
recommended_max_memory = _mps.recommended_max_memory
memory_allocated = _mps.memory_allocated
memory_reserved = _mps.memory_reserved
max_memory_allocated = _mps.max_memory_allocated
max_memory_reserved = _mps.max_memory_reserved
reset_peak_memory_stats = _mps.reset_peak_memory_stats
memory_stats = _mps.memory_stats
empty_cache = _mps.empty_cache
set_per_process_memory_fraction = _mps.set_per_process_memory_fraction
set_watermark_ratios = _mps.set_watermark_ratios
high_watermark_ratio = _mps.high_watermark_ratio
low_watermark_ratio = _mps.low_watermark_ratio
properties = _mps.properties
supports = _mps.supports
set_op_enabled = _mps.set_op_enabled
op_enabled = _mps.op_enabled
set_strict = _mps.set_strict
strict = _mps.strict
fail_allocation = _mps.fail_allocation
fail_command = _mps.fail_command

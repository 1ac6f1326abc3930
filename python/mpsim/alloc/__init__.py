"""Allocation traces from where users record them: PyTorch memory snapshots.

mpsim's allocator replays traces in its text format (allocator/trace.h, docs/allocator.md):
one event a line, ``a <id> <bytes>`` allocates and ``f <id>`` frees, ``#`` starts a comment.
``trace_from_torch_snapshot`` turns the allocation history that PyTorch records
(``torch.cuda.memory._record_memory_history()`` then ``torch.cuda.memory._snapshot()``) into
that text, so a CUDA workload recorded with PyTorch replays with ``mpsim alloc-replay``.

Which snapshot actions map (each entry of ``snapshot["device_traces"][device]``):

- ``alloc`` -> ``a <id> <size>``: a block handed to the program. Each allocation gets a new id,
  so an address reused after its free is a new block.
- ``free_completed`` -> ``f <id>``: the block is back in the allocator and its address may be
  reused; that is the moment an allocator sees the free.
- ``free_requested`` (the program released the block; the allocator waits for the streams
  that used it) is skipped: ``free_completed`` follows it.
- ``segment_alloc``, ``segment_free``, ``segment_map``, ``segment_unmap`` (the caching
  allocator's own cudaMalloc/cudaFree of segments), ``oom``, ``snapshot`` and any other action
  are skipped: the trace holds the program's requests, which any allocator can serve.
- A ``free_completed`` of an address with no live allocation (allocated before recording
  started, or dropped from a ``max_entries`` ring buffer) is skipped.
- An ``alloc`` at an address that is still live (its free was not recorded) first frees the
  older block, so the trace stays replayable.

Every skipped entry is counted, by action; the counts are in the trace's header comments and in
``convert_torch_snapshot(...).skipped``.

As a program (a pickled snapshot, as ``torch.cuda.memory._dump_snapshot`` writes)::

    /usr/bin/python3 -m mpsim.alloc snapshot.pickle -o model.trace [--device N]
    mpsim alloc-replay model.trace --allocator buddy,caching

Only unpickle snapshots you trust: pickle can run code while loading.
"""

from __future__ import annotations

import dataclasses
from collections import Counter

__all__ = ["SnapshotTrace", "UNKNOWN_FREE", "convert_torch_snapshot", "trace_from_torch_snapshot"]

# Actions that map to trace events; everything else is skipped and counted under its name.
_ALLOC = "alloc"
_FREE = "free_completed"
# The count key for frees of addresses with no live allocation.
UNKNOWN_FREE = "free_completed of an unknown address"


@dataclasses.dataclass
class SnapshotTrace:
    """A converted snapshot: the trace text and what went into it."""

    text: str  # mpsim trace text, header comments first
    device: int  # the device whose trace was converted
    allocs: int  # 'a' lines
    frees: int  # 'f' lines (including frees inserted before an alloc at a live address)
    skipped: dict[str, int]  # entries that made no event, by action (or UNKNOWN_FREE)
    alloc_over_live: int  # allocations at an address that was still live


def _device_traces(snapshot) -> list:
    if not isinstance(snapshot, dict) or "device_traces" not in snapshot:
        raise ValueError(
            "not a PyTorch memory snapshot: expected a dict with a 'device_traces' key, as "
            "torch.cuda.memory._snapshot() returns (record it with "
            "torch.cuda.memory._record_memory_history() first)")
    traces = snapshot["device_traces"]
    if not isinstance(traces, list) or not all(isinstance(t, list) for t in traces):
        raise ValueError("snapshot['device_traces'] must be a list with one list of entries per "
                         "device")
    return traces


def _pick_device(traces: list, device: int | None) -> int:
    if device is not None:
        if not 0 <= device < len(traces):
            raise ValueError(f"device {device} is not in the snapshot, which has traces for "
                             f"{len(traces)} device(s)")
        return device
    recorded = [i for i, t in enumerate(traces) if t]
    if len(recorded) > 1:
        raise ValueError(f"the snapshot has events on devices {recorded}; choose one with "
                         "device=N (a trace replays one device's allocator)")
    return recorded[0] if recorded else 0


def _field(entry: dict, name: str, index: int) -> int:
    value = entry.get(name)
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValueError(f"device trace entry {index} ({entry['action']}) has no non-negative "
                         f"integer '{name}': {value!r}")
    return value


def convert_torch_snapshot(snapshot, device: int | None = None) -> SnapshotTrace:
    """Converts a PyTorch memory snapshot's allocation history for one device.

    `snapshot` is the dict ``torch.cuda.memory._snapshot()`` returns (or one loaded from the
    pickle ``torch.cuda.memory._dump_snapshot`` writes). `device` picks the device trace; by
    default the only device with events (ValueError when several have events). Raises
    ValueError when the snapshot is not one, or when an alloc or free_completed entry lacks a
    non-negative integer ``addr`` or ``size``.
    """
    traces = _device_traces(snapshot)
    device = _pick_device(traces, device)
    entries = traces[device] if traces else []

    live: dict[int, int] = {}  # address -> trace id
    next_id = 1
    lines: list[str] = []
    allocs = frees = over_live = 0
    skipped: Counter[str] = Counter()
    for index, entry in enumerate(entries):
        action = entry.get("action") if isinstance(entry, dict) else None
        if action == _ALLOC:
            addr = _field(entry, "addr", index)
            size = _field(entry, "size", index)
            if addr in live:
                lines.append(f"f {live.pop(addr)}")
                frees += 1
                over_live += 1
            live[addr] = next_id
            lines.append(f"a {next_id} {size}")
            next_id += 1
            allocs += 1
        elif action == _FREE:
            addr = _field(entry, "addr", index)
            block = live.pop(addr, None)
            if block is None:
                skipped[UNKNOWN_FREE] += 1
            else:
                lines.append(f"f {block}")
                frees += 1
        else:
            skipped[str(action)] += 1

    skipped_text = ", ".join(f"{k} {v}" for k, v in sorted(skipped.items())) or "none"
    header = [
        f"# mpsim allocator trace from a PyTorch memory snapshot, device {device}",
        f"# events {allocs + frees} allocs {allocs} frees {frees} live at the end {len(live)}",
        f"# skipped: {skipped_text}",
    ]
    if over_live:
        header.append(f"# {over_live} alloc(s) at a live address: the older block was freed first")
    text = "\n".join(header + lines) + "\n"
    return SnapshotTrace(text=text, device=device, allocs=allocs, frees=frees,
                         skipped=dict(skipped), alloc_over_live=over_live)


def trace_from_torch_snapshot(snapshot, device: int | None = None) -> str:
    """The mpsim trace text (``a <id> <bytes>`` / ``f <id>`` lines) of a PyTorch memory snapshot.

    See the module's docstring for which actions map; convert_torch_snapshot gives the counts.
    """
    return convert_torch_snapshot(snapshot, device).text

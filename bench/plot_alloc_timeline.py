#!/usr/bin/env python3
"""Plots the timeline that `mpsim alloc-replay TRACE --timeline out.csv` writes.

    mpsim alloc-replay TRACE --allocator buddy,caching,malloc --timeline timeline.csv
    /usr/bin/python3 bench/plot_alloc_timeline.py timeline.csv -o timeline.png [--title T]

The CSV has one row per allocator and event: allocator,event,requested,allocated,reserved
(bytes after the event). The top panel shows the requested bytes (the trace's own, the same
for every allocator) and each allocator's reserved bytes; the bottom panel shows what each
allocator holds beyond the request (reserved - requested), where the allocators differ.
Needs matplotlib (python3-matplotlib).
"""

import argparse
import csv
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

MIB = 1024.0 * 1024.0


def read_timeline(path):
    """{allocator: {"event": [...], "requested": [...], "allocated": [...], "reserved": [...]}}
    in the file's order of allocators."""
    series = {}
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        expected = ["allocator", "event", "requested", "allocated", "reserved"]
        if reader.fieldnames != expected:
            raise ValueError(f"{path}: expected the header {','.join(expected)}, got "
                             f"{reader.fieldnames}")
        for row in reader:
            s = series.setdefault(row["allocator"], defaultdict(list))
            for key in expected[1:]:
                s[key].append(int(row[key]))
    if not series:
        raise ValueError(f"{path}: no rows")
    return series


def plot(series, output, title):
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(10, 7), sharex=True,
                                      gridspec_kw={"height_ratios": [3, 2]})
    first = next(iter(series.values()))
    top.plot(first["event"], [v / MIB for v in first["requested"]], color="black", lw=1.0,
             label="requested (the trace)")
    for name, s in series.items():
        top.plot(s["event"], [v / MIB for v in s["reserved"]], lw=1.0, label=f"{name} reserved")
        over = [(r - q) / MIB for r, q in zip(s["reserved"], s["requested"])]
        bottom.plot(s["event"], over, lw=1.0, label=name)
    top.set_ylabel("MiB")
    top.set_title(title)
    top.legend(loc="upper left", fontsize=8)
    top.grid(alpha=0.3)
    bottom.set_ylabel("reserved - requested (MiB)")
    bottom.set_xlabel("event")
    bottom.legend(loc="upper left", fontsize=8)
    bottom.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(output, dpi=110)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("timeline", help="the CSV from mpsim alloc-replay --timeline")
    parser.add_argument("-o", "--output", required=True, help="the image to write (.png, .svg)")
    parser.add_argument("--title", default=None, help="the plot's title (default: the CSV's name)")
    args = parser.parse_args(argv)
    try:
        series = read_timeline(args.timeline)
    except (OSError, ValueError, KeyError) as e:
        print(f"plot_alloc_timeline.py: error: {e}", file=sys.stderr)
        return 2
    plot(series, args.output, args.title or args.timeline)
    return 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/python3
"""Compiler launcher that records what each compile costs.

Usage (scripts/build.sh sets it as CMAKE_CXX_COMPILER_LAUNCHER):
    compile_timer.py LOG COMMAND...
Runs COMMAND (the compiler, or ccache and the compiler) and appends one tab-separated line to
LOG: wall seconds, peak resident memory of the largest process it started (MiB), the exit
status, and the object file's absolute path. Appends are single writes to a file opened with O_APPEND, so
parallel compiles never interleave. scripts/build_times.sh reads the log.
"""
import os
import resource
import subprocess
import sys
import time


def main() -> int:
    if len(sys.argv) < 3:
        print("compile_timer.py: usage: compile_timer.py LOG COMMAND...", file=sys.stderr)
        return 2
    log, command = sys.argv[1], sys.argv[2:]
    start = time.monotonic()
    status = subprocess.call(command)
    wall = time.monotonic() - start
    # ru_maxrss of the waited-for descendants: the largest one's peak (cc1plus), in KiB.
    peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    obj = os.path.abspath(command[command.index("-o") + 1]) if "-o" in command else "?"
    line = f"{wall:.2f}\t{peak_mib:.0f}\t{status}\t{obj}\n"
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line.encode())
    finally:
        os.close(fd)
    return status


if __name__ == "__main__":
    sys.exit(main())

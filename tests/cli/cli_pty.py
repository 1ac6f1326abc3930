"""Running the `mpsim` program with stderr on a pseudo-terminal, for the tests of its progress
lines (shown only on a terminal)."""
import os
import pty
import select
import subprocess


def read_pty(program, *args):
    """Runs `program args` with stderr on a pseudo-terminal; returns (exit status, stdout, what
    the terminal received)."""
    master, slave = pty.openpty()
    p = subprocess.Popen([program, *map(str, args)], stdout=subprocess.PIPE, stderr=slave)
    os.close(slave)
    received = b""
    while True:
        ready, _, _ = select.select([master], [], [], 60)
        if not ready:
            break
        try:
            chunk = os.read(master, 4096)
        except OSError:  # the program closed its end
            break
        if not chunk:
            break
        received += chunk
    os.close(master)
    out = p.stdout.read().decode()
    return p.wait(timeout=60), out, received.decode()

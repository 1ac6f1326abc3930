"""The `mpsim` program of a pip install: the packaged binary, with the packaged library."""

import os
import pathlib
import sys


def main():
    libs = pathlib.Path(__file__).resolve().parent / ".libs"
    program = libs / "mpsim"
    if not program.exists():
        sys.exit("mpsim: this installation has no `mpsim` program (it comes with pip installs)")
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = str(libs) + (":" + env["LD_LIBRARY_PATH"]
                                          if env.get("LD_LIBRARY_PATH") else "")
    env.setdefault("MPSIM_PYTHON", sys.executable)
    os.execve(str(program), [str(program), *sys.argv[1:]], env)

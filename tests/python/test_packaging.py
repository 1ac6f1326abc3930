"""`python3 -m pip install --no-build-isolation .` into a venv made with --system-site-packages
(docs/python.md, "Installing with pip"), offline, reusing this build's tree (only what changed
is rebuilt): the package, its extension and shared library, and the `mpsim` program."""

import pathlib
import shutil
import subprocess
import sys

import pytest

import mpsim

ROOT = pathlib.Path(__file__).resolve().parents[2]
BUILD = pathlib.Path(mpsim.__file__).resolve().parents[2]  # <build>/python/mpsim/__init__.py


@pytest.mark.skipif(not (BUILD / "CMakeCache.txt").exists(), reason="not a CMake build's module")
def test_pip_install_into_a_venv(tmp_path):
    pytest.importorskip("pip")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)],
                   check=True)
    python = venv / "bin" / "python"
    env = {"PATH": f"{venv / 'bin'}:/usr/bin:/bin", "MPSIM_BUILD_DIR": str(BUILD),
           "HOME": str(tmp_path)}
    p = subprocess.run([str(python), "-m", "pip", "install", "--no-build-isolation",
                        "--no-index", "--no-deps", "-q", str(ROOT)], env=env,
                       capture_output=True, text=True, timeout=1200)
    assert p.returncode == 0, p.stdout + p.stderr
    check = ("import mpsim, pathlib; "
             "print(mpsim.__file__); print(mpsim.exp(mpsim.tensor([0.0])).item()); "
             "print([l.split()[-1] for l in pathlib.Path('/proc/self/maps').read_text()"
             ".splitlines() if 'libmpsim.so' in l][0])")
    p = subprocess.run([str(python), "-c", check], env=env, cwd=tmp_path, capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    where, value, library = p.stdout.splitlines()
    site = venv / "lib"
    assert pathlib.Path(where).is_relative_to(site) and value == "1.0"
    assert pathlib.Path(library).is_relative_to(site), library  # the packaged library
    program = shutil.which("mpsim", path=env["PATH"])
    assert program and pathlib.Path(program).is_relative_to(venv)
    p = subprocess.run([program, "info"], env=env, capture_output=True, text=True)
    assert p.returncode == 0 and p.stdout.startswith("mpsim "), p.stderr

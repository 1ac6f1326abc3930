"""pip's build of mpsim: CMake builds the extension and the `mpsim` program, and they are
packaged with the shared library (docs/python.md, "Installing with pip").

MPSIM_BUILD_DIR names the CMake build directory (default build/pip). One that is already
configured is built as it is (only what changed is rebuilt), so a tree built by
scripts/build.sh installs in seconds; a new one is configured for the module alone."""

import glob
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import Distribution, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def run(self):
        build = pathlib.Path(os.environ.get("MPSIM_BUILD_DIR", ROOT / "build" / "pip"))
        if not (build / "CMakeCache.txt").exists():
            subprocess.check_call([
                "cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
                "-DMPSIM_BUILD_PYTHON=ON", "-DMPSIM_BUILD_TESTS=OFF", "-DMPSIM_BUILD_BENCH=OFF",
                f"-DPython3_EXECUTABLE={sys.executable}"])
        jobs = os.environ.get("MPSIM_BUILD_JOBS", str(os.cpu_count() or 2))
        subprocess.check_call(["cmake", "--build", str(build), "-j", jobs, "--target",
                               "mpsim_python", "mpsim_cli"])
        package = pathlib.Path(self.build_lib) / "mpsim"
        if package.exists():
            shutil.rmtree(package)
        shutil.copytree(build / "python" / "mpsim", package,
                        ignore=shutil.ignore_patterns("__pycache__"))
        libs = package / ".libs"
        libs.mkdir()
        for lib in glob.glob(str(build / "libmpsim.so*")):  # the soname's file, whole
            if not os.path.islink(lib):
                shutil.copy2(lib, libs / "libmpsim.so.0")
        shutil.copy2(build / "tools" / "mpsim", libs / "mpsim")


class BinaryDistribution(Distribution):
    def has_ext_modules(self):
        return True  # a platform wheel: the package holds compiled files


setup(cmdclass={"build_ext": CMakeBuild}, distclass=BinaryDistribution, packages=[],
      zip_safe=False)

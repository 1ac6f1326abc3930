#!/usr/bin/env bash
# Builds mpsim's Python module for another machine's Python from a kit made here, where the
# library is built: for a machine (a GPU host with PyTorch 2.x) that has a C++ compiler,
# pybind11 and Python's headers but none of mpsim's Debian packages.
#
# Here:   bash tools/torch_bridge/build_module_elsewhere.sh kit build .devkit
# There:  bash tools/torch_bridge/build_module_elsewhere.sh module .devkit /tmp/pkg
#         PYTHONPATH=/tmp/pkg python3 -c "import mpsim"
# The kit holds libmpsim and the shared libraries it needs (libhwy, libtbb) and dlpack.h.
set -euo pipefail
case "${1:-}" in
kit)
  build=$2 kit=$3
  mkdir -p "$kit/lib" "$kit/include/dlpack"
  cp -L "$build/libmpsim.so.0.1.0" "$kit/lib/"
  for lib in libhwy.so.1 libtbb.so.12; do
    cp -L "$(ldd "$build/libmpsim.so" | awk -v l="$lib" '$1 == l {print $3}')" "$kit/lib/"
  done
  strip --strip-unneeded "$kit/lib/libmpsim.so.0.1.0"
  cp /usr/include/dlpack/dlpack.h "$kit/include/dlpack/"
  ;;
module)
  kit=$(realpath "$2") out=$3 py=${PYTHON:-python3}
  inc=$($py -c "import sysconfig; print(sysconfig.get_paths()['include'])")
  pyb=$($py -c "import pybind11; print(pybind11.get_include())")
  ext=$($py -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
  obj=$(mktemp -d)
  mkdir -p "$out"
  cp -r python/mpsim "$out/"
  ls python/src/*.cc | xargs -P "$(nproc)" -I{} sh -c \
    "g++ -std=c++20 -O2 -fPIC -fvisibility=hidden -I. -I'$kit/include' -I'$inc' -I'$pyb' \
       -c {} -o '$obj'/\$(basename {}).o"
  # libmpsim's own needs load first, through the module's run path (a run path serves only
  # the object that carries it)
  g++ -shared "$obj"/*.o -L"$kit/lib" -Wl,--no-as-needed -l:libtbb.so.12 -l:libhwy.so.1 \
    -l:libmpsim.so.0.1.0 -Wl,-rpath,"$kit/lib" \
    -o "$out/mpsim/_C$ext"
  ;;
*)
  echo "usage: $0 kit BUILD_DIR KIT_DIR | module KIT_DIR OUT_DIR" >&2
  exit 2
  ;;
esac

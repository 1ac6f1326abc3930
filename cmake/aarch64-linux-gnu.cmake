# Cross-compiles mpsim for 64-bit ARM with Debian's aarch64-linux-gnu-g++ and the arm64
# (multiarch) packages of its dependencies; ctest runs the test binaries under qemu-aarch64,
# where Highway dispatches to NEON. scripts/test_arm.sh sets it all up.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_LIBRARY_ARCHITECTURE aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu /usr/lib/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
# No -L: the binaries load the arm64 multiarch libraries (libc6:arm64 and the rest) from
# /lib/aarch64-linux-gnu; with the cross toolchain's sysroot as the prefix, libmpsim's
# start-up spun forever under qemu.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64)
# The tests are listed when ctest runs, under the emulator, not at build time.
set(CMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE PRE_TEST)

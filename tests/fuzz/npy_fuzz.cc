// Fuzz target: the .npy reader of the CLI (tools/npy.h). Any bytes must read as a tensor or
// raise an mpsim::Error naming the file; a tensor read must write back and read again to the
// same dtype, shape and bytes.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>

#include "core/mpsim.h"
#include "tools/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mpsim;
  // The reader takes a path: one scratch file per process, removed when the process exits.
  struct ScratchFile {
    std::string path = "/tmp/mpsim_npy_fuzz_" + std::to_string(getpid()) + ".npy";
    ~ScratchFile() { std::remove(path.c_str()); }
  };
  static const ScratchFile scratch;
  const std::string& path = scratch.path;
  {
    std::ofstream f(path, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  }
  Tensor t;
  try {
    t = tools::read_npy(path);
  } catch (const Error&) {
    return 0;
  }
  tools::write_npy(path, t);
  const Tensor back = tools::read_npy(path);
  if (back.dtype() != t.dtype() || back.sizes() != t.sizes() ||
      std::memcmp(back.data_ptr(), t.data_ptr(), t.nbytes()) != 0) {
    std::fprintf(stderr, "npy_fuzz: a tensor changed in a write and read back\n");
    std::abort();
  }
  return 0;
}

// The peer mallocs of alloc_peers.h. Libraries to link: the `mpsim_allocator` objects (or libmpsim)
// and ${CMAKE_DL_LIBS} (dlopen). The peers are loaded at run time, so none is a link dependency:
// jemalloc from libjemalloc.so.2 (Debian libjemalloc2), mimalloc from libmimalloc.so.2
// (libmimalloc2.0), tbbmalloc from libtbbmalloc.so.2 (libtbbmalloc2); glibc malloc is the process's
// own.
#include "tools/alloc_peers.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace mpsim::tools {
namespace {

void* glibc_aligned(std::size_t alignment, std::size_t size) {
  return std::aligned_alloc(alignment, size);
}
void glibc_free(void* p) { std::free(p); }

// Swaps (size, alignment) order for the libraries whose aligned malloc takes size first.
template <auto& kFn>
void* size_first(std::size_t alignment, std::size_t size) {
  return kFn(size, alignment);
}
void* (*g_mi_malloc_aligned)(std::size_t, std::size_t) = nullptr;
void* (*g_scalable_aligned_malloc)(std::size_t, std::size_t) = nullptr;

}  // namespace

std::size_t resident_bytes() {
  std::ifstream statm("/proc/self/statm");
  std::size_t pages = 0;
  std::size_t resident = 0;
  statm >> pages >> resident;
  return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

bool load_peer(const std::string& name, PeerFunctions& out, std::string& error) {
  if (name == "malloc") {
    out = {glibc_aligned, glibc_free};
    return true;
  }
  struct Library {
    const char* name;
    const char* soname;
    const char* allocate;
    const char* release;
  };
  static constexpr Library kLibraries[] = {
      {"jemalloc", "libjemalloc.so.2", "aligned_alloc", "free"},
      {"mimalloc", "libmimalloc.so.2", "mi_malloc_aligned", "mi_free"},
      {"tbbmalloc", "libtbbmalloc.so.2", "scalable_aligned_malloc", "scalable_aligned_free"},
  };
  for (const Library& lib : kLibraries) {
    if (name != lib.name) continue;
    void* handle = dlopen(lib.soname, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      // jemalloc's initial-exec TLS needs static TLS room that glibc reserves only on request.
      error = std::string(lib.name) + " is not installed or cannot be loaded (" + dlerror() +
              "); for jemalloc's static TLS run with "
              "GLIBC_TUNABLES=glibc.rtld.optional_static_tls=16384";
      return false;
    }
    void* allocate = dlsym(handle, lib.allocate);
    void* release = dlsym(handle, lib.release);
    if (allocate == nullptr || release == nullptr) {
      error = std::string(lib.soname) + " lacks " + lib.allocate + " or " + lib.release;
      return false;
    }
    out.release = reinterpret_cast<PeerAllocator::Free>(release);
    if (name == "jemalloc") {
      out.allocate = reinterpret_cast<PeerAllocator::AlignedMalloc>(allocate);
    } else if (name == "mimalloc") {
      g_mi_malloc_aligned = reinterpret_cast<void* (*)(std::size_t, std::size_t)>(allocate);
      out.allocate = size_first<g_mi_malloc_aligned>;
    } else {
      g_scalable_aligned_malloc = reinterpret_cast<void* (*)(std::size_t, std::size_t)>(allocate);
      out.allocate = size_first<g_scalable_aligned_malloc>;
    }
    return true;
  }
  error = "unknown allocator '" + name + "'";
  return false;
}

}  // namespace mpsim::tools

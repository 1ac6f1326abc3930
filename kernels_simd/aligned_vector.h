// A std::vector whose data starts on a cache line (64 bytes: also one AVX-512 vector).
//
// Note [aligned scratch]: a 512-bit load or store that straddles two cache lines costs about
// twice one that does not, and std::vector's storage (malloc) is only 16-byte aligned, so
// three of every four 64-byte accesses to a double scratch row straddled: on one thread,
// with a layer_norm row of 320 in L1, the output pass over double rows takes 136 cycles
// aligned against 249 straddling, the widening pass 79 against 141.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace mpsim::simd {

inline constexpr std::size_t kCacheLine = 64;

template <class T>
struct CacheLineAllocator {
  using value_type = T;
  CacheLineAllocator() = default;
  template <class U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(std::size_t n) {
    return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t{kCacheLine}));
  }
  void deallocate(T* p, std::size_t) { ::operator delete(p, std::align_val_t{kCacheLine}); }
  template <class U>
  bool operator==(const CacheLineAllocator<U>&) const {
    return true;
  }
};

template <class T>
using AlignedVector = std::vector<T, CacheLineAllocator<T>>;

}  // namespace mpsim::simd

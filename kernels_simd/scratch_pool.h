// A pool that keeps one large cache-line-aligned scratch buffer between calls, so that a kernel's
// big workspace (the GEMM engine's packed b, up to kGemmPackedBBytes) is neither zero-filled nor
// faulted in again on every call: a fresh 4 MiB buffer's zeroing and page faults show in a 1024^3
// float32 product on 2 threads (`linalg_bench --filter "mm 1024x"`, beside a build that allocates
// per call; docs/measurements.md). Callers that run at the
// same time each get their own buffer; the pool keeps the largest one returned.
#pragma once

#include <cstddef>
#include <mutex>
#include <new>
#include <utility>

#include "kernels_simd/aligned_vector.h"

namespace mpsim::simd {

class ScratchPool {
 public:
  // Uninitialized scratch of at least `bytes`, held until the lease ends.
  class Lease {
   public:
    Lease(ScratchPool& pool, void* data, std::size_t bytes)
        : pool_(&pool), data_(data), bytes_(bytes) {}
    Lease(Lease&& other) noexcept
        : pool_(other.pool_),
          data_(std::exchange(other.data_, nullptr)),
          bytes_(std::exchange(other.bytes_, 0)) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (data_ != nullptr) pool_->give_back(data_, bytes_);
    }
    template <class T>
    T* as() const {
      return static_cast<T*>(data_);
    }

   private:
    ScratchPool* pool_;
    void* data_;
    std::size_t bytes_;
  };

  ScratchPool() = default;
  ScratchPool(const ScratchPool&) = delete;
  ScratchPool& operator=(const ScratchPool&) = delete;
  ~ScratchPool() { release(kept_); }

  Lease take(std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (kept_ != nullptr && kept_bytes_ >= bytes) {
        return Lease(*this, std::exchange(kept_, nullptr), std::exchange(kept_bytes_, 0));
      }
    }
    return Lease(*this, ::operator new (bytes, std::align_val_t{kCacheLine}), bytes);
  }

 private:
  void give_back(void* data, std::size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (bytes > kept_bytes_) {
        std::swap(data, kept_);
        std::swap(bytes, kept_bytes_);
      }
    }
    release(data);
  }
  static void release(void* data) {
    if (data != nullptr) ::operator delete (data, std::align_val_t{kCacheLine});
  }

  std::mutex mu_;
  void* kept_ = nullptr;
  std::size_t kept_bytes_ = 0;
};

// The GEMM engine's pool of packed-b buffers (Note [gemm scratch] in gemm.h).
inline ScratchPool& gemm_packed_b_pool() {
  static ScratchPool pool;
  return pool;
}

}  // namespace mpsim::simd

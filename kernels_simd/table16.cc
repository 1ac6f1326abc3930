// The table cache of Note [16-bit unary tables] (table16.h).
#include "kernels_simd/table16.h"

#include <array>
#include <atomic>
#include <memory>
#include <mutex>
#include <numeric>
#include <vector>

namespace mpsim::simd {

const std::uint16_t* table16(std::uint32_t key, const Table16Compute& compute) {
  static std::array<std::atomic<const std::uint16_t*>, kTable16Keys> tables{};
  static std::mutex build;
  std::atomic<const std::uint16_t*>& slot = tables.at(key);
  if (const std::uint16_t* t = slot.load(std::memory_order_acquire)) return t;
  const std::lock_guard<std::mutex> lock(build);
  if (const std::uint16_t* t = slot.load(std::memory_order_acquire)) return t;
  std::vector<std::uint16_t> codes(65536);
  std::iota(codes.begin(), codes.end(), std::uint16_t{0});
  // Owned by the process from here on (the slot never changes again).
  auto* table = new std::uint16_t[65536];
  compute(codes.data(), table, codes.size());
  slot.store(table, std::memory_order_release);
  return table;
}

}  // namespace mpsim::simd

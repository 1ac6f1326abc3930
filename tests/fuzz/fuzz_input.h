// A reader of fuzzer bytes: every value a target draws comes from the input, so an input
// replays exactly. Past the end every read returns zero (the smallest choice), as libFuzzer's
// FuzzedDataProvider does; this one is ours so that the targets also build with GCC for the
// corpus replay (tests/fuzz/replay_main.cc) run by ctest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

namespace mpsim::fuzz {

class FuzzInput {
 public:
  FuzzInput(const std::uint8_t* data, std::size_t size) : data_(data), size_(size) {}

  std::uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
  bool flag() { return (byte() & 1) != 0; }
  // An integer in [0, n); n > 0.
  std::uint64_t below(std::uint64_t n) {
    std::uint64_t v = 0;
    for (std::uint64_t range = n - 1; range != 0; range >>= 8) v = (v << 8) | byte();
    return n == 0 ? 0 : v % n;
  }
  // An integer in [lo, hi].
  std::int64_t in_range(std::int64_t lo, std::int64_t hi) {
    return lo + static_cast<std::int64_t>(below(static_cast<std::uint64_t>(hi - lo) + 1));
  }
  std::uint64_t u64() {
    std::uint64_t v = 0;
    for (int i = 0; i < 8; ++i) v = (v << 8) | byte();
    return v;
  }
  double any_double() {
    const std::uint64_t bits = u64();
    double d;
    std::memcpy(&d, &bits, sizeof d);
    return d;
  }
  // Up to max_len bytes as a string.
  std::string text(std::size_t max_len) {
    const std::size_t n = static_cast<std::size_t>(below(max_len + 1));
    std::string s;
    for (std::size_t i = 0; i < n && pos_ < size_; ++i) s += static_cast<char>(byte());
    return s;
  }
  // What is left, as text.
  std::string rest() {
    std::string s(reinterpret_cast<const char*>(data_ + pos_), size_ - pos_);
    pos_ = size_;
    return s;
  }
  bool empty() const { return pos_ >= size_; }

 private:
  const std::uint8_t* data_;
  std::size_t size_;
  std::size_t pos_ = 0;
};

}  // namespace mpsim::fuzz

// DimVector: the sizes or strides of a tensor, one int64 per dimension.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <initializer_list>
#include <iterator>
#include <new>
#include <vector>

namespace mpsim {

// Note [dim vectors]
// A Tensor holds its sizes and strides by value, and every view, expand or copy of a Tensor
// handle copies both: with std::vector that was two heap allocations per copy, and a tiny
// add(a, b) made 59 of them, malloc and free half its time. DimVector keeps up to kInline
// values in place (every tensor of up to 6 dims) and only more on the heap, so copying a
// Tensor allocates nothing; the front end and the elementwise driver keep their own per-call
// dim lists in DimVectors or on the stack too. add of two 4-float tensors then allocates
// the output (its bytes and its storage's control block), the call's input and output lists,
// the operands' list for the result's layout and the alpha attribute. It reads like
// std::vector<int64_t> (the members the code uses, contiguous iterators, so std::span takes it) and
// converts to one. A tiny op such as x + 1 on 8 floats runs measurably faster this way
// (`device_bench --benchmark_filter=CpuTinyOp`, beside a build with std::vector;
// docs/measurements.md).
class DimVector {
 public:
  static constexpr std::size_t kInline = 6;
  using value_type = std::int64_t;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = std::int64_t&;
  using const_reference = const std::int64_t&;
  using pointer = std::int64_t*;
  using const_pointer = const std::int64_t*;
  using iterator = std::int64_t*;
  using const_iterator = const std::int64_t*;
  using reverse_iterator = std::reverse_iterator<iterator>;
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;

  DimVector() noexcept = default;
  explicit DimVector(std::size_t n, std::int64_t value = 0) { assign(n, value); }
  DimVector(std::initializer_list<std::int64_t> values) { assign(values.begin(), values.end()); }
  DimVector(const std::vector<std::int64_t>& values)  // NOLINT: implicit, as Strides was
  {
    assign(values.begin(), values.end());
  }
  template <std::forward_iterator It>
  DimVector(It first, It last) {
    assign(first, last);
  }
  DimVector(const DimVector& other) { assign(other.begin(), other.end()); }
  DimVector(DimVector&& other) noexcept { take(other); }
  DimVector& operator=(const DimVector& other) {
    if (this != &other) assign(other.begin(), other.end());
    return *this;
  }
  DimVector& operator=(DimVector&& other) noexcept {
    if (this != &other) {
      release();
      take(other);
    }
    return *this;
  }
  DimVector& operator=(std::initializer_list<std::int64_t> values) {
    assign(values.begin(), values.end());
    return *this;
  }
  ~DimVector() { release(); }

  // A std::vector with the same values (for interfaces that take one).
  operator std::vector<std::int64_t>() const { return {begin(), end()}; }  // NOLINT: implicit

  std::size_t size() const noexcept { return size_; }
  bool empty() const noexcept { return size_ == 0; }
  std::size_t capacity() const noexcept { return heap_ != nullptr ? capacity_ : kInline; }
  std::int64_t* data() noexcept { return heap_ != nullptr ? heap_ : inline_; }
  const std::int64_t* data() const noexcept { return heap_ != nullptr ? heap_ : inline_; }
  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }
  reverse_iterator rbegin() noexcept { return reverse_iterator(end()); }
  reverse_iterator rend() noexcept { return reverse_iterator(begin()); }
  const_reverse_iterator rbegin() const noexcept { return const_reverse_iterator(end()); }
  const_reverse_iterator rend() const noexcept { return const_reverse_iterator(begin()); }
  std::int64_t& operator[](std::size_t i) noexcept { return data()[i]; }
  std::int64_t operator[](std::size_t i) const noexcept { return data()[i]; }
  std::int64_t& front() noexcept { return data()[0]; }
  std::int64_t front() const noexcept { return data()[0]; }
  std::int64_t& back() noexcept { return data()[size_ - 1]; }
  std::int64_t back() const noexcept { return data()[size_ - 1]; }

  void reserve(std::size_t n) {
    if (n <= capacity()) return;
    const std::size_t grown = std::max(n, 2 * capacity());
    auto* fresh = static_cast<std::int64_t*>(::operator new(grown * sizeof(std::int64_t)));
    std::copy(begin(), end(), fresh);
    release();
    heap_ = fresh;
    capacity_ = grown;
  }
  void clear() noexcept { size_ = 0; }
  void resize(std::size_t n, std::int64_t value = 0) {
    reserve(n);
    if (n > size_) std::fill(data() + size_, data() + n, value);
    size_ = n;
  }
  void assign(std::size_t n, std::int64_t value) {
    clear();
    resize(n, value);
  }
  template <std::forward_iterator It>
  void assign(It first, It last) {
    const auto n = static_cast<std::size_t>(std::distance(first, last));
    clear();
    reserve(n);
    std::copy(first, last, data());
    size_ = n;
  }
  void push_back(std::int64_t value) {
    reserve(size_ + 1);
    data()[size_++] = value;
  }
  std::int64_t& emplace_back(std::int64_t value) {
    push_back(value);
    return back();
  }
  void pop_back() noexcept { --size_; }
  iterator insert(const_iterator pos, std::int64_t value) { return insert(pos, 1, value); }
  iterator insert(const_iterator pos, std::size_t count, std::int64_t value) {
    const std::size_t at = static_cast<std::size_t>(pos - begin());
    reserve(size_ + count);
    std::copy_backward(data() + at, data() + size_, data() + size_ + count);
    std::fill(data() + at, data() + at + count, value);
    size_ += count;
    return data() + at;
  }
  template <std::forward_iterator It>
  iterator insert(const_iterator pos, It first, It last) {
    const std::size_t at = static_cast<std::size_t>(pos - begin());
    const auto count = static_cast<std::size_t>(std::distance(first, last));
    DimVector tail(begin() + at, end());  // first..last may lie in *this
    DimVector values(first, last);
    resize(at);
    reserve(at + count + tail.size());
    std::copy(values.begin(), values.end(), data() + at);
    std::copy(tail.begin(), tail.end(), data() + at + count);
    size_ = at + count + tail.size();
    return data() + at;
  }
  iterator insert(const_iterator pos, std::initializer_list<std::int64_t> values) {
    return insert(pos, values.begin(), values.end());
  }
  iterator erase(const_iterator pos) { return erase(pos, pos + 1); }
  iterator erase(const_iterator first, const_iterator last) {
    const std::size_t at = static_cast<std::size_t>(first - begin());
    const std::size_t count = static_cast<std::size_t>(last - first);
    std::copy(data() + at + count, data() + size_, data() + at);
    size_ -= count;
    return data() + at;
  }

  friend bool operator==(const DimVector& a, const DimVector& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }
  friend bool operator==(const DimVector& a, const std::vector<std::int64_t>& b) noexcept {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  void release() noexcept {
    if (heap_ != nullptr) ::operator delete(heap_);
    heap_ = nullptr;
    capacity_ = 0;
  }
  // Takes other's values, leaving it empty (and inline).
  void take(DimVector& other) noexcept {
    size_ = other.size_;
    if (other.heap_ != nullptr) {
      heap_ = other.heap_;
      capacity_ = other.capacity_;
      other.heap_ = nullptr;
      other.capacity_ = 0;
    } else {
      std::copy(other.inline_, other.inline_ + other.size_, inline_);
    }
    other.size_ = 0;
  }

  std::size_t size_ = 0;
  std::size_t capacity_ = 0;         // of heap_; inline_ holds kInline
  std::int64_t* heap_ = nullptr;     // null while the values fit inline_
  std::int64_t inline_[kInline]{};
};

}  // namespace mpsim

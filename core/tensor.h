// Tensor: a strided view (sizes, strides, offset, dtype) over a shared Storage.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <ostream>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/device.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/scalar.h"
#include "core/shape.h"
#include "core/storage.h"

namespace mpsim {

class Tensor {
 public:
  Tensor() = default;  // undefined tensor (an absent optional argument)
  Tensor(std::shared_ptr<Storage> storage, Shape sizes, Strides strides, std::int64_t offset,
         DType dtype);

  bool defined() const { return storage_ != nullptr; }
  DType dtype() const { return dtype_; }
  Device device() const;
  const Shape& sizes() const { return sizes_; }
  const Shape& shape() const { return sizes_; }
  const Strides& strides() const { return strides_; }
  std::int64_t dim() const { return sizes_.ndim(); }
  std::int64_t size(std::int64_t dim) const;  // negative dims count from the end
  std::int64_t stride(std::int64_t dim) const;
  std::int64_t numel() const { return sizes_.numel(); }
  std::int64_t storage_offset() const { return offset_; }
  std::size_t element_size() const { return dtype_size(dtype_); }
  std::size_t nbytes() const { return static_cast<std::size_t>(numel()) * element_size(); }
  bool is_contiguous() const;
  const std::shared_ptr<Storage>& storage() const { return storage_; }

  // Address of the first element. Host pointers: the cpu and (unified memory) mps devices both
  // live in this address space; reading through them does not synchronize a device queue.
  void* data_ptr() const;
  template <Element T>
  T* data_ptr() const {
    check_dtype<T>("data_ptr");
    return static_cast<T*>(data_ptr());
  }

  // Views: share storage, never copy. Names and semantics are PyTorch's.
  Tensor view(const Shape& shape) const;     // one -1 allowed; needs compatible strides
  // The same bytes read as another dtype (torch's x.view(dtype)): a different element size
  // scales the last dim, which must have stride 1, and every other stride and the offset.
  Tensor view(DType dtype) const;
  Tensor reshape(const Shape& shape) const;  // a view when possible, else a copy
  Tensor permute(const IntList& dims) const;
  Tensor transpose(std::int64_t dim0, std::int64_t dim1) const;
  Tensor t() const;  // transpose of a <= 2-d tensor
  Tensor slice(std::int64_t dim, std::int64_t start, std::int64_t end, std::int64_t step = 1) const;
  Tensor select(std::int64_t dim, std::int64_t index) const;
  Tensor narrow(std::int64_t dim, std::int64_t start, std::int64_t length) const;
  Tensor expand(const Shape& shape) const;  // -1 keeps a size
  Tensor squeeze() const;
  Tensor squeeze(std::int64_t dim) const;
  Tensor unsqueeze(std::int64_t dim) const;
  Tensor flatten(std::int64_t start_dim = 0, std::int64_t end_dim = -1) const;
  Tensor as_strided(const Shape& sizes, const Strides& strides, std::int64_t offset) const;

  // Copies.
  Tensor contiguous() const;  // *this when already contiguous
  Tensor clone() const;
  Tensor to(DType dtype) const;    // *this when the dtype already matches
  Tensor to(Device device) const;  // *this when the device already matches
  // Copies src (broadcast to this shape, converted to this dtype) into this tensor.
  Tensor& copy_(const Tensor& src);

  // Host read-back for tests and tools: converts to T (as to(dtype_of<T>)) and synchronizes.
  template <Element T>
  std::vector<T> to_vector() const;
  template <Element T>
  T item() const;

  std::string to_string() const;  // like torch's repr: tensor([[1., 2.]], dtype=float16)

 private:
  template <class T>
  void check_dtype(const char* what) const {
    if (dtype_of<T> != dtype_) throw_dtype_mismatch(what, dtype_of<T>);
  }
  [[noreturn]] void throw_dtype_mismatch(const char* what, DType requested) const;
  std::vector<std::uint8_t> read_bytes_as(DType dtype) const;

  std::shared_ptr<Storage> storage_;
  Shape sizes_;
  Strides strides_;
  std::int64_t offset_ = 0;
  DType dtype_ = DType::Float32;
};

std::ostream& operator<<(std::ostream& os, const Tensor& t);

template <Element T>
std::vector<T> Tensor::to_vector() const {
  std::vector<std::uint8_t> bytes = read_bytes_as(dtype_of<T>);
  if constexpr (std::is_same_v<T, bool>) {
    return std::vector<bool>(bytes.begin(), bytes.end());  // one byte per bool element
  } else {
    std::vector<T> out(static_cast<std::size_t>(numel()));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
  }
}

template <Element T>
T Tensor::item() const {
  if (numel() != 1) {
    throw InvalidArgument("[item] a Tensor with " + std::to_string(numel()) +
                          " elements cannot be converted to a scalar");
  }
  return to_vector<T>()[0];
}

// ---- Factories. dtype defaults to float32 and device to cpu, as in PyTorch. ----
Tensor empty(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
Tensor empty_strided(const Shape& shape, const Strides& strides, DType dtype = DType::Float32,
                     Device device = Device::cpu());
Tensor zeros(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
Tensor ones(const Shape& shape, DType dtype = DType::Float32, Device device = Device::cpu());
Tensor full(const Shape& shape, Scalar value, DType dtype = DType::Float32,
            Device device = Device::cpu());
// arange(start, end, step): numel = ceil((end - start) / step), as torch.arange; integer
// arguments give int64, floating ones float32 (or `dtype` when given).
Tensor arange(Scalar end);
Tensor arange(Scalar start, Scalar end, Scalar step = 1, std::optional<DType> dtype = std::nullopt,
              Device device = Device::cpu());
Tensor scalar_tensor(Scalar value, DType dtype, Device device = Device::cpu());
Tensor empty_like(const Tensor& t);
// The strides of a dense result of `shape` laid out as the tensors `operands` (expanded to
// `shape`; same_shape: none was broadcast), as PyTorch's TensorIterator lays out its outputs
// (Note [elementwise output layout] in core/tensor.cc).
Strides layout_strides(const Shape& shape, const std::vector<Tensor>& operands, bool same_shape);

// Copies `count` elements from host memory into a new tensor of `shape`.
Tensor from_blob_copy(const void* data, std::int64_t count, DType dtype, const Shape& shape,
                      Device device = Device::cpu());

template <Element T>
Tensor from_vector(const std::vector<T>& values, const Shape& shape,
                   Device device = Device::cpu()) {
  if constexpr (std::is_same_v<T, bool>) {  // std::vector<bool> is packed: one byte per element
    const std::vector<std::uint8_t> bytes(values.begin(), values.end());
    return from_blob_copy(bytes.data(), static_cast<std::int64_t>(bytes.size()), DType::Bool, shape,
                          device);
  } else {
    return from_blob_copy(values.data(), static_cast<std::int64_t>(values.size()), dtype_of<T>,
                          shape, device);
  }
}
template <Element T>
Tensor from_vector(const std::vector<T>& values) {
  return from_vector(values, Shape{static_cast<std::int64_t>(values.size())});
}
// Braced lists deduce T: from_vector<float>({1, 2, 3}, {3}).
template <Element T>
Tensor from_vector(std::initializer_list<T> values, const Shape& shape,
                   Device device = Device::cpu()) {
  return from_vector(std::vector<T>(values), shape, device);
}

}  // namespace mpsim

// Device: where a tensor lives, {type, index}, parsed from and printed as "cpu", "mps", "mps:0".
#pragma once

#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <string_view>

namespace mpsim {

enum class DeviceType : std::uint8_t { CPU, MPS };
inline constexpr int kNumDeviceTypes = 2;

std::string_view device_type_name(DeviceType type);

class Device {
 public:
  constexpr Device() = default;
  constexpr Device(DeviceType type, int index = 0) : type_(type), index_(index) {}  // NOLINT
  // Parses "cpu", "mps", "mps:1"; throws DeviceError for anything else.
  explicit Device(std::string_view spec);

  static constexpr Device cpu() { return Device(DeviceType::CPU, 0); }
  static constexpr Device mps(int index = 0) { return Device(DeviceType::MPS, index); }

  constexpr DeviceType type() const { return type_; }
  constexpr int index() const { return index_; }
  constexpr bool is_cpu() const { return type_ == DeviceType::CPU; }
  constexpr bool is_mps() const { return type_ == DeviceType::MPS; }
  std::string to_string() const;  // "cpu" or "mps:0"
  friend constexpr bool operator==(Device, Device) = default;

 private:
  DeviceType type_ = DeviceType::CPU;
  int index_ = 0;
};

std::ostream& operator<<(std::ostream& os, Device device);

}  // namespace mpsim

template <>
struct std::hash<mpsim::Device> {
  std::size_t operator()(mpsim::Device d) const noexcept {
    return static_cast<std::size_t>(d.type()) * 1024u + static_cast<std::size_t>(d.index());
  }
};

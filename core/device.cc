#include "core/device.h"

#include <charconv>

#include "core/error.h"

namespace mpsim {

std::string_view device_type_name(DeviceType type) {
  return type == DeviceType::CPU ? "cpu" : "mps";
}

Device::Device(std::string_view spec) {
  const std::size_t colon = spec.find(':');
  const std::string_view type = spec.substr(0, colon);
  if (type == "cpu") {
    type_ = DeviceType::CPU;
  } else if (type == "mps") {
    type_ = DeviceType::MPS;
  } else {
    throw DeviceError("[device] unknown device '" + std::string(spec) +
                      "' (expected 'cpu', 'mps' or 'mps:N')");
  }
  if (colon != std::string_view::npos) {
    const std::string_view digits = spec.substr(colon + 1);
    const auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), index_);
    if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size() || index_ < 0) {
      throw DeviceError("[device] bad device index in '" + std::string(spec) +
                        "' (expected a non-negative integer after ':')");
    }
  }
}

std::string Device::to_string() const {
  if (type_ == DeviceType::CPU) return "cpu";
  return std::string(device_type_name(type_)) + ":" + std::to_string(index_);
}

std::ostream& operator<<(std::ostream& os, Device device) { return os << device.to_string(); }

}  // namespace mpsim

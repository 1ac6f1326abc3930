#include "core/scalar.h"

#include <cstdio>

namespace mpsim {

std::string Scalar::to_string() const {
  switch (kind_) {
    case Kind::Bool:
      return i_ ? "True" : "False";
    case Kind::Int:
      return std::to_string(i_);
    case Kind::Float: {
      char buf[32];
      std::snprintf(buf, sizeof(buf), "%.17g", d_);
      return buf;
    }
  }
  return {};
}

}  // namespace mpsim

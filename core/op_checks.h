// Argument checks the op front ends share (core/*_ops.cc): each throws an Error whose message
// starts with the op's name in brackets.
#pragma once

#include <string>
#include <string_view>

#include "core/error.h"
#include "core/tensor.h"

namespace mpsim::detail {

// "[op] ": the start of every message of op.
inline std::string tag(std::string_view op) {
  std::string t = "[";  // appended, not "[" + op: GCC 12 warns falsely (-Wrestrict) on that
  t.append(op).append("] ");
  return t;
}

// InvalidArgument naming the argument when t is undefined.
inline void require_defined(std::string_view op, const Tensor& t, std::string_view what) {
  if (!t.defined()) {
    throw InvalidArgument(tag(op) + "expected a defined tensor for " + std::string(what));
  }
}

}  // namespace mpsim::detail

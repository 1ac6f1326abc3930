// The op case database, tests/cases/op_cases.json (tests/cases/README.md says how a case is
// written): one list of calls, each an op's torch name with its arguments as Python passes them,
// that the registry test, the mps-equals-cpu test and the Python test all run. A test supplies
// the values of the tensors (its own oracle's inputs), the size of the dim "n", the dtype and
// the device; this file turns a case into a bound call of the op's signature.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/mpsim.h"
#include "core/op_registry.h"

namespace mpsim::test {

// What a tensor argument holds. Float kinds take the tested dtype; the others have their own.
enum class Values : std::uint8_t {
  Normal,       // any value (standard normal in Python)
  Positive,     // in [0.1, 4)
  NearOne,      // in [0.8, 1.25)
  Probability,  // in [0, 1]
  Ints,         // int64 in [low, high): indices
  Bools,        // bool
  Attend,       // a bool attention mask with no fully masked row: the diagonal is true
  Uniform,      // in [lo, hi): a function's domain (acosh, erfinv)
};

struct TensorSpec {
  Values values = Values::Normal;
  Shape shape;           // "n" already replaced by the test's size
  std::int64_t low = 0;  // Ints only
  std::int64_t high = 0;
  double lo = 0;  // Uniform only
  double hi = 0;
  std::string layout;  // "", "channels_last" (4-d, stored NHWC) or "transposed" (last two dims)
  int index = 0;       // which tensor of the call, from 0: a seed for the test's values
};

// Contiguous values of spec.shape on the cpu: the floats in `dtype`, the rest in their own dtype.
using MakeTensor = std::function<Tensor(const TensorSpec& spec, DType dtype)>;

struct OpCase {
  std::string id;  // the op's name, or the case's "id" where an op has several
  std::string op;  // a signature's name (core/op_signatures.cc)
  bool random = false;
  std::string json;  // the case as written, for messages
};

// Every case of tests/cases/op_cases.json, in file order. Throws Error if the file is malformed.
const std::vector<OpCase>& op_cases();

// The case as a call: its tensors made by `make` (in their layout, on `device`), "n" as `n`,
// "$dtype" as `dtype`, and `device` passed to an op with a device argument.
struct CaseCall {
  std::vector<ArgValue> positional;
  std::vector<std::pair<std::string, ArgValue>> named;
};
CaseCall make_call(const OpCase& c, std::int64_t n, DType dtype, Device device,
                   const MakeTensor& make);

// Binds the call to the case's signature and runs it.
std::vector<Tensor> run_call(const OpCase& c, CaseCall call);

// The op of core/op_list.h that the case's op dispatches to (copy for clone, contiguous and to;
// fill for zeros, ones and full; random for the random ops); none for a view.
std::optional<OpId> list_op(const OpCase& c);

}  // namespace mpsim::test

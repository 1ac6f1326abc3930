// Fuzz target: the op front end. The input picks an op of the registry (every public op, by its
// torch name), a device, and each argument by its declared kind: tensors of any dtype with
// shapes of 0 to 4 dims (sizes 0, 1, small, now and then huge) as contiguous tensors or views
// (transposed, sliced with a step, expanded), ints and lists with extreme values, doubles
// including NaN and inf, strings from the ops' vocabularies and garbage, dtypes, devices.
// Every call must compute or raise mpsim::Error: anything else (a crash, a sanitizer report, a
// different exception) is a finding, and so is a storage that outlives the call.
//
// Bounded so that no input can run for long: host and mps memory are capped (a huge request is
// an OutOfMemoryError, not a page-fault storm) and tensors made here hold at most 4096 elements.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>
#include <vector>

#include "allocator/host_allocator.h"
#include "core/mpsim.h"
#include "core/op_registry.h"
#include "device_sim/mps.h"
#include "tests/fuzz/fuzz_input.h"

namespace mpsim::fuzz {
namespace {

constexpr DType kDTypes[] = {DType::Bool,    DType::UInt8,    DType::Int32,   DType::Int64,
                             DType::Float16, DType::BFloat16, DType::Float32, DType::Float64};

constexpr const char* kWords[] = {
    "none",    "silu",      "tanh",    "same",  "valid", "nearest", "bilinear", "constant",
    "reflect", "replicate", "floor",   "trunc", "mean",  "sum",     "golden",   "fast",
    "float16", "bfloat16",  "float32", "int64", "cpu",   "mps",     "mps:1",    "",
    "bicubic", "None",      "-1",      "inf",   "nan",   "1e400",   "\xff\xfe", "area"};

std::int64_t any_int(FuzzInput& in) {
  switch (in.below(8)) {
    case 0:
      return std::numeric_limits<std::int64_t>::max();
    case 1:
      return std::numeric_limits<std::int64_t>::min();
    case 2:
      return std::int64_t{1} << in.in_range(20, 62);
    case 3:
      return -in.in_range(1, 5);
    default:
      return in.in_range(0, 6);
  }
}

double any_double(FuzzInput& in) {
  constexpr double kValues[] = {0.0, -0.0, 1.0, -1.0, 0.5, 2.0, 1e-5, 1e300, -1e300, 1e-310};
  switch (in.below(6)) {
    case 0:
      return std::numeric_limits<double>::quiet_NaN();
    case 1:
      return in.flag() ? std::numeric_limits<double>::infinity()
                       : -std::numeric_limits<double>::infinity();
    case 2:
      return in.any_double();
    default:
      return kValues[in.below(std::size(kValues))];
  }
}

std::vector<std::int64_t> int_list(FuzzInput& in) {
  std::vector<std::int64_t> v(static_cast<std::size_t>(in.below(5)));
  for (auto& x : v) x = any_int(in);
  return v;
}

Tensor make_tensor(FuzzInput& in, Device device) {
  const DType dtype = kDTypes[in.below(std::size(kDTypes))];
  const std::int64_t ndim = in.in_range(0, 4);
  std::vector<std::int64_t> sizes;
  std::int64_t numel = 1;
  for (std::int64_t d = 0; d < ndim; ++d) {
    const std::int64_t s = in.below(8) == 0 ? 0 : in.in_range(1, 7);
    sizes.push_back(s);
    numel *= s;
  }
  std::vector<float> values(static_cast<std::size_t>(numel));
  constexpr float kSpecial[] = {0.0f,
                                -0.0f,
                                1.0f,
                                -1.0f,
                                1e-40f,
                                65504.0f,
                                3e38f,
                                std::numeric_limits<float>::infinity(),
                                -std::numeric_limits<float>::infinity(),
                                std::numeric_limits<float>::quiet_NaN()};
  for (float& v : values) {
    const std::uint8_t b = in.byte();
    v = b < 32 ? kSpecial[b % std::size(kSpecial)] : static_cast<float>(b) / 16.0f - 8.0f;
  }
  Tensor t = from_vector(values, Shape(sizes)).to(dtype);
  switch (in.below(5)) {  // a view now and then
    case 0:
      if (t.dim() >= 2) t = t.transpose(0, t.dim() - 1);
      break;
    case 1:
      if (t.dim() >= 1 && t.size(0) > 1) t = t.slice(0, 0, t.size(0), 2);
      break;
    case 2:
      if (t.dim() >= 1 && t.size(0) == 1)
        t = t.expand(Shape([&] {
          std::vector<std::int64_t> s = t.sizes().dims();
          s[0] = in.in_range(1, 64);
          return s;
        }()));
      break;
    default:
      break;
  }
  return device.is_mps() && dtype != DType::Float64 ? t.to(device) : t;
}

ArgValue make_arg(FuzzInput& in, ArgKind kind, Device device) {
  switch (kind) {
    case ArgKind::Tensor:
    case ArgKind::OptionalTensor:
      return make_tensor(in, device);
    case ArgKind::TensorList: {
      std::vector<Tensor> list(static_cast<std::size_t>(in.below(4)));
      for (Tensor& t : list) t = make_tensor(in, device);
      return list;
    }
    case ArgKind::TensorOrScalar:
    case ArgKind::OptionalTensorOrScalar:
      if (in.flag()) return make_tensor(in, device);
      return Scalar(any_double(in));
    case ArgKind::Int:
    case ArgKind::OptionalInt:
      return any_int(in);
    case ArgKind::IntList:
    case ArgKind::OptionalIntList:
      return IntList(int_list(in));
    case ArgKind::IntOrIntList:
    case ArgKind::IntListOrString:
      if (in.flag()) return any_int(in);
      if (kind == ArgKind::IntListOrString && in.flag()) {
        return std::string(kWords[in.below(std::size(kWords))]);
      }
      return IntList(int_list(in));
    case ArgKind::Double:
    case ArgKind::OptionalDouble:
      return any_double(in);
    case ArgKind::Bool:
    case ArgKind::OptionalBool:
      return in.flag();
    case ArgKind::String:
    case ArgKind::OptionalString:
      return in.flag() ? std::string(kWords[in.below(std::size(kWords))]) : in.text(8);
    case ArgKind::Scalar:
    case ArgKind::OptionalScalar:
      switch (in.below(3)) {
        case 0:
          return Scalar(any_int(in));
        case 1:
          return Scalar(in.flag());
        default:
          return Scalar(any_double(in));
      }
    case ArgKind::DType:
    case ArgKind::OptionalDType:
      return kDTypes[in.below(std::size(kDTypes))];
    case ArgKind::Device:
      return in.flag() ? Device::cpu() : Device::mps(static_cast<int>(in.below(2)));
    case ArgKind::OptionalFloatList: {
      std::vector<double> v(static_cast<std::size_t>(in.below(3)));
      for (double& x : v) x = any_double(in);
      return v;
    }
  }
  return std::monostate{};
}

void set_up() {
  // Memory caps: a request beyond them is an OutOfMemoryError. The host cap leaves room for
  // the 4096-element tensors made here and ops' scratch.
  alloc::host_allocator().set_limit(std::size_t{64} << 20);
  mps::set_per_process_memory_fraction(0.002);
  set_fallback_enabled(true);
}

}  // namespace
}  // namespace mpsim::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace mpsim;
  static const bool ready = (fuzz::set_up(), true);
  (void)ready;
  fuzz::FuzzInput in(data, size);
  const std::vector<OpSignature>& sigs = op_signatures();
  const OpSignature& sig = sigs[in.below(sigs.size())];
  const Device device = in.below(4) == 0 ? Device::mps() : Device::cpu();
  const std::int64_t live_before = Storage::live_count();
  try {
    std::vector<ArgValue> positional;
    for (const ArgSpec& spec : sig.args) {
      // An optional argument is left to its default now and then, or given None.
      if (spec.default_value && in.below(3) == 0) break;
      if (is_optional(spec.kind) && in.below(4) == 0) {
        positional.emplace_back(std::monostate{});
        continue;
      }
      positional.push_back(fuzz::make_arg(in, spec.kind, device));
    }
    if (std::getenv("OP_FUZZ_VERBOSE") != nullptr) {  // to read a finding: the call, in Python
      std::string call = std::string(sig.name) + "(";
      for (const ArgValue& v : positional) {
        if (const Tensor* t = std::get_if<Tensor>(&v)) {
          call += "tensor " + t->sizes().to_string() + " " + std::string(dtype_name(t->dtype())) +
                  (t->is_contiguous() ? "" : " strided") + ", ";
        } else {
          call += arg_value_string(v) + ", ";
        }
      }
      std::fprintf(stderr, "op_fuzz: %s) on %s\n", call.c_str(), device.to_string().c_str());
    }
    const std::vector<ArgValue> bound = bind_arguments(sig, std::move(positional));
    const std::vector<Tensor> results = sig.call(bound);
    for (const Tensor& r : results) {
      if (r.defined() && r.numel() > 0 && r.numel() <= 4096) (void)r.to(Device::cpu());
    }
  } catch (const Error&) {
    // The documented outcome for a bad call.
  }
  try {
    mps::synchronize();
  } catch (const Error&) {
  }
  const std::int64_t live_after = Storage::live_count();
  if (live_after != live_before) {
    std::fprintf(stderr, "op_fuzz: %s left %lld storages alive\n", std::string(sig.name).c_str(),
                 static_cast<long long>(live_after - live_before));
    std::abort();
  }
  return 0;
}

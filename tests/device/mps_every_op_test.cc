// Every op of core/op_list.h runs on mps and on the cpu for every dtype it accepts, and the
// results agree byte for byte (NaN payloads included): the device runs the same kernels. A
// coverage test fails for an op with no case here, so a new op cannot be forgotten.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/mpsim.h"
#include "device_sim/mps.h"

namespace mpsim {
namespace {

const Device kMps = Device::mps();
const Device kCpu = Device::cpu();

// Several kernel blocks (kElementwiseGrain = 2^15, kReduceGrain = 2^14) plus a tail. In a
// ThreadSanitizer build the tensors stay under one block: Debian's TBB is not instrumented.
#if defined(__SANITIZE_THREAD__)
constexpr std::int64_t kLong = (1 << 14) - 13;
#else
constexpr std::int64_t kLong = (1 << 17) + 37;
#endif
const std::vector<Shape> kShapes = {Shape{kLong}, Shape{5, 7, 11}};

// What the device supports: everything the cpu kernels implement except float64.
constexpr DType kDTypes[] = {DType::Bool,    DType::UInt8,    DType::Int32,  DType::Int64,
                             DType::Float16, DType::BFloat16, DType::Float32};

// Values spanning signs, zero and magnitudes up to ~8, with NaN (one with a payload), +-inf
// and -0 among the floats; converted on the cpu, so both devices see the same bytes.
Tensor input(const Shape& shape, DType dtype, int seed) {
  const std::int64_t n = shape.numel();
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) {
    float x = 4.0f * std::sin(0.37f * static_cast<float>(i) + static_cast<float>(seed)) +
              (i % 5 == 0 ? 0.0f : 0.25f * static_cast<float>(seed));
    if (i % 7 == 3) x = std::round(x);
    if (is_floating(dtype)) {
      if (i % 97 == 11) x = std::bit_cast<float>(0x7fc12345u);  // a NaN with a payload
      if (i % 101 == 13) x = INFINITY;
      if (i % 103 == 17) x = -INFINITY;
      if (i % 107 == 19) x = -0.0f;
    }
    v[static_cast<std::size_t>(i)] = x;
  }
  return from_vector(v, shape).to(dtype);
}

using Inputs = std::vector<Tensor>;
// Runs one op on `in` (all on one device); shape/dtype/device serve the factories.
using Run = std::function<std::vector<Tensor>(const Inputs& in, const Shape& shape, DType dtype,
                                              Device device)>;

struct OpCase {
  std::string_view op;  // as in kOpDefs
  int arity;            // inputs made by input(); Where's first is bool
  Run run;
};

template <class F>
Run unary(F f) {
  return
      [f](const Inputs& in, const Shape&, DType, Device) { return std::vector<Tensor>{f(in[0])}; };
}
template <class F>
Run binary(F f) {
  return [f](const Inputs& in, const Shape&, DType, Device) {
    return std::vector<Tensor>{f(in[0], in[1])};
  };
}
// The matmul family's operands: the input as [rows, last] and as [1 or batch, rows, last].
Tensor as2(const Tensor& t) { return t.reshape({-1, t.size(-1)}); }
Tensor as3(const Tensor& t) { return t.dim() == 3 ? t : t.reshape({1, -1, t.size(-1)}); }

// The pooling and resizing operands: the input as [C, H, W] ([1, 1, n] for a 1-d input), as
// [1, C, H, W], and as a channels-last copy of that.
Tensor as_image(const Tensor& t) { return t.dim() == 1 ? t.reshape({1, 1, -1}) : t; }
Tensor as_batch(const Tensor& t) { return as_image(t).unsqueeze(0); }
Tensor channels_last(const Tensor& t) {
  return as_batch(t).permute({0, 2, 3, 1}).contiguous().permute({0, 3, 1, 2});
}

// The dims a reduction case uses: every dim, and one or two of them.
IntList some_dims(const Tensor& x) { return x.dim() == 1 ? IntList{0} : IntList{0, 2}; }

const std::vector<OpCase>& cases() {
  static const std::vector<OpCase> kCases = {
      {"abs", 1, unary([](const Tensor& x) { return abs(x); })},
      {"neg", 1, unary([](const Tensor& x) { return neg(x); })},
      {"exp", 1, unary([](const Tensor& x) { return exp(x); })},
      {"log", 1, unary([](const Tensor& x) { return log(x); })},
      {"log1p", 1, unary([](const Tensor& x) { return log1p(x); })},
      {"expm1", 1, unary([](const Tensor& x) { return expm1(x); })},
      {"sqrt", 1, unary([](const Tensor& x) { return sqrt(x); })},
      {"rsqrt", 1, unary([](const Tensor& x) { return rsqrt(x); })},
      {"sin", 1, unary([](const Tensor& x) { return sin(x); })},
      {"cos", 1, unary([](const Tensor& x) { return cos(x); })},
      {"tanh", 1, unary([](const Tensor& x) { return tanh(x); })},
      {"erf", 1, unary([](const Tensor& x) { return erf(x); })},
      {"relu", 1, unary([](const Tensor& x) { return relu(x); })},
      {"sigmoid", 1, unary([](const Tensor& x) { return sigmoid(x); })},
      {"silu", 1, unary([](const Tensor& x) { return silu(x); })},
      {"gelu", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{gelu(in[0]), gelu(in[0], "tanh")};
       }},
      {"softplus", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{softplus(in[0]), softplus(in[0], 2, 3)};
       }},
      {"reciprocal", 1, unary([](const Tensor& x) { return reciprocal(x); })},
      {"square", 1, unary([](const Tensor& x) { return square(x); })},
      {"add", 2,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{add(in[0], in[1]), add(in[0], in[1], 2), in[0] + 3};
       }},
      {"sub", 2,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{sub(in[0], in[1]), sub(in[0], in[1], 3)};
       }},
      {"mul", 2, binary([](const Tensor& a, const Tensor& b) { return mul(a, b); })},
      {"div", 2,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{div(in[0], in[1]), div(in[0], 2.5)};
       }},
      {"maximum", 2, binary([](const Tensor& a, const Tensor& b) { return maximum(a, b); })},
      {"minimum", 2, binary([](const Tensor& a, const Tensor& b) { return minimum(a, b); })},
      {"pow", 2,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{pow(in[0], in[1]), pow(in[0], 2)};
       }},
      {"eq", 2, binary([](const Tensor& a, const Tensor& b) { return eq(a, b); })},
      {"ne", 2, binary([](const Tensor& a, const Tensor& b) { return ne(a, b); })},
      {"lt", 2, binary([](const Tensor& a, const Tensor& b) { return lt(a, b); })},
      {"le", 2, binary([](const Tensor& a, const Tensor& b) { return le(a, b); })},
      {"gt", 2, binary([](const Tensor& a, const Tensor& b) { return gt(a, b); })},
      {"ge", 2, binary([](const Tensor& a, const Tensor& b) { return ge(a, b); })},
      {"where", 3,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{where(in[0], in[1], in[2])};
       }},
      {"clamp", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{clamp(in[0], Scalar(1), Scalar(3)), clamp_min(in[0], 2)};
       }},
      {"copy", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         std::vector<Tensor> out = {in[0].clone()};
         if (in[0].dim() == 3) out.push_back(in[0].permute({2, 0, 1}).contiguous());
         for (DType to : kDTypes) {
           if (to != in[0].dtype()) out.push_back(in[0].to(to));
         }
         return out;
       }},
      {"fill", 0,
       [](const Inputs&, const Shape& shape, DType dtype, Device device) {
         return std::vector<Tensor>{full(shape, 3, dtype, device), zeros(shape, dtype, device)};
       }},
      {"arange", 0,
       [](const Inputs&, const Shape& shape, DType dtype, Device device) {
         const auto n = static_cast<double>(shape.numel());
         return std::vector<Tensor>{arange(0, n, 1, dtype, device),
                                    arange(-3.0, -3.0 + n * 0.25, 0.25, dtype, device)};
       }},
      {"linspace", 0,
       [](const Inputs&, const Shape& shape, DType dtype, Device device) {
         return std::vector<Tensor>{linspace(-2, 5, shape.numel(), dtype, device),
                                    linspace(3, 3, 1, dtype, device)};
       }},
      {"sum", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{sum(in[0]), sum(in[0], some_dims(in[0]), true)};
       }},
      {"mean", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{mean(in[0]), mean(in[0], some_dims(in[0]))};
       }},
      {"prod", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{prod(in[0]), prod(in[0], some_dims(in[0]))};
       }},
      {"var", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{var(in[0]), var(in[0], some_dims(in[0]), 0)};
       }},
      {"std", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{std(in[0]), std(in[0], some_dims(in[0]), 0)};
       }},
      {"amax", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{amax(in[0]), amax(in[0], some_dims(in[0]))};
       }},
      {"amin", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{amin(in[0]), amin(in[0], some_dims(in[0]))};
       }},
      {"logsumexp", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{logsumexp(in[0], some_dims(in[0]))};
       }},
      {"argmax", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{argmax(in[0]), argmax(in[0], 0)};
       }},
      {"argmin", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{argmin(in[0]), argmin(in[0], -1, true)};
       }},
      {"softmax", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{softmax(in[0], -1), softmax(in[0], 0)};
       }},
      {"log_softmax", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{log_softmax(in[0], -1), log_softmax(in[0], 0)};
       }},
      {"var_mean", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         const auto [v, m] = var_mean(in[0], some_dims(in[0]), 0);
         return std::vector<Tensor>{var_mean(in[0]).first, v, m};
       }},
      {"norm", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{norm(in[0]), norm(in[0], some_dims(in[0]), true)};
       }},
      // gather and index_select: indices spread over the gathered dim, made on the device.
      {"gather", 1,
       [](const Inputs& in, const Shape&, DType, Device device) {
         const Tensor& x = in[0];
         const std::int64_t d = x.dim() == 1 ? 0 : 1, n = x.size(d);
         std::vector<std::int64_t> idx(static_cast<std::size_t>(x.numel()));
         for (std::size_t k = 0; k < idx.size(); ++k) idx[k] = static_cast<std::int64_t>(k * 7 % n);
         const Tensor index = from_vector(idx, x.sizes(), device);
         const Tensor rows = from_vector<std::int64_t>({n - 1, 0, n / 2}, {3}, device);
         return std::vector<Tensor>{gather(x, d, index), index_select(x, d, rows)};
       }},
      {"flip", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         const Tensor& x = in[0];
         std::vector<Tensor> out = {flip(x, {-1}), flip(x, {0})};
         if (x.dim() == 3) out.push_back(flip(x.permute({2, 0, 1}), {0, 2}));
         return out;
       }},
      {"pad", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         const Tensor& x = in[0];
         std::vector<Tensor> out = {pad(x, {2, 1}, "constant", 1), pad(x, {-1, 3}),
                                    pad(x, {1, 2}, "reflect"), pad(x, {3, 0}, "replicate")};
         if (x.dim() == 3) {
           out.push_back(pad(x.permute({2, 0, 1}), {1, 1, 2, 0, 1, 1}, "reflect"));
           out.push_back(pad(x, {1, 1, 1, 1}, "replicate"));
         }
         return out;
       }},
      // tril and triu, on the last two dims (a 1-d input is rejected alike on both devices).
      {"tril", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{tril(in[0]), tril(in[0], -1), tril(in[0].transpose(0, -1), 2)};
       }},
      {"triu", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{triu(in[0]), triu(in[0], 1), triu(in[0].transpose(0, -1), -2)};
       }},
      {"layer_norm", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{layer_norm(in[0], {in[0].size(-1)})};
       }},
      {"rms_norm", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{rms_norm(in[0], {in[0].size(-1)})};
       }},
      {"group_norm", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{group_norm(in[0], 1)};
       }},
      // Reseeded per call, so both devices draw the same numbers.
      {"random", 1,
       [](const Inputs& in, const Shape& shape, DType dtype, Device device) {
         manual_seed(7);
         std::vector<Tensor> out;
         if (is_floating(dtype)) {
           out = {rand(shape, dtype, device), randn(shape, dtype, device), dropout(in[0], 0.25),
                  bernoulli(full(shape, 0.5, dtype, device))};
         }
         if (dtype != DType::Bool) {  // uint8 takes no negative bounds (torch's rule)
           out.push_back(randint(dtype == DType::UInt8 ? 0 : -5, 9, shape, dtype, device));
         }
         return out;
       }},
      {"matmul", 2,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{
             matmul(in[0], in[1].dim() > 1 ? in[1].transpose(-2, -1) : in[1])};
       }},
      {"mm", 2, binary([](const Tensor& a, const Tensor& b) { return mm(as2(a), as2(b).t()); })},
      {"bmm", 2,
       binary([](const Tensor& a, const Tensor& b) { return bmm(as3(a), as3(b).transpose(1, 2)); })},
      {"addmm", 2,
       binary([](const Tensor& a, const Tensor& b) {
         return addmm(as2(a).slice(1, 0, 1), as2(a), as2(b).t(), 0.5, 2);
       })},
      {"baddbmm", 2,
       binary([](const Tensor& a, const Tensor& b) {
         return baddbmm(as3(a).slice(2, 0, 1), as3(a), as3(b).transpose(1, 2), 0.5, 2);
       })},
      {"linear", 2,
       binary([](const Tensor& a, const Tensor& b) {
         return linear(a, as2(b), as2(b).select(1, 0));
       })},
      {"conv2d", 2,
       binary([](const Tensor& a, const Tensor& b) {
         const Tensor x = a.dim() == 3 ? a.unsqueeze(0) : a.reshape({1, 1, 1, -1});
         const std::int64_t c = x.size(1), kh = std::min<std::int64_t>(3, x.size(2));
         const Tensor flat = b.reshape({-1});
         return conv2d(x, flat.slice(0, 0, 2 * c * kh * 3).reshape({2, c, kh, 3}),
                       flat.slice(0, 0, 2), {1, 1}, {0, 1});
       })},
      {"conv_transpose2d", 2,
       [](const Inputs& in, const Shape&, DType, Device) {
         const Tensor x = in[0].dim() == 3 ? in[0].unsqueeze(0) : in[0].reshape({1, 1, 1, -1});
         const std::int64_t c = x.size(1), kh = std::min<std::int64_t>(3, x.size(2));
         const Tensor flat = in[1].reshape({-1});
         const Tensor w = flat.slice(0, 0, c * 2 * kh * 3).reshape({c, 2, kh, 3});
         // Stride 2 (four phases through the workspace) and stride 1 (one phase, in place).
         return std::vector<Tensor>{
             conv_transpose2d(x, w, flat.slice(0, 0, 2), {2, 2}, {0, 1}, {1, 1}),
             conv_transpose2d(x, w, std::nullopt, {1, 1}, {0, 1}, {0, 0}, 1, {1, 2})};
       }},
      {"scaled_dot_product_attention", 2,
       [](const Inputs& in, const Shape&, DType, Device) {
         const Tensor q = in[0].dim() == 3 ? in[0] : in[0].reshape({1, 1, -1});
         const Tensor k = in[1].dim() == 3 ? in[1] : in[1].reshape({1, 1, -1});
         return std::vector<Tensor>{scaled_dot_product_attention(q, k, q),
                                    scaled_dot_product_attention(q, k, k, std::nullopt, 0.0, true)};
       }},
      {"batch_norm", 1,
       [](const Inputs& in, const Shape&, DType dtype, Device device) {
         const std::int64_t c = in[0].dim() > 1 ? in[0].size(1) : 1;
         return std::vector<Tensor>{batch_norm(in[0], full({c}, 0.5, dtype, device),
                                               full({c}, 2.0, dtype, device))};
       }},
      {"avg_pool2d", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{
             avg_pool2d(as_image(in[0]), {1, 3}, {1, 2}, {0, 1}, true, false),
             avg_pool2d(channels_last(in[0]), {1, 4}, {}, {0, 2}, false, true, 3)};
       }},
      {"max_pool2d", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         auto [values, indices] =
             max_pool2d_with_indices(as_image(in[0]), {1, 3}, {1, 2}, {0, 1}, {1, 2}, true);
         return std::vector<Tensor>{values, indices, max_pool2d(channels_last(in[0]), {1, 2})};
       }},
      {"adaptive_avg_pool2d", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         return std::vector<Tensor>{adaptive_avg_pool2d(as_image(in[0]), {1, 5}),
                                    adaptive_avg_pool2d(channels_last(in[0]), {1, 4})};
       }},
      {"interpolate", 1,
       [](const Inputs& in, const Shape&, DType, Device) {
         const Tensor x = as_batch(in[0]);
         return std::vector<Tensor>{
             interpolate(x, IntList{2, 17}),
             interpolate(x, std::nullopt, std::vector<double>{1.5, 0.7}, "bilinear"),
             interpolate(channels_last(in[0]), IntList{3, 9}, std::nullopt, "bilinear", true)};
       }},
      // Stable Diffusion fusions, on the inputs reshaped to their layouts.
      {"bias_add", 2,
       [](const Inputs& in, const Shape&, DType, Device) {
         const Tensor x = as3(in[0]), skip = as3(in[1]);
         return std::vector<Tensor>{
             bias_add(x, in[1].reshape({-1}).slice(0, 0, x.size(-1)), skip)};
       }},
      {"bias_split_gelu", 2,
       [](const Inputs& in, const Shape&, DType, Device) {
         const std::int64_t m = in[0].numel() / 4 * 4;  // [2, m / 2], m / 2 even
         const Tensor x = in[0].reshape({-1}).slice(0, 0, m).reshape({2, m / 2});
         return std::vector<Tensor>{bias_split_gelu(x, in[1].reshape({-1}).slice(0, 0, m / 2))};
       }},
      {"skip_layer_norm", 2,
       [](const Inputs& in, const Shape&, DType, Device) {
         const Tensor x = as3(in[0]), skip = as3(in[1]);
         const std::int64_t c = x.size(-1);
         const Tensor flat = in[1].reshape({-1});
         const Tensor beta = in[0].reshape({-1}).slice(0, 0, c);
         auto [y, sum] = skip_layer_norm_with_sum(x, skip, flat.slice(0, 0, c), beta,
                                                  flat.slice(0, 0, c));
         return std::vector<Tensor>{y, sum, skip_layer_norm(x, skip, flat.slice(0, 0, c))};
       }},
      {"group_norm_nhwc", 2,
       [](const Inputs& in, const Shape&, DType, Device) {
         const Tensor x = as3(in[0]).unsqueeze(0);  // [1, H, W, C]
         const std::int64_t c = x.size(-1);
         const Tensor flat = in[1].reshape({-1});
         const Tensor gamma = flat.slice(0, 0, c), beta = in[0].reshape({-1}).slice(0, 0, c);
         return std::vector<Tensor>{group_norm_nhwc(x, 1, gamma, beta),
                                    group_norm_nhwc(x, 1, gamma, beta, 1e-3, "silu")};
       }},
      {"multi_head_attention", 2,
       [](const Inputs& in, const Shape&, DType, Device) {
         const Tensor f0 = in[0].reshape({-1}), f1 = in[1].reshape({-1});
         const Tensor qkv = f0.slice(0, 0, 12 * 30).reshape({1, 30, 2, 3, 2});
         const Tensor kv = f0.slice(0, 0, 8 * 30).reshape({1, 30, 2, 2, 2});
         const Tensor q = f1.slice(0, 0, 36).reshape({1, 9, 4});
         return std::vector<Tensor>{multi_head_attention(qkv), multi_head_attention(q, kv, 0.5)};
       }},
  };
  return kCases;
}

TEST(MpsEveryOp, EveryOpInTheOpListHasACase) {
  std::set<std::string_view> covered;
  for (const OpCase& c : cases()) covered.insert(c.op);
  for (int i = 0; i < kNumOps; ++i) {
    const OpId op(static_cast<std::uint16_t>(i));
    EXPECT_TRUE(covered.contains(op.name()))
        << "op '" << op.name() << "' has no case in mps_every_op_test.cc";
  }
}

// The outcome of one call on one device: the outputs' bytes, or the error it raised.
struct Outcome {
  std::vector<Tensor> outputs;  // on the cpu, contiguous
  std::string error;
};

Outcome run_on(const OpCase& c, const Inputs& cpu_inputs, const Shape& shape, DType dtype,
               Device device) {
  Outcome o;
  try {
    Inputs in;
    for (const Tensor& t : cpu_inputs) in.push_back(t.to(device));
    for (const Tensor& t : c.run(in, shape, dtype, device)) {
      EXPECT_EQ(t.device(), device);
      o.outputs.push_back(t.to(kCpu).contiguous());  // synchronizes: queued failures surface
    }
  } catch (const Error& e) {
    o.error = e.what();
    o.outputs.clear();
  }
  return o;
}

TEST(MpsEveryOp, MpsResultsAreBitIdenticalToTheCpuForEveryDtype) {
  int outputs_compared = 0;
  for (const OpCase& c : cases()) {
    const OpId op = find_op(c.op);
    std::set<DType> compared;
    for (DType dtype : kDTypes) {
      for (const Shape& shape : kShapes) {
        const std::string what =
            std::string(c.op) + " " + std::string(dtype_name(dtype)) + " " + shape.to_string();
        Inputs in;
        for (int i = 0; i < c.arity; ++i) {
          const bool condition = op.family() == OpFamily::Where && i == 0;
          in.push_back(input(shape, condition ? DType::Bool : dtype, i + 1));
        }
        const Outcome cpu = run_on(c, in, shape, dtype, kCpu);
        const Outcome mps = run_on(c, in, shape, dtype, kMps);
        // A dtype the op rejects is rejected alike (same front end) on both devices.
        ASSERT_EQ(mps.error, cpu.error) << what;
        if (!cpu.error.empty()) continue;
        ASSERT_EQ(mps.outputs.size(), cpu.outputs.size()) << what;
        for (std::size_t k = 0; k < cpu.outputs.size(); ++k) {
          const Tensor& a = cpu.outputs[k];
          const Tensor& b = mps.outputs[k];
          ASSERT_EQ(a.sizes(), b.sizes()) << what << " output " << k;
          ASSERT_EQ(a.dtype(), b.dtype()) << what << " output " << k;
          EXPECT_EQ(std::memcmp(a.data_ptr(), b.data_ptr(), a.nbytes()), 0)
              << what << " output " << k << " differs";
          ++outputs_compared;
        }
        compared.insert(dtype);
      }
    }
    EXPECT_FALSE(compared.empty()) << c.op << ": no dtype was accepted";
    // Every dtype the device's kernels take is exercised (not silently rejected).
    for (DType dtype : kDTypes) {
      if (mps::supports(op, dtype)) {
        EXPECT_TRUE(compared.contains(dtype))
            << c.op << " is supported for " << dtype_name(dtype) << " but no case ran it";
      }
    }
  }
  RecordProperty("outputs_compared", outputs_compared);
  std::printf("%d outputs compared byte for byte\n", outputs_compared);
  mps::synchronize();
}

}  // namespace
}  // namespace mpsim

// The matmul family: matmul, mm, bmm, addmm, baddbmm, linear. The front end (core/linalg_ops.cc)
// reduces each to one batched product: inputs a [*batch, M, K], b [*batch, K, N] and
// optionally c [*batch, M, N] (broadcast views, any strides), output [*batch, M, N], attributes
// alpha, beta and precision. Every batch element is one GemmProblem (gemm.h, Note [gemm
// numerics]).
#include "kernels_simd/matmul.h"

#include <string_view>
#include <vector>

#include "kernels_simd/gemm.h"

namespace mpsim::simd {
namespace {

// Element offset of batch element `index` (row-major over the batch dims) in view v.
std::int64_t batch_offset(const TensorView& v, std::size_t batch_dims, std::int64_t index) {
  std::int64_t off = 0;
  for (std::size_t d = batch_dims; d-- > 0;) {
    off += (index % v.sizes[d]) * v.strides[d];
    index /= v.sizes[d];
  }
  return off;
}

KernelStatus matmul_kernel(const KernelCall& call) {
  const TensorView& a = call.inputs[0];
  const TensorView& b = call.inputs[1];
  const TensorView* c = call.inputs.size() > 2 ? &call.inputs[2] : nullptr;
  const TensorView& out = call.outputs[0];
  const std::size_t nd = out.sizes.size();
  const std::size_t batch_dims = nd - 2;
  std::int64_t batch = 1;
  for (std::size_t d = 0; d < batch_dims; ++d) batch *= out.sizes[d];
  const std::size_t elem = dtype_size(out.dtype);

  GemmConfig config;
  config.dtype = out.dtype;
  const MatmulParams& p = call.params_as<MatmulParams>();
  config.alpha = p.alpha;
  config.beta = c == nullptr ? 0.0 : p.beta;
  config.fast = call.fast();

  auto at = [&](const TensorView& v, std::int64_t index) {
    return static_cast<char*>(v.data) +
           batch_offset(v, batch_dims, index) * static_cast<std::int64_t>(elem);
  };
  std::vector<GemmProblem> problems(static_cast<std::size_t>(batch));
  for (std::int64_t i = 0; i < batch; ++i) {
    GemmProblem& p = problems[static_cast<std::size_t>(i)];
    p.m = out.sizes[nd - 2];
    p.n = out.sizes[nd - 1];
    p.k = a.sizes[nd - 1];
    p.a = at(a, i);
    p.a_rs = a.strides[nd - 2];
    p.a_cs = a.strides[nd - 1];
    p.b = at(b, i);
    p.b_rs = b.strides[nd - 2];
    p.b_cs = b.strides[nd - 1];
    if (c != nullptr) {
      p.c = at(*c, i);
      p.c_rs = c->strides[nd - 2];
      p.c_cs = c->strides[nd - 1];
    }
    p.out = at(out, i);
    p.o_rs = out.strides[nd - 2];
    p.o_cs = out.strides[nd - 1];
  }
  gemm(config, problems);
  return KernelStatus::Ok;
}

}  // namespace

void register_matmul_kernels(KernelTable& table) {
  for (OpId op : ops_of_family<OpFamily::Matmul>()) table.set(op, matmul_kernel, kFloatDTypes);
}

}  // namespace mpsim::simd

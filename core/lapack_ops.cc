// Front ends of the lapack family (core/lapack_ops.h): validation as torch.linalg does, batch
// dims broadcast, operands reduced to [B, rows, cols], one OpCall per op (kernels:
// kernels_simd/lapack.cc, Note [lapack in double]); the ops that only select or rearrange a
// kernel's results (lu, lu_unpack, svdvals, eigvalsh, logdet, the checked forms) are here too.
#include "core/lapack_ops.h"

#include "core/complex_ops.h"

#include <cmath>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "core/backend.h"
#include "core/dispatch.h"
#include "core/ops.h"
#include "core/shape.h"

namespace mpsim {

namespace {

// An operand: its trailing `matrix_dims` dims form one matrix (2), vector (1, a [k, 1]
// matrix) or number (0); the leading ones are batch dims.
struct Operand {
  const Tensor* t;
  int matrix_dims;
};
// An output: the dims of one matrix (0 to 2) and the dtype (nullopt: the compute dtype).
struct Result {
  std::vector<std::int64_t> dims;
  std::optional<DType> dtype;
};

[[noreturn]] void fail_shape(std::string_view op, const std::string& what) {
  throw ShapeError("[" + std::string(op) + "] " + what);
}

void check_float(std::string_view op, const Tensor& t, const char* name) {
  if (!t.defined()) {
    throw InvalidArgument("[" + std::string(op) + "] expected a tensor for " + name);
  }
  if (!is_floating(t.dtype())) {
    throw DTypeError("[" + std::string(op) + "] expected a floating point tensor as " + name +
                     ", got " + std::string(dtype_name(t.dtype())));
  }
}

// A batch of matrices [*, m, n]; square: m == n.
void check_matrix(std::string_view op, const Tensor& t, const char* name, bool square) {
  check_float(op, t, name);
  if (t.dim() < 2) {
    fail_shape(op, std::string(name) + " must have at least 2 dimensions, got shape " +
                       t.sizes().to_string());
  }
  if (square && t.size(-1) != t.size(-2)) {
    fail_shape(op, std::string("expected ") + name + " to be a batch of square matrices, got " +
                       "shape " + t.sizes().to_string());
  }
}

void check_same_dtype(std::string_view op, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    throw DTypeError("[" + std::string(op) + "] expected tensors of one dtype, got " +
                     std::string(dtype_name(a.dtype())) + " and " +
                     std::string(dtype_name(b.dtype())));
  }
  if (a.device() != b.device()) {
    throw DeviceError("[" + std::string(op) + "] expected tensors on one device, got " +
                      a.device().to_string() + " and " + b.device().to_string());
  }
}

Shape leading(const Tensor& t, int trailing) {
  const auto& s = t.sizes();
  return Shape(std::vector<std::int64_t>(s.begin(), s.end() - trailing));
}

// Runs a lapack op over the broadcast batch of its operands; returns its results shaped
// [*batch, *dims].
std::vector<Tensor> call_lapack(OpId op, const std::vector<Operand>& ins,
                                const std::vector<Result>& outs, const LapackParams& params) {
  const std::string name(op.name());
  const Tensor& first = *ins[0].t;
  const DType compute = first.dtype();
  Shape batch;
  for (const Operand& in : ins) {
    batch = broadcast_shapes(name, batch, leading(*in.t, in.matrix_dims));
  }
  const std::int64_t count = batch.numel();
  std::vector<Tensor> views;
  for (const Operand& in : ins) {
    std::vector<std::int64_t> target(batch.begin(), batch.end());
    const auto& s = in.t->sizes();
    target.insert(target.end(), s.end() - in.matrix_dims, s.end());
    Tensor x = in.t->expand(Shape(target)).contiguous();
    if (is_floating(x.dtype())) x = x.to(compute);
    const std::int64_t rows = in.matrix_dims >= 1 ? s[s.size() - in.matrix_dims] : 1;
    const std::int64_t cols = in.matrix_dims == 2 ? s[s.size() - 1] : 1;
    views.push_back(x.reshape({count, rows, cols}));
  }
  std::vector<Tensor> results, out_views;
  for (const Result& r : outs) {
    std::vector<std::int64_t> full(batch.begin(), batch.end());
    full.insert(full.end(), r.dims.begin(), r.dims.end());
    Tensor t = empty(Shape(full), r.dtype.value_or(compute), first.device());
    const std::int64_t rows = r.dims.empty() ? 1 : r.dims[0];
    const std::int64_t cols = r.dims.size() == 2 ? r.dims[1] : 1;
    out_views.push_back(t.reshape({count, rows, cols}));
    results.push_back(std::move(t));
  }
  if (count > 0) dispatch(OpCall{op, compute, views, out_views, params});
  return results;
}

LapackParams no_params() {
  return LapackParams{false, true,  false, false, false,          false,
                      false, false, 0.0,   0.0,   MatrixOrd::Fro, 0};
}

std::int64_t rows_of(const Tensor& t) { return t.size(-2); }
std::int64_t cols_of(const Tensor& t) { return t.size(-1); }

// The info values of a batch (host read-back; synchronizes an mps queue).
std::vector<std::int64_t> infos(const Tensor& info) {
  return info.to(Device::cpu()).to(DType::Int64).to_vector<std::int64_t>();
}

// torch's "(Batch element i): " prefix for batched inputs.
std::string batch_prefix(const Tensor& A, std::size_t i) {
  return A.dim() > 2 ? "(Batch element " + std::to_string(i) + "): " : "";
}

template <class Message>
void raise_on_info(const std::string& api, const Tensor& A, const Tensor& info, Message message) {
  const auto values = infos(info);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] > 0) {
      throw LinAlgError("[" + api + "] " + batch_prefix(A, i) + message(values[i]));
    }
  }
}

void check_pivot(std::string_view op, bool pivot) {
  if (!pivot) {
    throw NotImplementedError("[" + std::string(op) +
                              "] LU without pivoting is not implemented on the CPU");
  }
}

}  // namespace

std::vector<Tensor> linalg_lu_factor_ex(const Tensor& A, bool pivot, bool check_errors) {
  constexpr OpId kOp = op_id("linalg_lu_factor_ex");
  check_matrix("linalg_lu_factor_ex", A, "A", false);
  check_pivot("linalg_lu_factor_ex", pivot);
  const std::int64_t m = rows_of(A), n = cols_of(A);
  auto r = call_lapack(
      kOp, {{&A, 2}},
      {{{m, n}, std::nullopt}, {{std::min(m, n)}, DType::Int32}, {{}, DType::Int32}}, no_params());
  if (check_errors) {
    raise_on_info("linalg_lu_factor_ex", A, r[2], [](std::int64_t i) {
      return "U[" + std::to_string(i) + "," + std::to_string(i) + "] is zero";
    });
  }
  return r;
}

std::vector<Tensor> linalg_lu_factor(const Tensor& A, bool pivot) {
  auto r = linalg_lu_factor_ex(A, pivot, false);
  const auto values = infos(r[2]);
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i] > 0) {
      const std::string at = std::to_string(values[i]);
      throw Error("[linalg_lu_factor] " + batch_prefix(A, i) + "U[" + at + "," + at +
                  "] is zero and using it on lu_solve would result in a division by zero. If "
                  "you still want to perform the factorization, consider calling "
                  "linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)");
    }
  }
  return {r[0], r[1]};
}

std::vector<Tensor> lu_unpack(const Tensor& LU, const Tensor& pivots, bool unpack_data,
                              bool unpack_pivots) {
  check_matrix("lu_unpack", LU, "LU_data", false);
  if (!pivots.defined() || (pivots.dtype() != DType::Int32 && pivots.dtype() != DType::Int64)) {
    throw DTypeError("[lu_unpack] expected LU_pivots of dtype int32");
  }
  const std::int64_t m = rows_of(LU), n = cols_of(LU), k = std::min(m, n);
  if (pivots.dim() < 1 || pivots.size(-1) != k) {
    fail_shape("lu_unpack", "expected LU_pivots of shape [*, " + std::to_string(k) + "], got " +
                                pivots.sizes().to_string());
  }
  Tensor L = empty({0}, LU.dtype(), LU.device()), U = L, P = L;
  if (unpack_data) {
    U = triu(LU.narrow(-2, 0, k));
    Tensor lower = tril(LU.narrow(-1, 0, k), -1);
    std::vector<double> id(static_cast<std::size_t>(m * k), 0.0);
    for (std::int64_t i = 0; i < k; ++i) id[static_cast<std::size_t>(i * k + i)] = 1.0;
    L = add(lower, from_vector(id, {m, k}).to(LU.dtype()).to(LU.device()));
  }
  if (unpack_pivots) {
    Shape batch = leading(LU, 2);
    const Tensor piv = pivots
                           .expand(Shape([&] {
                             std::vector<std::int64_t> s(batch.begin(), batch.end());
                             s.push_back(k);
                             return s;
                           }()))
                           .to(Device::cpu())
                           .to(DType::Int64)
                           .contiguous();
    const auto p = piv.to_vector<std::int64_t>();
    const std::int64_t count = batch.numel();
    std::vector<double> perm_matrix(static_cast<std::size_t>(count * m * m), 0.0);
    for (std::int64_t b = 0; b < count; ++b) {
      std::vector<std::int64_t> perm(static_cast<std::size_t>(m));
      for (std::int64_t i = 0; i < m; ++i) perm[static_cast<std::size_t>(i)] = i;
      for (std::int64_t j = 0; j < k; ++j) {
        const std::int64_t to = p[static_cast<std::size_t>(b * k + j)] - 1;
        if (to < 0 || to >= m) {
          throw InvalidArgument("[lu_unpack] pivot " + std::to_string(to + 1) +
                                " out of range [1, " + std::to_string(m) + "]");
        }
        std::swap(perm[static_cast<std::size_t>(j)], perm[static_cast<std::size_t>(to)]);
      }
      for (std::int64_t i = 0; i < m; ++i) {
        perm_matrix[static_cast<std::size_t>(b * m * m + perm[static_cast<std::size_t>(i)] * m +
                                             i)] = 1.0;
      }
    }
    std::vector<std::int64_t> shape(batch.begin(), batch.end());
    shape.push_back(m);
    shape.push_back(m);
    P = from_vector(perm_matrix, Shape(shape)).to(LU.dtype()).to(LU.device());
  }
  return {P, L, U};
}

std::vector<Tensor> linalg_lu(const Tensor& A, bool pivot) {
  check_matrix("linalg_lu", A, "A", false);
  check_pivot("linalg_lu", pivot);
  auto f = linalg_lu_factor_ex(A, pivot, false);
  return lu_unpack(f[0], f[1]);
}

Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left,
                       bool adjoint) {
  constexpr OpId kOp = op_id("linalg_lu_solve");
  check_matrix("linalg_lu_solve", LU, "LU", true);
  check_matrix("linalg_lu_solve", B, "B", false);
  check_same_dtype("linalg_lu_solve", LU, B);
  const std::int64_t n = rows_of(LU);
  if ((left ? rows_of(B) : cols_of(B)) != n) {
    fail_shape("linalg_lu_solve", "incompatible shapes of LU " + LU.sizes().to_string() +
                                      " and B " + B.sizes().to_string());
  }
  if (pivots.dtype() != DType::Int32 && pivots.dtype() != DType::Int64) {
    throw DTypeError("[linalg_lu_solve] expected pivots of dtype int32, got " +
                     std::string(dtype_name(pivots.dtype())));
  }
  if (pivots.dim() < 1 || pivots.size(-1) != n) {
    fail_shape("linalg_lu_solve", "expected pivots of shape [*, " + std::to_string(n) + "], got " +
                                      pivots.sizes().to_string());
  }
  LapackParams p = no_params();
  p.left = left;
  p.transpose = adjoint;
  return call_lapack(kOp, {{&LU, 2}, {&pivots, 1}, {&B, 2}},
                     {{{rows_of(B), cols_of(B)}, std::nullopt}}, p)[0];
}

Tensor linalg_det(const Tensor& A) {
  check_matrix("linalg_det", A, "A", true);
  return call_lapack(op_id("linalg_det"), {{&A, 2}}, {{{}, std::nullopt}}, no_params())[0];
}

std::vector<Tensor> linalg_slogdet(const Tensor& A) {
  check_matrix("linalg_slogdet", A, "A", true);
  return call_lapack(op_id("linalg_slogdet"), {{&A, 2}}, {{{}, std::nullopt}, {{}, std::nullopt}},
                     no_params());
}

Tensor logdet(const Tensor& A) {
  check_matrix("logdet", A, "A", true);
  auto r = linalg_slogdet(A);
  // sign < 0: NaN; sign 0: log 0 = -inf (logabsdet already); NaN sign: NaN.
  return where(lt(r[0], 0), std::numeric_limits<double>::quiet_NaN(),
               where(ne(r[0], r[0]), r[0], r[1]));
}

std::vector<Tensor> linalg_inv_ex(const Tensor& A, bool check_errors) {
  check_matrix("linalg_inv_ex", A, "A", true);
  const std::int64_t n = rows_of(A);
  auto r = call_lapack(op_id("linalg_inv_ex"), {{&A, 2}},
                       {{{n, n}, std::nullopt}, {{}, DType::Int32}}, no_params());
  if (check_errors) {
    raise_on_info("linalg_inv_ex", A, r[1], [](std::int64_t i) {
      return "The diagonal element " + std::to_string(i) +
             " is zero, the inversion could not be completed because the input matrix is "
             "singular.";
    });
  }
  return r;
}

Tensor linalg_inv(const Tensor& A) {
  check_matrix("linalg_inv", A, "A", true);
  auto r = linalg_inv_ex(A, false);
  raise_on_info("linalg_inv", A, r[1], [](std::int64_t i) {
    return "The diagonal element " + std::to_string(i) +
           " is zero, the inversion could not be completed because the input matrix is "
           "singular.";
  });
  return r[0];
}

std::vector<Tensor> linalg_solve_ex(const Tensor& A, const Tensor& B, bool left,
                                    bool check_errors) {
  check_matrix("linalg_solve_ex", A, "A", true);
  check_float("linalg_solve_ex", B, "B");
  check_same_dtype("linalg_solve_ex", A, B);
  const std::int64_t n = rows_of(A);
  // torch's rule: B is a batch of vectors when it is 1-d, or when its shape is A's batch
  // shape followed by n.
  const bool vector = B.dim() == 1 || (B.dim() == A.dim() - 1 && [&] {
                        for (std::int64_t i = 0; i < B.dim(); ++i) {
                          if (B.size(i) != A.size(i)) return false;
                        }
                        return true;
                      }());
  const Tensor b = vector ? B.unsqueeze(left ? -1 : -2) : B;
  if (b.dim() < 2 || (left ? rows_of(b) : cols_of(b)) != n) {
    fail_shape("linalg_solve_ex", "incompatible shapes of A " + A.sizes().to_string() + " and B " +
                                      B.sizes().to_string());
  }
  LapackParams p = no_params();
  p.left = left;
  auto r = call_lapack(op_id("linalg_solve_ex"), {{&A, 2}, {&b, 2}},
                       {{{rows_of(b), cols_of(b)}, std::nullopt}, {{}, DType::Int32}}, p);
  if (vector) r[0] = r[0].squeeze(left ? -1 : -2);
  if (check_errors) {
    raise_on_info("linalg_solve_ex", A, r[1], [](std::int64_t) {
      return std::string("The solver failed because the input matrix is singular.");
    });
  }
  return r;
}

Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left) {
  auto r = linalg_solve_ex(A, B, left, false);
  raise_on_info("linalg_solve", A, r[1], [](std::int64_t) {
    return std::string("The solver failed because the input matrix is singular.");
  });
  return r[0];
}

Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left,
                               bool unitriangular) {
  check_matrix("linalg_solve_triangular", A, "A", true);
  check_matrix("linalg_solve_triangular", B, "B", false);
  check_same_dtype("linalg_solve_triangular", A, B);
  if ((left ? rows_of(B) : cols_of(B)) != rows_of(A)) {
    fail_shape("linalg_solve_triangular", "incompatible shapes of A " + A.sizes().to_string() +
                                              " and B " + B.sizes().to_string());
  }
  LapackParams p = no_params();
  p.upper = upper;
  p.left = left;
  p.unitriangular = unitriangular;
  return call_lapack(op_id("linalg_solve_triangular"), {{&A, 2}, {&B, 2}},
                     {{{rows_of(B), cols_of(B)}, std::nullopt}}, p)[0];
}

std::vector<Tensor> linalg_cholesky_ex(const Tensor& A, bool upper, bool check_errors) {
  check_matrix("linalg_cholesky_ex", A, "A", true);
  const std::int64_t n = rows_of(A);
  LapackParams p = no_params();
  p.upper = upper;
  auto r = call_lapack(op_id("linalg_cholesky_ex"), {{&A, 2}},
                       {{{n, n}, std::nullopt}, {{}, DType::Int32}}, p);
  if (check_errors) {
    raise_on_info("linalg_cholesky_ex", A, r[1], [](std::int64_t i) {
      return "The factorization could not be completed because the input is not "
             "positive-definite (the leading minor of order " +
             std::to_string(i) + " is not positive-definite).";
    });
  }
  return r;
}

Tensor linalg_cholesky(const Tensor& A, bool upper) {
  check_matrix("linalg_cholesky", A, "A", true);
  auto r = linalg_cholesky_ex(A, upper, false);
  raise_on_info("linalg_cholesky", A, r[1], [](std::int64_t i) {
    return "The factorization could not be completed because the input is not "
           "positive-definite (the leading minor of order " +
           std::to_string(i) + " is not positive-definite).";
  });
  return r[0];
}

Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper) {
  check_matrix("cholesky_solve", B, "input", false);
  check_matrix("cholesky_solve", L, "input2", true);
  check_same_dtype("cholesky_solve", B, L);
  if (rows_of(B) != rows_of(L)) {
    fail_shape("cholesky_solve", "incompatible shapes of input " + B.sizes().to_string() +
                                     " and input2 " + L.sizes().to_string());
  }
  LapackParams p = no_params();
  p.upper = upper;
  return call_lapack(op_id("cholesky_solve"), {{&B, 2}, {&L, 2}},
                     {{{rows_of(B), cols_of(B)}, std::nullopt}}, p)[0];
}

Tensor cholesky_inverse(const Tensor& L, bool upper) {
  check_matrix("cholesky_inverse", L, "input", true);
  LapackParams p = no_params();
  p.upper = upper;
  const std::int64_t n = rows_of(L);
  return call_lapack(op_id("cholesky_inverse"), {{&L, 2}}, {{{n, n}, std::nullopt}}, p)[0];
}

std::vector<Tensor> geqrf(const Tensor& A) {
  check_matrix("geqrf", A, "input", false);
  const std::int64_t m = rows_of(A), n = cols_of(A);
  return call_lapack(op_id("geqrf"), {{&A, 2}},
                     {{{m, n}, std::nullopt}, {{std::min(m, n)}, std::nullopt}}, no_params());
}

Tensor linalg_householder_product(const Tensor& A, const Tensor& tau) {
  check_matrix("linalg_householder_product", A, "input", false);
  check_float("linalg_householder_product", tau, "tau");
  check_same_dtype("linalg_householder_product", A, tau);
  const std::int64_t m = rows_of(A), n = cols_of(A);
  if (m < n) {
    fail_shape("linalg_householder_product",
               "input.shape[-2] must be greater than or equal to input.shape[-1], got " +
                   A.sizes().to_string());
  }
  if (tau.dim() != A.dim() - 1 || tau.size(-1) > n) {
    fail_shape("linalg_householder_product",
               "expected tau of shape [*, k] with k <= input.shape[-1] and input's batch "
               "dims, got tau " +
                   tau.sizes().to_string() + " and input " + A.sizes().to_string());
  }
  return call_lapack(op_id("linalg_householder_product"), {{&A, 2}, {&tau, 1}},
                     {{{m, n}, std::nullopt}}, no_params())[0];
}

Tensor ormqr(const Tensor& A, const Tensor& tau, const Tensor& other, bool left, bool transpose) {
  check_matrix("ormqr", A, "input", false);
  check_float("ormqr", tau, "tau");
  check_matrix("ormqr", other, "other", false);
  check_same_dtype("ormqr", A, tau);
  check_same_dtype("ormqr", A, other);
  const std::int64_t mn = left ? rows_of(other) : cols_of(other);
  if (rows_of(A) != mn) {
    fail_shape("ormqr", "input.shape[-2] must equal other.shape[" +
                            std::string(left ? "-2" : "-1") + "], got input " +
                            A.sizes().to_string() + " and other " + other.sizes().to_string());
  }
  if (tau.dim() != A.dim() - 1 || tau.size(-1) > std::min(mn, cols_of(A))) {
    fail_shape("ormqr", "expected tau of shape [*, k] with k <= min(input.shape[-2:]), got " +
                            tau.sizes().to_string());
  }
  LapackParams p = no_params();
  p.left = left;
  p.transpose = transpose;
  return call_lapack(op_id("ormqr"), {{&A, 2}, {&tau, 1}, {&other, 2}},
                     {{{rows_of(other), cols_of(other)}, std::nullopt}}, p)[0];
}

std::vector<Tensor> linalg_qr(const Tensor& A, std::string_view mode) {
  check_matrix("linalg_qr", A, "A", false);
  if (mode != "reduced" && mode != "complete" && mode != "r") {
    throw InvalidArgument("[linalg_qr] mode must be 'reduced', 'complete' or 'r', got '" +
                          std::string(mode) + "'");
  }
  const std::int64_t m = rows_of(A), n = cols_of(A), k = std::min(m, n);
  LapackParams p = no_params();
  p.vectors = mode != "r";
  const std::int64_t r_rows = mode == "complete" ? m : k;
  if (mode == "r") {
    Tensor R = call_lapack(op_id("linalg_qr"), {{&A, 2}}, {{{r_rows, n}, std::nullopt}}, p)[0];
    return {empty({0}, A.dtype(), A.device()), R};
  }
  return call_lapack(op_id("linalg_qr"), {{&A, 2}},
                     {{{m, mode == "complete" ? m : k}, std::nullopt}, {{r_rows, n}, std::nullopt}},
                     p);
}

namespace {

bool upper_of(std::string_view op, std::string_view uplo) {
  if (uplo != "L" && uplo != "U" && uplo != "l" && uplo != "u") {
    throw InvalidArgument("[" + std::string(op) + "] UPLO must be 'L' or 'U', got '" +
                          std::string(uplo) + "'");
  }
  return uplo == "U" || uplo == "u";
}

}  // namespace

std::vector<Tensor> linalg_eigh(const Tensor& A, std::string_view UPLO) {
  check_matrix("linalg_eigh", A, "A", true);
  LapackParams p = no_params();
  p.upper = upper_of("linalg_eigh", UPLO);
  p.vectors = true;
  const std::int64_t n = rows_of(A);
  return call_lapack(op_id("linalg_eigh"), {{&A, 2}}, {{{n}, std::nullopt}, {{n, n}, std::nullopt}},
                     p);
}

Tensor linalg_eigvalsh(const Tensor& A, std::string_view UPLO) {
  check_matrix("linalg_eigvalsh", A, "A", true);
  LapackParams p = no_params();
  p.upper = upper_of("linalg_eigvalsh", UPLO);
  return call_lapack(op_id("linalg_eigh"), {{&A, 2}}, {{{rows_of(A)}, std::nullopt}}, p)[0];
}

namespace {

// linalg_eig's outputs in the kernel's real form: values [..., n, 2], vectors [..., n, 2 n].
// A complex A goes to the kernel as its parts, [..., n, 2 n] (each row's (re, im) pairs): a
// real A is square, so the kernel tells the two apart by the column count.
std::vector<Tensor> eig_parts(std::string_view op, const Tensor& A, bool vectors) {
  const bool complex_input = A.defined() && (A.dtype() == DType::Complex64 ||
                                             A.dtype() == DType::Complex128);
  const Tensor real_form = complex_input ? view_as_real(A) : A;
  if (complex_input) {
    if (A.dim() < 2 || A.size(-1) != A.size(-2)) {
      fail_shape(op, "expected A to be a batch of square matrices, got shape " +
                         A.sizes().to_string());
    }
  } else {
    check_matrix(op, A, "A", true);
  }
  if (A.dtype() == DType::Float16 || A.dtype() == DType::BFloat16) {
    throw DTypeError("[" + std::string(op) + "] Low precision dtypes not supported. Got " +
                     std::string(dtype_name(A.dtype())));
  }
  // inf * 0 and NaN * 0 are NaN, so the sum is NaN exactly when an element is not finite
  if (A.numel() > 0 && std::isnan(sum(mul(real_form, 0.0)).item<double>())) {
    throw InvalidArgument("[" + std::string(op) + "] input tensor should not contain infs or NaNs.");
  }
  LapackParams p = no_params();
  p.vectors = vectors;
  const std::int64_t n = rows_of(A);
  std::vector<Result> outs = {{{n, 2}, std::nullopt}};
  if (vectors) outs.push_back({{n, 2 * n}, std::nullopt});
  if (!complex_input) return call_lapack(op_id("linalg_eig"), {{&A, 2}}, outs, p);
  std::vector<std::int64_t> shape(A.sizes().begin(), A.sizes().end());
  shape.back() = 2 * n;
  const Tensor rows = real_form.contiguous().reshape(Shape(shape));
  return call_lapack(op_id("linalg_eig"), {{&rows, 2}}, outs, p);
}

}  // namespace

std::vector<Tensor> linalg_eig(const Tensor& A) {
  const std::vector<Tensor> parts = eig_parts("linalg_eig", A, true);
  std::vector<std::int64_t> shape(A.sizes().begin(), A.sizes().end());
  shape.push_back(2);
  return {view_as_complex(parts[0]), view_as_complex(parts[1].reshape(Shape(shape)))};
}

Tensor linalg_eigvals(const Tensor& A) {
  return view_as_complex(eig_parts("linalg_eigvals", A, false)[0]);
}

std::vector<Tensor> linalg_svd(const Tensor& A, bool full_matrices) {
  check_matrix("linalg_svd", A, "A", false);
  const std::int64_t m = rows_of(A), n = cols_of(A), k = std::min(m, n);
  LapackParams p = no_params();
  p.vectors = true;
  p.full = full_matrices;
  return call_lapack(op_id("linalg_svd"), {{&A, 2}},
                     {{{m, full_matrices ? m : k}, std::nullopt},
                      {{k}, std::nullopt},
                      {{full_matrices ? n : k, n}, std::nullopt}},
                     p);
}

Tensor linalg_svdvals(const Tensor& A) {
  check_matrix("linalg_svdvals", A, "A", false);
  return call_lapack(op_id("linalg_svd"), {{&A, 2}},
                     {{{std::min(rows_of(A), cols_of(A))}, std::nullopt}}, no_params())[0];
}

namespace {

double eps_of(DType t) {
  switch (t) {
    case DType::Float16:
      return 0x1p-10;
    case DType::BFloat16:
      return 0x1p-7;
    case DType::Float32:
      return 0x1p-23;
    default:
      return 0x1p-52;
  }
}

}  // namespace

std::vector<Tensor> linalg_lstsq(const Tensor& A, const Tensor& B, std::optional<double> rcond,
                                 std::optional<std::string_view> driver) {
  check_matrix("linalg_lstsq", A, "A", false);
  check_float("linalg_lstsq", B, "B");
  check_same_dtype("linalg_lstsq", A, B);
  const std::string d(driver.value_or("gelsy"));
  if (d != "gels" && d != "gelsy" && d != "gelsd" && d != "gelss") {
    throw InvalidArgument(
        "[linalg_lstsq] parameter `driver` should be one of (gels, gelsy, gelsd, gelss), got '" +
        d + "'");
  }
  const std::int64_t m = rows_of(A), n = cols_of(A);
  const bool vector = B.dim() == A.dim() - 1;
  const Tensor b = vector ? B.unsqueeze(-1) : B;
  if (b.dim() < 2 || rows_of(b) != m) {
    fail_shape("linalg_lstsq", "input.size(-2) should match other.size(-2), got A " +
                                   A.sizes().to_string() + " and B " + B.sizes().to_string());
  }
  const std::int64_t k = cols_of(b);
  LapackParams p = no_params();
  p.rtol =
      d == "gels" ? 0.0 : rcond.value_or(eps_of(A.dtype()) * static_cast<double>(std::max(m, n)));
  if (p.rtol < 0) p.rtol = eps_of(A.dtype());  // LAPACK: a negative rcond means machine eps
  p.residuals = m > n && d != "gelsy";
  auto r = call_lapack(op_id("linalg_lstsq"), {{&A, 2}, {&b, 2}},
                       {{{n, k}, std::nullopt},
                        {{k}, std::nullopt},
                        {{}, DType::Int64},
                        {{std::min(m, n)}, std::nullopt}},
                       p);
  if (vector) r[0] = r[0].squeeze(-1);
  Tensor none = empty({0}, A.dtype(), A.device());
  // Residuals only when every matrix has full rank (torch's rule).
  if (p.residuals) {
    const auto ranks = r[2].to(Device::cpu()).contiguous().to_vector<std::int64_t>();
    for (std::int64_t rank : ranks) {
      if (rank != n) p.residuals = false;
    }
  }
  Tensor residuals = p.residuals ? r[1] : none;
  if (p.residuals && vector) residuals = residuals.squeeze(-1);
  Tensor rank = d == "gels" ? empty({0}, DType::Int64, A.device()) : r[2];
  Tensor sv = d == "gelsd" || d == "gelss" ? r[3] : none;
  return {r[0], residuals, rank, sv};
}

namespace {

// torch's tolerances: rtol defaults to eps * max(m, n) unless atol is given and positive.
LapackParams tolerances(const Tensor& A, std::optional<double> atol, std::optional<double> rtol,
                        bool hermitian) {
  LapackParams p = no_params();
  p.hermitian = hermitian;
  p.atol = atol.value_or(0.0);
  const double default_rtol =
      eps_of(A.dtype()) * static_cast<double>(std::max(rows_of(A), cols_of(A)));
  p.rtol = rtol ? *rtol : (atol && *atol > 0.0 ? 0.0 : default_rtol);
  return p;
}

}  // namespace

Tensor linalg_pinv(const Tensor& A, std::optional<double> atol, std::optional<double> rtol,
                   bool hermitian) {
  check_matrix("linalg_pinv", A, "A", hermitian);
  return call_lapack(op_id("linalg_pinv"), {{&A, 2}}, {{{cols_of(A), rows_of(A)}, std::nullopt}},
                     tolerances(A, atol, rtol, hermitian))[0];
}

Tensor linalg_matrix_rank(const Tensor& A, std::optional<double> atol, std::optional<double> rtol,
                          bool hermitian) {
  check_matrix("linalg_matrix_rank", A, "A", hermitian);
  return call_lapack(op_id("linalg_matrix_rank"), {{&A, 2}}, {{{}, DType::Int64}},
                     tolerances(A, atol, rtol, hermitian))[0];
}

namespace {

MatrixOrd parse_ord(std::string_view op, std::string_view ord) {
  static const std::pair<const char*, MatrixOrd> kOrds[] = {
      {"fro", MatrixOrd::Fro},     {"nuc", MatrixOrd::Nuc},      {"1", MatrixOrd::One},
      {"-1", MatrixOrd::MinusOne}, {"2", MatrixOrd::Two},        {"-2", MatrixOrd::MinusTwo},
      {"inf", MatrixOrd::Inf},     {"-inf", MatrixOrd::MinusInf}};
  for (const auto& [text, value] : kOrds) {
    if (ord == text) return value;
  }
  throw InvalidArgument("[" + std::string(op) + "] Order " + std::string(ord) +
                        " not supported (expected 'fro', 'nuc', 1, -1, 2, "
                        "-2, inf or -inf)");
}

}  // namespace

Tensor linalg_matrix_norm(const Tensor& A, std::string_view ord,
                          const std::vector<std::int64_t>& dim, bool keepdim) {
  check_float("linalg_matrix_norm", A, "A");
  const MatrixOrd o = parse_ord("linalg_matrix_norm", ord);
  if (A.dim() < 2) {
    fail_shape("linalg_matrix_norm",
               "A must have at least 2 dimensions, got shape " + A.sizes().to_string());
  }
  if (dim.size() != 2) {
    fail_shape("linalg_matrix_norm", "dim must be a 2-tuple, got " + to_string(dim));
  }
  const std::int64_t d0 = wrap_dim("linalg_matrix_norm", dim[0], A.dim());
  const std::int64_t d1 = wrap_dim("linalg_matrix_norm", dim[1], A.dim());
  if (d0 == d1) fail_shape("linalg_matrix_norm", "dims must be different, got " + to_string(dim));
  // Move (d0, d1) last, in that order.
  std::vector<std::int64_t> order;
  for (std::int64_t i = 0; i < A.dim(); ++i) {
    if (i != d0 && i != d1) order.push_back(i);
  }
  order.push_back(d0);
  order.push_back(d1);
  const Tensor x = A.permute(order);
  // The orders that take a maximum or minimum need something to take it over (torch's).
  const bool rows_needed = o == MatrixOrd::Inf || o == MatrixOrd::MinusInf || o == MatrixOrd::Two ||
                           o == MatrixOrd::MinusTwo;
  const bool cols_needed = o == MatrixOrd::One || o == MatrixOrd::MinusOne || o == MatrixOrd::Two ||
                           o == MatrixOrd::MinusTwo;
  if ((rows_needed && x.size(-2) == 0) || (cols_needed && x.size(-1) == 0)) {
    fail_shape("linalg_matrix_norm", "expected a non-empty reduction for ord " + std::string(ord) +
                                         ", got shape " + A.sizes().to_string());
  }
  LapackParams p = no_params();
  p.ord = o;
  Tensor out = call_lapack(op_id("linalg_matrix_norm"), {{&x, 2}}, {{{}, std::nullopt}}, p)[0];
  if (keepdim) {
    const std::int64_t lo = std::min(d0, d1), hi = std::max(d0, d1);
    out = out.unsqueeze(lo).unsqueeze(hi);
  }
  return out;
}

Tensor linalg_cond(const Tensor& A, std::string_view p_text) {
  check_matrix("linalg_cond", A, "A", false);
  LapackParams p = no_params();
  p.ord = p_text.empty() ? MatrixOrd::Two : parse_ord("linalg_cond", p_text);
  if (p.ord != MatrixOrd::Two && p.ord != MatrixOrd::MinusTwo && rows_of(A) != cols_of(A)) {
    fail_shape("linalg_cond", "expected a batch of square matrices for p = " + std::string(p_text) +
                                  ", got shape " + A.sizes().to_string());
  }
  return call_lapack(op_id("linalg_cond"), {{&A, 2}}, {{{}, std::nullopt}}, p)[0];
}

Tensor linalg_matrix_power(const Tensor& A, std::int64_t n) {
  check_matrix("linalg_matrix_power", A, "A", true);
  LapackParams p = no_params();
  p.power = n;
  const std::int64_t size = rows_of(A);
  auto r = call_lapack(op_id("linalg_matrix_power"), {{&A, 2}},
                       {{{size, size}, std::nullopt}, {{}, DType::Int32}}, p);
  if (n < 0) {
    raise_on_info("linalg_inv", A, r[1], [](std::int64_t i) {
      return "The diagonal element " + std::to_string(i) +
             " is zero, the inversion could not be completed because the input matrix is "
             "singular.";
    });
  }
  return r[0];
}

Tensor linalg_matrix_exp(const Tensor& A) {
  check_matrix("linalg_matrix_exp", A, "A", true);
  const std::int64_t n = rows_of(A);
  return call_lapack(op_id("linalg_matrix_exp"), {{&A, 2}}, {{{n, n}, std::nullopt}},
                     no_params())[0];
}

Tensor linalg_multi_dot(const std::vector<Tensor>& tensors) {
  constexpr std::string_view kName = "linalg_multi_dot";
  if (tensors.size() < 2) {
    throw InvalidArgument("[linalg_multi_dot] expected at least 2 tensors but got " +
                          std::to_string(tensors.size()));
  }
  const std::size_t last = tensors.size() - 1;
  std::vector<Tensor> mats;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const Tensor& t = tensors[i];
    check_float(kName, t, "tensors");
    check_same_dtype(kName, tensors[0], t);
    const bool end = i == 0 || i == last;
    if (t.dim() != 2 && !(end && t.dim() == 1)) {
      fail_shape(kName, "tensor " + std::to_string(i) + " must be 2D" +
                            (end ? std::string(" or 1D") : std::string()) + " but got " +
                            std::to_string(t.dim()) + "D");
    }
    mats.push_back(t.dim() == 2 ? t : (i == 0 ? t.unsqueeze(0) : t.unsqueeze(1)));
  }
  for (std::size_t i = 0; i < last; ++i) {
    if (mats[i].size(1) != mats[i + 1].size(0)) {
      fail_shape(kName, "tensors " + std::to_string(i) + " and " + std::to_string(i + 1) +
                            " with shapes " + mats[i].sizes().to_string() + " and " +
                            mats[i + 1].sizes().to_string() + " cannot be multiplied");
    }
  }
  std::vector<Operand> ins;
  for (const Tensor& t : mats) ins.push_back({&t, 2});
  Tensor out =
      call_lapack(op_id("linalg_multi_dot"), ins,
                  {{{mats.front().size(0), mats.back().size(1)}, std::nullopt}}, no_params())[0];
  if (tensors.front().dim() == 1) out = out.squeeze(0);
  if (tensors.back().dim() == 1) out = out.squeeze(-1);
  return out;
}

}  // namespace mpsim

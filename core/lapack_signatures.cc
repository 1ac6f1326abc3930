// The declarations of the linear algebra ops (core/op_declaration.h says how to read one):
// torch.linalg's functions as linalg_<name> (Python: mpsim.linalg.<name>), torch's older
// names (det, inverse, svd, qr, lu, ...), and the vector products (dot, inner, outer, mv,
// addmv, addr, addbmm, vecdot, cross), composed of matmul's golden products. Part of the
// table of core/op_signatures.cc (detail::lapack_signatures).
#include <string>
#include <utility>

#include "core/lapack_ops.h"
#include "core/op_declaration.h"
#include "core/ops.h"

namespace mpsim {

namespace {

using K = ArgKind;

constexpr ArgDecl kA{"A", K::Tensor};
constexpr ArgDecl kB{"B", K::Tensor};
constexpr ArgDecl kAArgs[] = {kA};
constexpr ArgDecl kInputArgs[] = {{"input", K::Tensor}};
constexpr ArgDecl kLuFactorExArgs[] = {
    kA, {"pivot", K::Bool, "True"}, {"check_errors", K::Bool, "False"}};
constexpr ArgDecl kLuFactorArgs[] = {kA, {"pivot", K::Bool, "True"}};
constexpr ArgDecl kLuSolveArgs[] = {{"LU", K::Tensor},
                                    {"pivots", K::Tensor},
                                    kB,
                                    {"left", K::Bool, "True"},
                                    {"adjoint", K::Bool, "False"}};
constexpr ArgDecl kLuUnpackArgs[] = {{"LU_data", K::Tensor},
                                     {"LU_pivots", K::Tensor},
                                     {"unpack_data", K::Bool, "True"},
                                     {"unpack_pivots", K::Bool, "True"}};
constexpr ArgDecl kTorchLuArgs[] = {
    kA, {"pivot", K::Bool, "True"}, {"get_infos", K::Bool, "False"}};
constexpr ArgDecl kTorchLuSolveArgs[] = {
    {"input", K::Tensor}, {"LU_data", K::Tensor}, {"LU_pivots", K::Tensor}};
constexpr ArgDecl kCheckedArgs[] = {kA, {"check_errors", K::Bool, "False"}};
constexpr ArgDecl kSolveArgs[] = {kA, kB, {"left", K::Bool, "True"}};
constexpr ArgDecl kSolveExArgs[] = {
    kA, kB, {"left", K::Bool, "True"}, {"check_errors", K::Bool, "False"}};
constexpr ArgDecl kSolveTriangularArgs[] = {
    kA, kB, {"upper", K::Bool}, {"left", K::Bool, "True"}, {"unitriangular", K::Bool, "False"}};
constexpr ArgDecl kTriangularSolveArgs[] = {{"input", K::Tensor},
                                            kA,
                                            {"upper", K::Bool, "True"},
                                            {"transpose", K::Bool, "False"},
                                            {"unitriangular", K::Bool, "False"}};
constexpr ArgDecl kCholeskyArgs[] = {kA, {"upper", K::Bool, "False"}};
constexpr ArgDecl kCholeskyExArgs[] = {
    kA, {"upper", K::Bool, "False"}, {"check_errors", K::Bool, "False"}};
constexpr ArgDecl kCholeskySolveArgs[] = {
    {"input", K::Tensor}, {"input2", K::Tensor}, {"upper", K::Bool, "False"}};
constexpr ArgDecl kCholeskyInverseArgs[] = {{"input", K::Tensor}, {"upper", K::Bool, "False"}};
constexpr ArgDecl kHouseholderArgs[] = {{"input", K::Tensor}, {"tau", K::Tensor}};
constexpr ArgDecl kOrmqrArgs[] = {{"input", K::Tensor},
                                  {"tau", K::Tensor},
                                  {"other", K::Tensor},
                                  {"left", K::Bool, "True"},
                                  {"transpose", K::Bool, "False"}};
constexpr ArgDecl kQrArgs[] = {kA, {"mode", K::String, "'reduced'"}};
constexpr ArgDecl kTorchQrArgs[] = {{"input", K::Tensor}, {"some", K::Bool, "True"}};
constexpr ArgDecl kEighArgs[] = {kA, {"UPLO", K::String, "'L'"}};
constexpr ArgDecl kSymeigArgs[] = {
    {"input", K::Tensor}, {"eigenvectors", K::Bool, "False"}, {"upper", K::Bool, "True"}};
constexpr ArgDecl kSvdArgs[] = {kA, {"full_matrices", K::Bool, "True"}};
constexpr ArgDecl kTorchSvdArgs[] = {
    {"input", K::Tensor}, {"some", K::Bool, "True"}, {"compute_uv", K::Bool, "True"}};
constexpr ArgDecl kLstsqArgs[] = {
    kA, kB, {"rcond", K::OptionalDouble, "None"}, {"driver", K::OptionalString, "None"}};
constexpr ArgDecl kTolArgs[] = {kA,
                                {"atol", K::OptionalDouble, "None"},
                                {"rtol", K::OptionalDouble, "None"},
                                {"hermitian", K::Bool, "False"}};
constexpr ArgDecl kPinverseArgs[] = {{"input", K::Tensor}, {"rcond", K::Double, "1e-15"}};
constexpr ArgDecl kMatrixNormArgs[] = {kA,
                                       {"ord", K::String, "'fro'"},
                                       {"dim", K::IntList, "[-2, -1]"},
                                       {"keepdim", K::Bool, "False"}};
constexpr ArgDecl kCondArgs[] = {kA, {"p", K::OptionalString, "None"}};
constexpr ArgDecl kMatrixPowerArgs[] = {kA, {"n", K::Int}};
constexpr ArgDecl kTorchMatrixPowerArgs[] = {{"input", K::Tensor}, {"n", K::Int}};
constexpr ArgDecl kMultiDotArgs[] = {{"tensors", K::TensorList}};
constexpr ArgDecl kTensorinvArgs[] = {kA, {"ind", K::Int, "2"}};
constexpr ArgDecl kTensorsolveArgs[] = {kA, kB, {"dims", K::OptionalIntList, "None"}};
constexpr ArgDecl kVanderArgs[] = {{"x", K::Tensor}, {"N", K::OptionalInt, "None"}};
constexpr ArgDecl kVecdotArgs[] = {{"x", K::Tensor}, {"y", K::Tensor}, {"dim", K::Int, "-1"}};
constexpr ArgDecl kLinalgCrossArgs[] = {
    {"input", K::Tensor}, {"other", K::Tensor}, {"dim", K::Int, "-1"}};
constexpr ArgDecl kCrossArgs[] = {
    {"input", K::Tensor}, {"other", K::Tensor}, {"dim", K::OptionalInt, "None"}};
constexpr ArgDecl kDotArgs[] = {{"input", K::Tensor}, {"other", K::Tensor}};
constexpr ArgDecl kOuterArgs[] = {{"input", K::Tensor}, {"vec2", K::Tensor}};
constexpr ArgDecl kMvArgs[] = {{"input", K::Tensor}, {"vec", K::Tensor}};
constexpr ArgDecl kBetaAlpha[] = {{"beta", K::Scalar, "1"}, {"alpha", K::Scalar, "1"}};
constexpr ArgDecl kAddmvArgs[] = {
    {"input", K::Tensor}, {"mat", K::Tensor}, {"vec", K::Tensor}, kBetaAlpha[0], kBetaAlpha[1]};
constexpr ArgDecl kAddrArgs[] = {
    {"input", K::Tensor}, {"vec1", K::Tensor}, {"vec2", K::Tensor}, kBetaAlpha[0], kBetaAlpha[1]};
constexpr ArgDecl kAddbmmArgs[] = {{"input", K::Tensor},
                                   {"batch1", K::Tensor},
                                   {"batch2", K::Tensor},
                                   kBetaAlpha[0],
                                   kBetaAlpha[1]};

[[noreturn]] void fail(std::string_view op, const std::string& what) {
  throw ShapeError("[" + std::string(op) + "] " + what);
}

void check_vector(std::string_view op, const Tensor& t, const char* name) {
  if (t.dim() != 1) {
    fail(op, std::string(name) + " must be 1-d, got shape " + t.sizes().to_string());
  }
}

void check_same(std::string_view op, const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype()) {
    throw DTypeError("[" + std::string(op) + "] expected both inputs to have the same dtype, " +
                     "got " + std::string(dtype_name(a.dtype())) + " and " +
                     std::string(dtype_name(b.dtype())));
  }
}

// dot and vdot: the golden product of two vectors of one size, a 0-d result.
Tensor dot_of(std::string_view op, const Tensor& a, const Tensor& b) {
  check_vector(op, a, "input");
  check_vector(op, b, "other");
  check_same(op, a, b);
  if (a.size(0) != b.size(0)) {
    fail(op, "inconsistent tensor size, expected input " + a.sizes().to_string() + " and other " +
                 b.sizes().to_string() + " to have the same number of elements");
  }
  return matmul(a, b);
}

// The cross product along dim (size 3) of broadcast a and b: each component a_i b_j - a_j b_i
// from exact products in double, rounded once to double and once to the dtype (on the cpu
// for an mps tensor: MPS has no float64).
Tensor cross_of(std::string_view op, const Tensor& a, const Tensor& b, std::int64_t dim) {
  check_same(op, a, b);
  const Shape shape = broadcast_shapes(op, a.sizes(), b.sizes());
  const std::int64_t d = wrap_dim(op, dim, shape.ndim());
  if (shape[static_cast<std::size_t>(d)] != 3) {
    fail(op, "inputs dimension " + std::to_string(dim) + " must have length 3, got shapes " +
                 a.sizes().to_string() + " and " + b.sizes().to_string());
  }
  const DType wide = is_floating(a.dtype()) ? DType::Float64 : a.dtype();
  const Tensor x = a.expand(shape).to(Device::cpu()).to(wide);
  const Tensor y = b.expand(shape).to(Device::cpu()).to(wide);
  auto component = [&](std::int64_t i, std::int64_t j) {
    return sub(mul(x.select(d, i), y.select(d, j)), mul(x.select(d, j), y.select(d, i)));
  };
  return stack({component(1, 2), component(2, 0), component(0, 1)}, d).to(a.dtype()).to(a.device());
}

Tensor outer_of(std::string_view op, const Tensor& a, const Tensor& b) {
  check_vector(op, a, "input");
  check_vector(op, b, "vec2");
  return mul(a.unsqueeze(1), b.unsqueeze(0));
}

std::vector<Tensor> svd_old(const Tensor& A, bool some, bool compute_uv) {
  if (!compute_uv) {
    const std::int64_t m = A.size(-2), n = A.size(-1);
    Shape batch(std::vector<std::int64_t>(A.sizes().begin(), A.sizes().end() - 2));
    auto with = [&](std::int64_t r, std::int64_t c) {
      std::vector<std::int64_t> s(batch.begin(), batch.end());
      s.push_back(r);
      s.push_back(c);
      return zeros(Shape(s), A.dtype(), A.device());
    };
    return {with(m, m), linalg_svdvals(A), with(n, n)};
  }
  auto r = linalg_svd(A, !some);
  return {r[0], r[1], r[2].transpose(-2, -1)};
}

// tensorinv: the inverse of A seen as a (prod(shape[:ind]), prod(shape[ind:])) matrix, shaped
// shape[ind:] + shape[:ind].
Tensor tensorinv(const Tensor& A, std::int64_t ind) {
  if (ind <= 0) {
    throw InvalidArgument(
        "[linalg_tensorinv] Expected a strictly positive integer for 'ind', "
        "but got " +
        std::to_string(ind));
  }
  if (ind > A.dim()) fail("linalg_tensorinv", "ind exceeds the input's dims");
  std::vector<std::int64_t> out_shape(A.sizes().begin() + ind, A.sizes().end());
  std::int64_t rows = 1, cols = 1;
  for (std::int64_t i = 0; i < A.dim(); ++i) (i < ind ? rows : cols) *= A.size(i);
  if (rows != cols) {
    fail("linalg_tensorinv",
         "Expected self to satisfy the requirement prod(self.shape[ind:]) "
         "== prod(self.shape[:ind]), but got " +
             std::to_string(cols) + " != " + std::to_string(rows));
  }
  out_shape.insert(out_shape.end(), A.sizes().begin(), A.sizes().begin() + ind);
  return linalg_inv(A.reshape({rows, cols})).reshape(Shape(out_shape));
}

// tensorsolve: X with tensordot(A, X, X.dim()) = B.
Tensor tensorsolve(const Tensor& A, const Tensor& B, const std::optional<IntList>& dims) {
  Tensor a = A;
  if (dims) {
    std::vector<std::int64_t> order, moved;
    for (std::int64_t d : *dims) moved.push_back(wrap_dim("linalg_tensorsolve", d, A.dim()));
    for (std::int64_t i = 0; i < A.dim(); ++i) {
      if (std::find(moved.begin(), moved.end(), i) == moved.end()) order.push_back(i);
    }
    order.insert(order.end(), moved.begin(), moved.end());
    a = A.permute(order);
  }
  if (B.dim() > a.dim()) fail("linalg_tensorsolve", "B has more dims than A");
  std::vector<std::int64_t> x_shape(a.sizes().begin() + B.dim(), a.sizes().end());
  std::int64_t x_numel = 1;
  for (std::int64_t s : x_shape) x_numel *= s;
  if (x_numel != B.numel()) {
    fail("linalg_tensorsolve",
         "Expected self to satisfy the requirement "
         "prod(self.shape[other.ndim:]) == prod(self.shape[:other.ndim]), "
         "but got " +
             std::to_string(x_numel) + " != " + std::to_string(B.numel()));
  }
  return linalg_solve(a.reshape({B.numel(), x_numel}), B.reshape({B.numel()}))
      .reshape(Shape(x_shape));
}

}  // namespace

std::vector<OpSignature> detail::lapack_signatures() {
  return {
      declare_op<kLuFactorExArgs>(
          "linalg_lu_factor_ex", "(LU, pivots, info): LU with partial pivoting, in double",
          [](auto a) {
            return linalg_lu_factor_ex(arg<"A">(a), arg<"pivot">(a), arg<"check_errors">(a));
          }),
      declare_op<kLuFactorArgs>(
          "linalg_lu_factor", "(LU, pivots); raises for a zero pivot",
          [](auto a) { return linalg_lu_factor(arg<"A">(a), arg<"pivot">(a)); }),
      declare_op<kLuFactorArgs>("linalg_lu", "(P, L, U) with A = P L U",
                                [](auto a) { return linalg_lu(arg<"A">(a), arg<"pivot">(a)); }),
      declare_op<kTorchLuArgs>("lu", "(LU, pivots[, infos]): torch.lu",
                               [](auto a) {
                                 auto r = linalg_lu_factor_ex(arg<"A">(a), arg<"pivot">(a), false);
                                 if (!arg<"get_infos">(a)) r.pop_back();
                                 return r;
                               }),
      declare_op<kLuUnpackArgs>("lu_unpack", "(P, L, U) of lu_factor's (LU, pivots)",
                                [](auto a) {
                                  return lu_unpack(arg<"LU_data">(a), arg<"LU_pivots">(a),
                                                   arg<"unpack_data">(a), arg<"unpack_pivots">(a));
                                }),
      declare_op<kLuSolveArgs>("linalg_lu_solve",
                               "X with A X = B (left) or X A = B from lu_factor's (LU, pivots)",
                               [](auto a) {
                                 return linalg_lu_solve(arg<"LU">(a), arg<"pivots">(a), arg<"B">(a),
                                                        arg<"left">(a), arg<"adjoint">(a));
                               }),
      declare_op<kTorchLuSolveArgs>("lu_solve", "torch.lu_solve(b, LU_data, LU_pivots)",
                                    [](auto a) {
                                      return linalg_lu_solve(arg<"LU_data">(a), arg<"LU_pivots">(a),
                                                             arg<"input">(a));
                                    }),
      declare_op<kAArgs>("linalg_det", "the determinant, from LU in double",
                         [](auto a) { return linalg_det(arg<"A">(a)); }),
      declare_op<kInputArgs>("det", "the determinant (linalg.det)",
                             [](auto a) { return linalg_det(arg<"input">(a)); }),
      declare_op<kAArgs>("linalg_slogdet", "(sign, log |det|)",
                         [](auto a) { return linalg_slogdet(arg<"A">(a)); }),
      declare_op<kInputArgs>("slogdet", "(sign, log |det|) (linalg.slogdet)",
                             [](auto a) { return linalg_slogdet(arg<"input">(a)); }),
      declare_op<kInputArgs>("logdet", "log det: NaN for a negative determinant",
                             [](auto a) { return logdet(arg<"input">(a)); }),
      declare_op<kCheckedArgs>(
          "linalg_inv_ex", "(inverse, info), in double",
          [](auto a) { return linalg_inv_ex(arg<"A">(a), arg<"check_errors">(a)); }),
      declare_op<kAArgs>("linalg_inv", "the inverse; raises LinAlgError when singular",
                         [](auto a) { return linalg_inv(arg<"A">(a)); }),
      declare_op<kInputArgs>("inverse", "the inverse (linalg.inv)",
                             [](auto a) { return linalg_inv(arg<"input">(a)); }),
      declare_op<kSolveExArgs>("linalg_solve_ex", "(X, info) with A X = B (X A = B)",
                               [](auto a) {
                                 return linalg_solve_ex(arg<"A">(a), arg<"B">(a), arg<"left">(a),
                                                        arg<"check_errors">(a));
                               }),
      declare_op<kSolveArgs>(
          "linalg_solve", "X with A X = B (left) or X A = B",
          [](auto a) { return linalg_solve(arg<"A">(a), arg<"B">(a), arg<"left">(a)); }),
      declare_op<kSolveTriangularArgs>(
          "linalg_solve_triangular", "X with A X = B (X A = B) for triangular A",
          [](auto a) {
            return linalg_solve_triangular(arg<"A">(a), arg<"B">(a), arg<"upper">(a),
                                           arg<"left">(a), arg<"unitriangular">(a));
          }),
      declare_op<kTriangularSolveArgs>(
          "triangular_solve", "(X, A) with A X = input (A^T X = input when transpose)",
          [](auto a) {
            const Tensor& A = arg<"A">(a);
            const bool upper = arg<"upper">(a);
            const bool transpose = arg<"transpose">(a);
            Tensor x =
                linalg_solve_triangular(transpose ? A.transpose(-2, -1) : A, arg<"input">(a),
                                        transpose ? !upper : upper, true, arg<"unitriangular">(a));
            return std::vector<Tensor>{x, A.clone()};
          }),
      declare_op<kCholeskyExArgs>("linalg_cholesky_ex", "(L, info) with A = L L^T (upper: U^T U)",
                                  [](auto a) {
                                    return linalg_cholesky_ex(arg<"A">(a), arg<"upper">(a),
                                                              arg<"check_errors">(a));
                                  }),
      declare_op<kCholeskyArgs>(
          "linalg_cholesky", "L with A = L L^T (upper: U with A = U^T U)",
          [](auto a) { return linalg_cholesky(arg<"A">(a), arg<"upper">(a)); }),
      declare_op<kCholeskyArgs>(
          "cholesky", "torch.cholesky (linalg.cholesky)",
          [](auto a) { return linalg_cholesky(arg<"A">(a), arg<"upper">(a)); }),
      declare_op<kCholeskySolveArgs>("cholesky_solve", "X with (L L^T) X = input, L = input2",
                                     [](auto a) {
                                       return cholesky_solve(arg<"input">(a), arg<"input2">(a),
                                                             arg<"upper">(a));
                                     }),
      declare_op<kCholeskyInverseArgs>(
          "cholesky_inverse", "(L L^T)^-1 of a Cholesky factor L",
          [](auto a) { return cholesky_inverse(arg<"input">(a), arg<"upper">(a)); }),
      declare_op<kInputArgs>("geqrf", "(a, tau): LAPACK's packed Householder QR",
                             [](auto a) { return geqrf(arg<"input">(a)); }),
      declare_op<kHouseholderArgs>(
          "linalg_householder_product", "the first n columns of H_0 H_1 ... H_{k-1}",
          [](auto a) { return linalg_householder_product(arg<"input">(a), arg<"tau">(a)); }),
      declare_op<kHouseholderArgs>(
          "orgqr", "torch.orgqr (linalg.householder_product)",
          [](auto a) { return linalg_householder_product(arg<"input">(a), arg<"tau">(a)); }),
      declare_op<kOrmqrArgs>("ormqr", "Q other, Q^T other, other Q or other Q^T (geqrf's Q)",
                             [](auto a) {
                               return ormqr(arg<"input">(a), arg<"tau">(a), arg<"other">(a),
                                            arg<"left">(a), arg<"transpose">(a));
                             }),
      declare_op<kQrArgs>("linalg_qr", "(Q, R); mode 'reduced', 'complete' or 'r'",
                          [](auto a) { return linalg_qr(arg<"A">(a), arg<"mode">(a)); }),
      declare_op<kTorchQrArgs>("qr", "torch.qr: (Q, R), complete when some=False",
                               [](auto a) {
                                 return linalg_qr(arg<"input">(a),
                                                  arg<"some">(a) ? "reduced" : "complete");
                               }),
      declare_op<kEighArgs>("linalg_eigh", "(eigenvalues ascending, eigenvectors)",
                            [](auto a) { return linalg_eigh(arg<"A">(a), arg<"UPLO">(a)); }),
      declare_op<kAArgs>("linalg_eig", "(eigenvalues, eigenvectors), complex, in double",
                         [](auto a) { return linalg_eig(arg<"A">(a)); }),
      declare_op<kAArgs>("linalg_eigvals", "the eigenvalues, complex, in double",
                         [](auto a) { return linalg_eigvals(arg<"A">(a)); }),
      declare_op<kEighArgs>("linalg_eigvalsh", "eigenvalues ascending",
                            [](auto a) { return linalg_eigvalsh(arg<"A">(a), arg<"UPLO">(a)); }),
      declare_op<kSymeigArgs>(
          "symeig", "torch.symeig: (eigenvalues, eigenvectors or an empty tensor)",
          [](auto a) {
            const Tensor& x = arg<"input">(a);
            const std::string uplo = arg<"upper">(a) ? "U" : "L";
            if (arg<"eigenvectors">(a)) return linalg_eigh(x, uplo);
            return std::vector<Tensor>{linalg_eigvalsh(x, uplo), empty({0}, x.dtype(), x.device())};
          }),
      declare_op<kSvdArgs>("linalg_svd", "(U, S descending, Vh)",
                           [](auto a) { return linalg_svd(arg<"A">(a), arg<"full_matrices">(a)); }),
      declare_op<kAArgs>("linalg_svdvals", "singular values, descending",
                         [](auto a) { return linalg_svdvals(arg<"A">(a)); }),
      declare_op<kTorchSvdArgs>(
          "svd", "torch.svd: (U, S, V); compute_uv=False gives zero U and V",
          [](auto a) { return svd_old(arg<"input">(a), arg<"some">(a), arg<"compute_uv">(a)); }),
      declare_op<kLstsqArgs>(
          "linalg_lstsq", "(solution, residuals, rank, singular_values), minimum norm",
          [](auto a) {
            return linalg_lstsq(arg<"A">(a), arg<"B">(a), arg<"rcond">(a), arg<"driver">(a));
          }),
      declare_op<kTolArgs>("linalg_pinv", "the pseudoinverse through the SVD (eigh: hermitian)",
                           [](auto a) {
                             return linalg_pinv(arg<"A">(a), arg<"atol">(a), arg<"rtol">(a),
                                                arg<"hermitian">(a));
                           }),
      declare_op<kPinverseArgs>("pinverse", "torch.pinverse: pinv with rtol = rcond",
                                [](auto a) {
                                  return linalg_pinv(arg<"input">(a), std::nullopt, arg<"rcond">(a),
                                                     false);
                                }),
      declare_op<kTolArgs>("linalg_matrix_rank",
                           "the number of singular values above the tolerance",
                           [](auto a) {
                             return linalg_matrix_rank(arg<"A">(a), arg<"atol">(a), arg<"rtol">(a),
                                                       arg<"hermitian">(a));
                           }),
      declare_op<kMatrixNormArgs>(
          "linalg_matrix_norm",
          "a matrix norm over dim: ord 'fro', 'nuc', '1', '-1', '2', '-2', 'inf', '-inf'",
          [](auto a) {
            return linalg_matrix_norm(arg<"A">(a), arg<"ord">(a), arg<"dim">(a), arg<"keepdim">(a));
          }),
      declare_op<kCondArgs>(
          "linalg_cond", "the condition number in the norm p (None: 2)",
          [](auto a) { return linalg_cond(arg<"A">(a), arg<"p">(a).value_or("")); }),
      declare_op<kMatrixPowerArgs>(
          "linalg_matrix_power", "A^n in double (n < 0: of the inverse)",
          [](auto a) { return linalg_matrix_power(arg<"A">(a), arg<"n">(a)); }),
      declare_op<kTorchMatrixPowerArgs>(
          "matrix_power", "input^n (linalg.matrix_power)",
          [](auto a) { return linalg_matrix_power(arg<"input">(a), arg<"n">(a)); }),
      declare_op<kAArgs>("linalg_matrix_exp", "e^A in double (Pade, scaling and squaring)",
                         [](auto a) { return linalg_matrix_exp(arg<"A">(a)); }),
      declare_op<kInputArgs>("matrix_exp", "e^input (linalg.matrix_exp)",
                             [](auto a) { return linalg_matrix_exp(arg<"input">(a)); }),
      declare_op<kMultiDotArgs>("linalg_multi_dot",
                                "the product of the matrices in double, rounded once",
                                [](auto a) { return linalg_multi_dot(arg<"tensors">(a)); }),
      declare_op<kTensorinvArgs>("linalg_tensorinv", "the inverse of A as a tensor of ind dims",
                                 [](auto a) { return tensorinv(arg<"A">(a), arg<"ind">(a)); }),
      declare_op<kTensorsolveArgs>(
          "linalg_tensorsolve", "X with tensordot(A, X, X.dim()) = B",
          [](auto a) { return tensorsolve(arg<"A">(a), arg<"B">(a), arg<"dims">(a)); }),
      declare_op<kVanderArgs>(
          "linalg_vander", "x^0, x^1, ..., x^(N-1) along a new last dim (each power rounded once)",
          [](auto a) {
            const Tensor& given = arg<"x">(a);
            const Tensor x = given.dim() == 0 ? given.unsqueeze(0) : given;  // torch's
            const std::int64_t n = arg<"N">(a).value_or(x.size(-1));
            if (n <= 1) {
              throw InvalidArgument("[linalg_vander] N must be greater than 1, got " +
                                    std::to_string(n));
            }
            const DType t = is_floating(x.dtype()) ? x.dtype() : DType::Int64;
            const Tensor powers = arange(0, n, 1, DType::Int64).to(x.device());
            return pow(x.to(t).unsqueeze(-1), powers.to(t));
          }),
      declare_op<kVecdotArgs>(
          "linalg_vecdot", "the dot product along dim (broadcast), golden as matmul",
          [](auto a) {
            const Tensor& x = arg<"x">(a);
            const Tensor& y = arg<"y">(a);
            check_same("linalg_vecdot", x, y);
            const Shape shape = broadcast_shapes("linalg_vecdot", x.sizes(), y.sizes());
            const std::int64_t d = wrap_dim("linalg_vecdot", arg<"dim">(a), shape.ndim());
            const Tensor xs = x.expand(shape).transpose(d, -1).unsqueeze(-2);
            const Tensor ys = y.expand(shape).transpose(d, -1).unsqueeze(-1);
            return matmul(xs, ys).squeeze(-1).squeeze(-1);
          }),
      declare_op<kLinalgCrossArgs>("linalg_cross", "the cross product along dim (size 3)",
                                   [](auto a) {
                                     return cross_of("linalg_cross", arg<"input">(a),
                                                     arg<"other">(a), arg<"dim">(a));
                                   }),
      declare_op<kCrossArgs>("cross", "the cross product along dim (None: the first dim of size 3)",
                             [](auto a) {
                               const Tensor& x = arg<"input">(a);
                               std::int64_t d = -1;
                               if (arg<"dim">(a)) {
                                 d = *arg<"dim">(a);
                               } else {
                                 const Shape s =
                                     broadcast_shapes("cross", x.sizes(), arg<"other">(a).sizes());
                                 for (std::int64_t i = s.ndim() - 1; i >= 0; --i) {
                                   if (s[static_cast<std::size_t>(i)] == 3) d = i;
                                 }
                               }
                               return cross_of("cross", x, arg<"other">(a), d);
                             }),
      declare_op<kDotArgs>("dot", "the dot product of two vectors, golden as matmul",
                           [](auto a) { return dot_of("dot", arg<"input">(a), arg<"other">(a)); }),
      declare_op<kDotArgs>("vdot", "dot, the first vector conjugated (real: dot)",
                           [](auto a) { return dot_of("vdot", arg<"input">(a), arg<"other">(a)); }),
      declare_op<kDotArgs>(
          "inner", "the products summed over the last dims",
          [](auto a) {
            const Tensor& x = arg<"input">(a);
            const Tensor& y = arg<"other">(a);
            if (x.dim() == 0 || y.dim() == 0) return mul(x, y);
            check_same("inner", x, y);
            if (x.size(-1) != y.size(-1)) {
              fail("inner",
                   "inner() the last dimension must match on both input tensors but got "
                   "shapes " +
                       x.sizes().to_string() + " and " + y.sizes().to_string());
            }
            const std::int64_t k = x.size(-1);
            std::vector<std::int64_t> shape(x.sizes().begin(), x.sizes().end() - 1);
            shape.insert(shape.end(), y.sizes().begin(), y.sizes().end() - 1);
            const std::int64_t rows =
                Shape(std::vector<std::int64_t>(x.sizes().begin(), x.sizes().end() - 1)).numel();
            const std::int64_t cols =
                Shape(std::vector<std::int64_t>(y.sizes().begin(), y.sizes().end() - 1)).numel();
            return mm(x.reshape({rows, k}), y.reshape({cols, k}).transpose(0, 1))
                .reshape(Shape(shape));
          }),
      declare_op<kOuterArgs>(
          "outer", "input[i] * vec2[j], each product rounded once",
          [](auto a) { return outer_of("outer", arg<"input">(a), arg<"vec2">(a)); }),
      declare_op<kOuterArgs>(
          "ger", "outer", [](auto a) { return outer_of("ger", arg<"input">(a), arg<"vec2">(a)); }),
      declare_op<kMvArgs>("mv", "matrix @ vector, golden as matmul",
                          [](auto a) {
                            const Tensor& m = arg<"input">(a);
                            if (m.dim() != 2)
                              fail("mv", "input must be 2-d, got shape " + m.sizes().to_string());
                            check_vector("mv", arg<"vec">(a), "vec");
                            return matmul(m, arg<"vec">(a));
                          }),
      declare_op<kAddmvArgs>(
          "addmv", "beta * input + alpha * (mat @ vec), rounded once",
          [](auto a) {
            const Tensor& m = arg<"mat">(a);
            const Tensor& in = arg<"input">(a);
            if (m.dim() != 2) {
              fail("addmv", "mat must be 2-d, got shape " + m.sizes().to_string());
            }
            check_vector("addmv", arg<"vec">(a), "vec");
            const Tensor c = in.dim() == 0 ? in : in.unsqueeze(-1);
            return addmm(c, m, arg<"vec">(a).unsqueeze(1), arg<"beta">(a), arg<"alpha">(a))
                .squeeze(1);
          }),
      declare_op<kAddrArgs>("addr", "beta * input + alpha * outer(vec1, vec2), rounded once",
                            [](auto a) {
                              check_vector("addr", arg<"vec1">(a), "vec1");
                              check_vector("addr", arg<"vec2">(a), "vec2");
                              return addmm(arg<"input">(a), arg<"vec1">(a).unsqueeze(1),
                                           arg<"vec2">(a).unsqueeze(0), arg<"beta">(a),
                                           arg<"alpha">(a));
                            }),
      declare_op<kAddbmmArgs>(
          "addbmm", "beta * input + alpha * sum_b batch1[b] @ batch2[b], one chain per output",
          [](auto a) {
            const Tensor& b1 = arg<"batch1">(a);
            const Tensor& b2 = arg<"batch2">(a);
            if (b1.dim() != 3 || b2.dim() != 3) {
              fail("addbmm", "batch1 and batch2 must be 3-d, got " + b1.sizes().to_string() +
                                 " and " + b2.sizes().to_string());
            }
            if (b1.size(0) != b2.size(0) || b1.size(2) != b2.size(1)) {
              fail("addbmm", "incompatible batch1 " + b1.sizes().to_string() + " and batch2 " +
                                 b2.sizes().to_string());
            }
            const std::int64_t n = b1.size(1), p = b2.size(2), k = b1.size(0) * b1.size(2);
            return addmm(arg<"input">(a), b1.permute({1, 0, 2}).reshape({n, k}), b2.reshape({k, p}),
                         arg<"beta">(a), arg<"alpha">(a));
          }),
  };
}

}  // namespace mpsim

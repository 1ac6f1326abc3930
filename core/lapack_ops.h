// Dense linear algebra with torch.linalg's names and semantics (core/lapack_ops.cc; kernels:
// kernels_simd/lapack.cc, Note [lapack in double]). Every op takes batches of matrices
// [*, m, n] of a floating dtype, broadcasts the batch dims of its operands, computes each
// matrix in double and rounds each output once. Results with several parts are returned in
// torch's order (linalg.svd: U, S, Vh). Integer outputs: pivots and info int32, rank int64.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/tensor.h"

namespace mpsim {

// LU with partial pivoting: (LU, pivots [*, min(m, n)] 1-based, info [*]); check_errors
// raises LinAlgError for a failed factorization (info < 0 never happens here).
std::vector<Tensor> linalg_lu_factor_ex(const Tensor& A, bool pivot = true,
                                        bool check_errors = false);
// (LU, pivots); raises for a singular matrix, as torch (U[i, i] is zero).
std::vector<Tensor> linalg_lu_factor(const Tensor& A, bool pivot = true);
// (P, L, U) with A = P L U.
std::vector<Tensor> linalg_lu(const Tensor& A, bool pivot = true);
// (P, L, U) of lu_factor's (LU, pivots); empty tensors for the parts not asked for.
std::vector<Tensor> lu_unpack(const Tensor& LU, const Tensor& pivots, bool unpack_data = true,
                              bool unpack_pivots = true);
// X with A X = B (left) or X A = B, A given as lu_factor's (LU, pivots); adjoint: A^T.
Tensor linalg_lu_solve(const Tensor& LU, const Tensor& pivots, const Tensor& B, bool left = true,
                       bool adjoint = false);

Tensor linalg_det(const Tensor& A);
std::vector<Tensor> linalg_slogdet(const Tensor& A);  // (sign, log |det|)
Tensor logdet(const Tensor& A);                       // log det: NaN for det < 0
std::vector<Tensor> linalg_inv_ex(const Tensor& A, bool check_errors = false);  // (inv, info)
Tensor linalg_inv(const Tensor& A);  // raises LinAlgError for a singular matrix
// (X, info) with A X = B (left) or X A = B; B [*, n] (or [n]) is a batch of vectors.
std::vector<Tensor> linalg_solve_ex(const Tensor& A, const Tensor& B, bool left = true,
                                    bool check_errors = false);
Tensor linalg_solve(const Tensor& A, const Tensor& B, bool left = true);
// X with A X = B (left) or X A = B, reading A's upper (lower) triangle only.
Tensor linalg_solve_triangular(const Tensor& A, const Tensor& B, bool upper, bool left = true,
                               bool unitriangular = false);

// L with A = L L^T (upper: U with A = U^T U), from that triangle of A; (L, info) for _ex.
std::vector<Tensor> linalg_cholesky_ex(const Tensor& A, bool upper = false,
                                       bool check_errors = false);
Tensor linalg_cholesky(const Tensor& A, bool upper = false);
Tensor cholesky_solve(const Tensor& B, const Tensor& L, bool upper = false);
Tensor cholesky_inverse(const Tensor& L, bool upper = false);

// Householder QR: geqrf's (a, tau); Q from reflectors; Q (or Q^T) times a matrix.
std::vector<Tensor> geqrf(const Tensor& A);
Tensor linalg_householder_product(const Tensor& A, const Tensor& tau);
Tensor ormqr(const Tensor& A, const Tensor& tau, const Tensor& other, bool left = true,
             bool transpose = false);
// mode "reduced", "complete" or "r" (Q empty).
std::vector<Tensor> linalg_qr(const Tensor& A, std::string_view mode = "reduced");

// (eigenvalues ascending, eigenvectors) of the symmetric matrix of A's UPLO triangle.
std::vector<Tensor> linalg_eigh(const Tensor& A, std::string_view UPLO = "L");
Tensor linalg_eigvalsh(const Tensor& A, std::string_view UPLO = "L");
// The eigenvalues and right eigenvectors of a general square matrix (real or complex), complex
// (complex64 for float32/complex64, complex128 for float64/complex128): Eigen's real Schur form in double; the values ascending by
// real part, then imaginary part, each vector of unit norm with its first component of largest
// modulus real and positive (torch's order and phase are unspecified).
std::vector<Tensor> linalg_eig(const Tensor& A);
Tensor linalg_eigvals(const Tensor& A);
// (U, S descending, Vh); svdvals: S.
std::vector<Tensor> linalg_svd(const Tensor& A, bool full_matrices = true);
Tensor linalg_svdvals(const Tensor& A);

// (solution, residuals, rank, singular_values) as torch.linalg.lstsq for each driver.
std::vector<Tensor> linalg_lstsq(const Tensor& A, const Tensor& B,
                                 std::optional<double> rcond = std::nullopt,
                                 std::optional<std::string_view> driver = std::nullopt);
Tensor linalg_pinv(const Tensor& A, std::optional<double> atol = std::nullopt,
                   std::optional<double> rtol = std::nullopt, bool hermitian = false);
Tensor linalg_matrix_rank(const Tensor& A, std::optional<double> atol = std::nullopt,
                          std::optional<double> rtol = std::nullopt, bool hermitian = false);
// ord: "fro", "nuc", "1", "-1", "2", "-2", "inf", "-inf"; over dims (d0, d1).
Tensor linalg_matrix_norm(const Tensor& A, std::string_view ord = "fro",
                          const std::vector<std::int64_t>& dim = {-2, -1}, bool keepdim = false);
// p: "" (None: 2), or as matrix_norm's ord.
Tensor linalg_cond(const Tensor& A, std::string_view p = "");
Tensor linalg_matrix_power(const Tensor& A, std::int64_t n);
Tensor linalg_matrix_exp(const Tensor& A);
Tensor linalg_multi_dot(const std::vector<Tensor>& tensors);

}  // namespace mpsim

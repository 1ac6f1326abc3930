// The lapack family's kernels (kernels_simd/lapack.cc): dense linear algebra of each matrix of
// a batch, evaluated in double and rounded once into the output dtype.
//
// Note [lapack in double]
// Every operand of a call arrives as [B, rows, cols] (a vector as [B, k, 1], a number as
// [B, 1, 1]; the front end, core/lapack_ops.cc, broadcasts the batch dims and says which op).
// The kernel reads matrix b of each input into double, computes the op's whole result in
// double (a factorization, a solve, a spectral decomposition, a norm) and rounds each output
// element once into its dtype (int32/int64 outputs: pivots, info, rank, exactly). So a float32
// result is within half an ulp of the double computation, whose own error is the algorithm's
// backward error times the condition of the problem, about cond * 2^-52 (documented per op in
// docs/ops.md, "Linear algebra in double"). Batch elements run in parallel; each is one serial
// computation, so the bits do not depend on the thread count. The factorizations follow
// LAPACK's conventions, so their outputs are the same matrices torch returns up to rounding:
// LU with partial pivoting (the first largest |pivot|, 1-based row interchanges, info = the
// first zero pivot), Householder QR with beta = -sign(alpha) ||x|| and tau = (beta - alpha) /
// beta (geqrf's packed form), Cholesky of the lower (upper) triangle. Spectral decompositions
// (eigh, svd; Eigen's self-adjoint QR iteration and one-sided Jacobi SVD, in double) fix the
// sign each vector is unique up to: its first component of largest magnitude is positive.
#pragma once

#include "core/kernel_call.h"

namespace mpsim::simd {

void register_lapack_kernels(KernelTable& table);
// det (long double) and linalg_eig (kernels_simd/lapack_spectral.cc).
void register_lapack_spectral_kernels(KernelTable& table);

}  // namespace mpsim::simd

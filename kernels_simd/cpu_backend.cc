// The cpu backend: the kernel families of kernels_simd behind the Backend interface. It
// registers itself once, here, and holds the one list of families (register_all_kernels).
#include <cstdio>
#include <cstdlib>

#include "allocator/host_allocator.h"
#include "core/backend.h"
#include "core/error.h"
#include "kernels_simd/attention.h"
#include "kernels_simd/binary.h"
#include "kernels_simd/conv.h"
#include "kernels_simd/copy.h"
#include "kernels_simd/fft.h"
#include "kernels_simd/fused.h"
#include "kernels_simd/index.h"
#include "kernels_simd/kernels.h"
#include "kernels_simd/lapack.h"
#include "kernels_simd/math_unary.h"
#include "kernels_simd/matmul.h"
#include "kernels_simd/norm.h"
#include "kernels_simd/pool.h"
#include "kernels_simd/random.h"
#include "kernels_simd/rearrange.h"
#include "kernels_simd/reduce.h"
#include "kernels_simd/resize.h"
#include "kernels_simd/scan.h"
#include "kernels_simd/select.h"
#include "kernels_simd/simd_target.h"
#include "kernels_simd/scatter.h"
#include "kernels_simd/sort.h"
#include "kernels_simd/unary.h"

namespace mpsim::simd {

void register_all_kernels(KernelTable& table) {
  register_unary_kernels(table);
  register_math_kernels(table);
  register_sort_kernels(table);
  register_scan_kernels(table);
  register_lapack_kernels(table);
  register_lapack_spectral_kernels(table);
  register_fft_kernels(table);
  register_scatter_kernels(table);
  register_binary_kernels(table);
  register_select_kernels(table);
  register_copy_kernels(table);
  register_reduce_kernels(table);
  register_softmax_kernels(table);
  register_index_kernels(table);
  register_rearrange_kernels(table);
  register_norm_kernels(table);
  register_random_kernels(table);
  register_matmul_kernels(table);
  register_conv_kernels(table);
  register_attention_kernels(table);
  register_pool_kernels(table);
  register_resize_kernels(table);
  register_fused_kernels(table);
}

namespace {

class CpuBackend final : public Backend {
 public:
  CpuBackend() {
    register_all_kernels(table_);
    if (const char* spec = std::getenv("MPSIM_SIMD_TARGETS"); spec != nullptr && *spec != '\0') {
      try {
        restrict_targets(spec);
      } catch (const Error& e) {
        // Start-up cannot throw; the setting is ignored and said so.
        std::fprintf(stderr, "mpsim warning: MPSIM_SIMD_TARGETS ignored: %s\n", e.what());
      }
    }
  }

  DeviceType type() const override { return DeviceType::CPU; }
  std::string_view name() const override { return "cpu"; }
  alloc::Allocator& allocator(int) override { return alloc::host_allocator(); }
  bool supports(OpId op, DType dtype) const override { return table_.supports(op, dtype); }
  void execute(OpCall call) override { run_kernel(table_, call); }

 private:
  KernelTable table_;
};

[[maybe_unused]] const bool kRegistered = [] {
  register_backend(DeviceType::CPU, new CpuBackend());  // lives for the whole process
  return true;
}();

}  // namespace
}  // namespace mpsim::simd

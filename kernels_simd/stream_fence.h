// The fence after streaming stores (Note [streaming stores] in elementwise.h).
#pragma once

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace mpsim::simd {

// Orders streaming stores before whatever follows: x86's non-temporal stores are weakly
// ordered, so a task fences them before it completes. Elsewhere Highway's Stream is an
// ordinary store and nothing is needed.
inline void stream_fence() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_sfence();
#endif
}

}  // namespace mpsim::simd

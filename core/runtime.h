// Process-wide runtime settings of the cpu backend.
#pragma once

namespace mpsim {

// Caps the number of threads every parallel kernel may use (1..; results never depend on it).
void set_num_threads(int n);
// The current cap: the value set, or the machine's default concurrency.
int num_threads();

}  // namespace mpsim

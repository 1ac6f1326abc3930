// Uses the installed headers and library: an op on the cpu, the same op on the simulated mps
// device, the device's memory API. Exit 0 when the values are the expected ones.
#include <mpsim/mpsim.h>

#include <cstdio>
#include <vector>

int main() {
  using namespace mpsim;
  const Tensor a = from_vector<float>({1, 2, 3, 4}, {2, 2});
  const Tensor b = from_vector<float>({5, 6, 7, 8}, {2, 2});
  const std::vector<float> cpu = matmul(a, b).to_vector<float>();
  const Tensor on_mps = matmul(a.to(Device::mps()), b.to(Device::mps()));
  mps::synchronize();
  const std::vector<float> dev = on_mps.to(Device::cpu()).to_vector<float>();
  const std::vector<float> expected = {19, 22, 43, 50};
  const bool ok = cpu == expected && dev == expected && mps::memory_allocated() > 0;
  std::printf("consumer: matmul on cpu and mps %s, mps memory allocated %zu bytes\n",
              ok ? "ok" : "WRONG", mps::memory_allocated());
  return ok ? 0 : 1;
}

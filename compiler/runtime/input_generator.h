// Seeded random inputs from input specs, with --vary applied per call. The same seed gives the
// same inputs on every machine, so runs and CI baselines are reproducible.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include <ATen/core/ivalue.h>

#include "compiler/runtime/input_spec.h"

namespace tcprof {

class InputGenerator {
 public:
  InputGenerator(std::vector<InputSpec> specs, std::vector<VarySpec> vary, uint64_t seed);
  // Inputs for call number `call` (0-based): deterministic for (seed, call).
  std::vector<c10::IValue> make(int64_t call);
  // Tensors are generated on the CPU (the same values whatever the device) and then moved here.
  void set_device(c10::Device device) { device_ = device; }
  const std::vector<InputSpec>& specs() const { return specs_; }

 private:
  std::vector<InputSpec> specs_;
  std::vector<VarySpec> vary_;
  uint64_t seed_;
  c10::Device device_{c10::kCPU};
};

// Checks the specs against the model's arguments: count and scalar kinds. Throws Error(Usage).
void check_inputs_against_model(const std::vector<InputSpec>& specs,
                                const std::vector<std::string>& names,
                                const std::vector<c10::TypePtr>& types);

}  // namespace tcprof

// A FuzzCase as a module, shared by the differential check of outputs (differential_check.cpp)
// and of gradients (gradient_check.cpp): the archive, the f64 oracle, the inputs of each call, and
// what the compiled module made of it.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <ATen/core/ivalue.h>

#include "bench/fuzz/differential_check.h"
#include "bench/fuzz/fuzz_case.h"
#include "compiler/frontend/model_loader.h"
#include "compiler/runtime/compiled_module.h"

namespace tcprof::fuzz {


// The case as a module archive (parameters, buffers, the compiled source).
void save_module(const FuzzCase& c, const std::string& path);
// The same module with float parameters and buffers in f64 (output_check.h's f64_copy), and eval
// batch norm as its formula (LibTorch's backward is wrong for some strided inputs).
LoadedModel load_oracle(const FuzzCase& c, const std::string& archive);
// output_check.h's run_f64 on the oracle's method.
std::optional<c10::IValue> run_oracle(LoadedModel& oracle, std::vector<c10::IValue> inputs, std::string* why_not);
std::vector<c10::IValue> make_inputs(const FuzzCase& c, int64_t dynamic_size, uint64_t salt);
std::string describe_program(const CompiledModule& m);
void count_program(const CompiledModule& m, CaseOutcome& out);

}  // namespace tcprof::fuzz

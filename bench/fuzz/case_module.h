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

// The oracle computes in f64 throughout: float math on integers (cos of an int64 tensor) makes
// the default dtype, which is f64 while this lives.
class DefaultDtypeDouble {
 public:
  DefaultDtypeDouble();
  ~DefaultDtypeDouble();
  DefaultDtypeDouble(const DefaultDtypeDouble&) = delete;
  DefaultDtypeDouble& operator=(const DefaultDtypeDouble&) = delete;

 private:
  caffe2::TypeMeta saved_;
};

// The case as a module archive (parameters, buffers, the compiled source).
void save_module(const FuzzCase& c, const std::string& path);
// The same module with float parameters and buffers in f64 (Module::to would convert bool and int
// buffers too).
LoadedModel load_oracle(const std::string& path);
// The oracle's result on f64 copies of the inputs, or nothing (with the reason) if f64 changes a
// promotion the source relies on: then the elementwise test alone decides.
std::optional<c10::IValue> run_oracle(LoadedModel& oracle, std::vector<c10::IValue> inputs, std::string* why_not);
std::vector<c10::IValue> make_inputs(const FuzzCase& c, int64_t dynamic_size, uint64_t salt);
std::string describe_program(const CompiledModule& m);
void count_program(const CompiledModule& m, CaseOutcome& out);

}  // namespace tcprof::fuzz

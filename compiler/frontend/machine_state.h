// The capture interpreter's control state: a stack of activations (method calls being
// interpreted, each with its environment) and a stack of scopes (the blocks being walked). It is
// a plain value, so the state at a graph break can be kept and resumed later, which is how a
// resume frame (Dynamo's resume function) starts.
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <torch/csrc/jit/ir/ir.h>

#include "compiler/frontend/capture_value.h"

namespace tcprof {

struct Activation {
  std::shared_ptr<torch::jit::Graph> graph;
  std::string module_path;   // "" for the root module, "blocks.0.attn" for a submodule
  std::string function;      // method or function name
  const torch::jit::Node* call_site = nullptr;  // the CallMethod/CallFunction in the parent
  int parent = -1;
  std::unordered_map<const torch::jit::Value*, VarPtr> env;
};

struct Scope {
  enum class Kind { Body, Branch, Loop };
  Kind kind = Kind::Body;
  const torch::jit::Block* block = nullptr;
  size_t index = 0;  // next node of `block` to run
  int activation = 0;
  const torch::jit::Node* owner = nullptr;  // the If or Loop node
  int64_t iteration = 0;
  int64_t trip_count = 0;
};

struct MachineState {
  std::vector<Activation> activations;
  std::vector<Scope> scopes;

  // Identifies the control position (not the values): equal keys resume at the same place.
  std::string position_key() const;
  // Identifies which values are constants and which frame input carries each other value.
  std::string layout_key() const;
};

}  // namespace tcprof

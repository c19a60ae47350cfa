// Frames and their compiled entries. A frame is a place where capture starts: the method's entry,
// or the point right after a graph break (with the outcome of the break, e.g. the branch taken).
// Each frame keeps a cache of entries, each a captured graph with the guards it relies on and
// what to do when the graph ends (return, or run the breaking op eagerly and resume).
#pragma once
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "compiler/frontend/break_registry.h"
#include "compiler/ir/captured_graph.h"
#include "compiler/frontend/guards.h"
#include "compiler/frontend/machine_state.h"

namespace tcprof {

class CompiledGraph;

// Where a value handed on at the end of a graph comes from.
struct ValueSource {
  enum class Kind { Output, BreakResult, Constant, Sym };
  Kind kind = Kind::Output;
  int index = 0;         // graph output or break result
  c10::IValue constant;
  SymExprPtr sym;        // over the current frame's inputs
};

// The return value's structure: leaves are ValueSources.
struct ResultTemplate {
  enum class Kind { Leaf, Tuple, List };
  Kind kind = Kind::Leaf;
  ValueSource leaf;
  std::vector<ResultTemplate> items;
  c10::TypePtr element_type;
};

struct GraphBreakSite {
  BreakCause cause = BreakCause::UnsupportedOp;
  const torch::jit::Node* node = nullptr;
  std::string op;
  std::string reason;
  SourceLoc loc;                 // innermost user line
  std::string module_path;
  std::vector<StackEntry> stack; // outermost first
};

struct EntryExit {
  enum class Kind { Return, Break };
  Kind kind = Kind::Return;
  ResultTemplate result;                  // Return
  GraphBreakSite site;                         // Break
  bool run_node = true;                   // false: the graph ends before the node and the
                                          // resume frame starts at it (a shape it must re-read)
  // The breaking node's inputs, rebuilt on every call from this call's values (a list of sizes
  // over dynamic dims included): the node runs eagerly and must see them, never the capture's.
  std::vector<ResultTemplate> node_inputs;
  MachineState resume;                    // state after the node; its outputs are Input/outcome
  std::vector<ValueSource> next_inputs;   // inputs of the resume frame
  std::vector<FrameInput> next_input_desc;
  std::vector<int> outcome_results;       // node outputs that are bools: part of the frame key
  std::vector<int> input_results;         // node outputs that become resume-frame inputs
};

struct CacheEntry {
  int64_t store_id = 0;       // compiles.id in the run database
  std::string compile_label;  // "0/1"
  CapturedGraph graph;
  GuardSet guards;
  std::unique_ptr<CompiledGraph> compiled;
  EntryExit exit;
  int64_t graph_store_id = 0;
  std::vector<int64_t> guard_store_ids;
  int64_t hits = 0;
};

struct Frame {
  int index = 0;               // the "frame" part of compile ids "frame/compile"
  int64_t store_id = 0;        // frames.id
  std::string key;
  std::string name;            // "forward" or "forward (resume after model.py:23)"
  SourceLoc loc;               // where it starts (for a resume frame: the break it follows)
  MachineState start;          // template: Input placeholders stand for the inputs
  std::vector<FrameInput> inputs;
  std::vector<std::unique_ptr<CacheEntry>> entries;  // newest last; looked up newest first
  std::vector<std::vector<bool>> dynamic_dims;       // per input, per dim: treat as symbolic
  std::vector<bool> dynamic_ints;                    // per input: int treated as symbolic
  int compiles = 0;            // compiles so far: the second part of compile ids
  bool limit_hit = false;
  int64_t eager_misses = 0;    // calls that missed the cache and ran eagerly (limit or stance)
  std::map<std::string, Frame*> successors;          // by break site + outcome
};

}  // namespace tcprof

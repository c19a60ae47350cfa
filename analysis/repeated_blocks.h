// Repeated blocks inside one graph Dynamo captured: a transformer's `blocks.0`…`blocks.11` traced
// into one graph are twelve copies of one op sequence, and Inductor lowers, generates and compiles
// each copy again. Regional compilation (torch.compiler.nested_compile_region, or torch.compile on
// each block) compiles the block once; compile_time.h turns a finding into the time it would save.
//
// Found in the graph's FX code (the `dynamo_output_graph` torch.compile logs): each op line
// (`name: "f32[8, 32]…" = target(args)`) is reduced to its target and result type, and the longest
// run of back-to-back copies of one op sequence is the repeat. Its name comes from the parameters
// the copies read (`l_self_modules_blocks_modules_3_modules_attn_…` is module `blocks.3.attn`):
// the copies differ in one index, which names the range ("blocks.0-11").
#pragma once
#include <string>

namespace tcprof::analysis {

struct BlockRepeat {
  std::string name;    // "blocks.0-11", or "" when the copies read no parameters that name them
  int copies = 0;      // back-to-back copies (2 or more); 0 when the graph has no repeat
  int ops_per_copy = 0;
  int first_op = 0;    // index of the first copy's first op among the graph's ops
  int graph_ops = 0;   // ops in the whole graph
  int covered_ops() const { return copies * ops_per_copy; }
};

// The largest repeat of at least `min_ops` ops per copy in a Dynamo FX graph's code, or copies == 0.
// Code in any other form (tcprof's own IR) has no FX op lines and gives copies == 0.
BlockRepeat find_block_repeat(const std::string& fx_code, int min_ops = 3);

}  // namespace tcprof::analysis

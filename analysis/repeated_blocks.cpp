#include "analysis/repeated_blocks.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <sstream>
#include <vector>

namespace tcprof::analysis {
namespace {

constexpr int kMaxBlockOps = 2048;

struct FxOp {
  std::string signature;  // result type and the expression with its variables blanked
  std::string first_module;  // the module path of the first parameter it reads, "" if none
};

// Where FX's call targets start (`torch.ops.aten.mm(`, `operator.getitem(`); any other dotted
// name before `(` is a method on a variable.
const std::set<std::string> kFunctionRoots = {"torch", "operator", "_operator", "math", "builtins", "torchvision"};

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.'; }

// `l_self_modules_blocks_modules_3_modules_attn_parameters_weight_` -> "blocks.3.attn";
// "" for a name that is not a parameter or buffer.
std::string module_of(const std::string& ident) {
  if (ident.size() < 3 || (ident[0] != 'l' && ident[0] != 'L') || ident[1] != '_') return "";
  size_t end = ident.find("_parameters_");
  if (end == std::string::npos) end = ident.find("_buffers_");
  if (end == std::string::npos) return "";
  const std::string body = ident.substr(2, end - 2);  // self_modules_blocks_modules_3_modules_attn
  const std::string sep = "_modules_";
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t next = body.find(sep, start);
    parts.push_back(body.substr(start, next == std::string::npos ? std::string::npos : next - start));
    if (next == std::string::npos) break;
    start = next + sep.size();
  }
  // The first part is what Dynamo called the module: `self`, or `fn` for a compiled nn.Module.
  std::string path;
  for (size_t i = 1; i < parts.size(); ++i) path += (path.empty() ? "" : ".") + parts[i];
  return path;
}

// An op line of FX code, `name: "type" = expr;  dead = None`, or nothing for other lines
// (signatures, aliases of inputs like `l_x_ = L_x_`, comments, `return`).
bool parse_op(const std::string& line, FxOp& op) {
  size_t i = line.find_first_not_of(' ');
  if (i == std::string::npos || !ident_start(line[i])) return false;
  size_t name_end = i;
  while (name_end < line.size() && (std::isalnum(static_cast<unsigned char>(line[name_end])) || line[name_end] == '_')) ++name_end;
  std::string type;
  size_t eq = name_end;
  if (line.compare(eq, 3, ": \"") == 0) {
    size_t close = line.find('"', eq + 3);
    if (close == std::string::npos) return false;
    type = line.substr(eq + 3, close - eq - 3);
    eq = close + 1;
  }
  if (line.compare(eq, 3, " = ") != 0) return false;
  std::string expr = line.substr(eq + 3);
  expr = expr.substr(0, expr.find(';'));
  // Blank every variable; keep call targets (`torch.nn.functional.layer_norm(`), operators and
  // constants, so that two copies of a block give the same signatures.
  std::string normal;
  bool any_call = false;
  size_t k = 0;
  while (k < expr.size()) {
    if (ident_start(expr[k])) {
      size_t e = k;
      while (e < expr.size() && ident_char(expr[e])) ++e;
      const std::string ident = expr.substr(k, e - k);
      size_t after = expr.find_first_not_of(' ', e);
      const bool call = after != std::string::npos && expr[after] == '(';
      const size_t dot = ident.find('.');
      const std::string head = ident.substr(0, dot);
      if (call && (dot == std::string::npos || kFunctionRoots.count(head))) {
        normal += ident;  // torch.nn.functional.layer_norm(, operator.getitem(, getattr(
        any_call = true;
      } else if (call) {
        // A method on a variable, `linear_1.view(`: the receiver is blanked, the method kept.
        const size_t last = ident.rfind('.');
        const std::string receiver = ident.substr(0, last);
        normal += "v" + ident.substr(last);
        any_call = true;
        if (op.first_module.empty()) op.first_module = module_of(receiver);
      } else {
        normal += 'v';
        if (op.first_module.empty()) op.first_module = module_of(ident);
      }
      k = e;
    } else {
      if (expr[k] != ' ') normal += expr[k];
      ++k;
    }
  }
  // A bare variable (an input's alias) is no op; anything else is (calls, `x + y`, `x[0]`).
  if (!any_call && normal == "v") return false;
  op.signature = type + "=" + normal;
  return true;
}

std::vector<std::string> split_path(const std::string& path) {
  std::vector<std::string> out;
  std::stringstream in(path);
  for (std::string part; std::getline(in, part, '.');) out.push_back(part);
  return out;
}

bool is_index(const std::string& s) {
  if (s.empty() || s.size() > 9) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

// "blocks.0-11" from the copies' first parameter modules ("blocks.0.attn", "blocks.1.attn", ...),
// which must differ in one index only.
std::string name_copies(const std::vector<std::string>& modules) {
  std::vector<std::vector<std::string>> paths;
  for (const auto& m : modules) {
    if (m.empty()) return "";
    paths.push_back(split_path(m));
  }
  int varying = -1;
  for (size_t c = 1; c < paths.size(); ++c) {
    if (paths[c].size() != paths[0].size()) return "";
    for (size_t k = 0; k < paths[0].size(); ++k) {
      if (paths[c][k] == paths[0][k]) continue;
      if (!is_index(paths[c][k]) || !is_index(paths[0][k]) || (varying >= 0 && varying != static_cast<int>(k))) return "";
      varying = static_cast<int>(k);
    }
  }
  if (varying < 0) return "";
  std::vector<int> index;
  for (const auto& p : paths) index.push_back(std::stoi(p[varying]));
  bool consecutive = true;
  for (size_t c = 1; c < index.size(); ++c) consecutive = consecutive && index[c] == index[c - 1] + 1;
  // Children of the compiled module itself (an nn.Sequential given to torch.compile) have no
  // container name of their own.
  std::string prefix = varying == 0 ? "modules " : "";
  for (int k = 0; k < varying; ++k) prefix += paths[0][k] + ".";
  if (consecutive) return prefix + std::to_string(index.front()) + "-" + std::to_string(index.back());
  std::string list;
  for (int i : index) list += (list.empty() ? "" : ",") + std::to_string(i);
  return prefix + "{" + list + "}";
}

}  // namespace

BlockRepeat find_block_repeat(const std::string& fx_code, int min_ops) {
  // The ops of the outer GraphModule's forward only: nested classes (`class subgraph_0`, the
  // bodies of higher-order ops) are printed beside it, one indent deeper.
  std::vector<FxOp> ops;
  size_t forward_indent = std::string::npos;  // the outermost `def forward(`
  {
    std::stringstream scan(fx_code);
    for (std::string line; std::getline(scan, line);) {
      const size_t indent = line.find_first_not_of(' ');
      if (indent != std::string::npos && line.compare(indent, 12, "def forward(") == 0) {
        forward_indent = std::min(forward_indent, indent);
      }
    }
  }
  if (forward_indent == std::string::npos) return BlockRepeat{};
  const size_t body_indent = forward_indent + 4;
  std::stringstream in(fx_code);
  bool in_forward = false;
  for (std::string line; std::getline(in, line);) {
    const size_t indent = line.find_first_not_of(' ');
    if (indent == std::string::npos) continue;
    if (indent == forward_indent && line.compare(indent, 12, "def forward(") == 0) {
      in_forward = true;
      continue;
    }
    if (!in_forward) continue;
    if (indent < body_indent) {
      in_forward = false;  // the forward ended; a nested class or the end of the module
      continue;
    }
    if (indent != body_indent) continue;
    // A graph already compiled regionally calls its block as a subgraph: nothing to advise.
    if (line.find("invoke_subgraph") != std::string::npos) return BlockRepeat{};
    FxOp op;
    if (parse_op(line, op)) ops.push_back(std::move(op));
  }
  BlockRepeat best;
  best.graph_ops = static_cast<int>(ops.size());
  std::map<std::string, int> ids;
  std::vector<int> seq;
  for (const auto& op : ops) seq.push_back(ids.emplace(op.signature, static_cast<int>(ids.size())).first->second);
  const int n = static_cast<int>(seq.size());
  min_ops = std::max(1, min_ops);
  // For each period p, the runs where the sequence equals itself shifted by p: a run of length L
  // from s holds L / p + 1 back-to-back copies. The most ops covered wins; on a tie the shorter
  // period (more, smaller copies), since p ascends.
  // Periods up to kMaxBlockOps: a block longer than that is not a transformer layer, and the scan
  // stays linear in the graph's size (a 100k-op graph in well under a second).
  const int max_period = std::min(n / 2, kMaxBlockOps);
  for (int p = min_ops; p <= max_period && best.covered_ops() < n; ++p) {
    int run = 0;
    for (int i = 0; i + p <= n; ++i) {
      const bool same = i + p < n && seq[i] == seq[i + p];
      if (same) {
        ++run;
        continue;
      }
      const int copies = run / p + 1;
      if (copies >= 2 && copies * p > best.covered_ops()) {
        best.copies = copies;
        best.ops_per_copy = p;
        best.first_op = i - run;
      }
      run = 0;
    }
  }
  if (best.copies == 0) return best;
  std::vector<std::string> modules;
  for (int c = 0; c < best.copies; ++c) {
    std::string first;
    for (int k = 0; k < best.ops_per_copy && first.empty(); ++k) first = ops[best.first_op + c * best.ops_per_copy + k].first_module;
    modules.push_back(first);
  }
  best.name = name_copies(modules);
  return best;
}

}  // namespace tcprof::analysis

#include "compiler/runtime/compiled_module.h"

#include <filesystem>
#include <optional>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/log.h"
#include "core/run_writer.h"
#include "core/sha256.h"
#include "compiler/frontend/source_files.h"
#include "compiler/runtime/device_timer.h"
#include "compiler/runtime/gpu_memory.h"

namespace tcprof {

c10::IValue build_result(const ResultTemplate& t, const std::vector<c10::IValue>& outputs,
                         const SymBindings& bindings) {
  switch (t.kind) {
    case ResultTemplate::Kind::Tuple: {
      std::vector<c10::IValue> items;
      for (const auto& item : t.items) items.push_back(build_result(item, outputs, bindings));
      return c10::ivalue::Tuple::create(std::move(items));
    }
    case ResultTemplate::Kind::List: {
      c10::impl::GenericList list(t.element_type ? t.element_type : c10::AnyType::get());
      for (const auto& item : t.items) list.push_back(build_result(item, outputs, bindings));
      return list;
    }
    case ResultTemplate::Kind::Leaf: break;
  }
  switch (t.leaf.kind) {
    case ValueSource::Kind::Output: return outputs[static_cast<size_t>(t.leaf.index)];
    case ValueSource::Kind::Sym: return sym_value(*t.leaf.sym, evaluate(*t.leaf.sym, bindings));
    default: return t.leaf.constant;
  }
}

namespace {

std::string stack_json(const std::vector<StackEntry>& stack) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& s : stack) {
    j.push_back({{"module_path", s.module_path}, {"function", s.function}, {"file", s.loc.file},
                 {"line", s.loc.line}, {"source", s.loc.text}});
  }
  return j.dump();
}

std::string shapes_json(const std::vector<c10::IValue>& inputs) {
  nlohmann::json j = nlohmann::json::array();
  for (const auto& v : inputs) {
    if (v.isTensor()) {
      j.push_back(v.toTensor().sizes().vec());
    } else if (v.isInt()) {
      j.push_back(v.toInt());
    } else {
      j.push_back(nullptr);
    }
  }
  return j.dump();
}

c10::IValue value_from(const ValueSource& s, const std::vector<c10::IValue>& outputs,
                       const std::vector<c10::IValue>& results, const SymBindings& bindings) {
  switch (s.kind) {
    case ValueSource::Kind::Output: return outputs[static_cast<size_t>(s.index)];
    case ValueSource::Kind::BreakResult: return results[static_cast<size_t>(s.index)];
    case ValueSource::Kind::Sym: return sym_value(*s.sym, evaluate(*s.sym, bindings));
    case ValueSource::Kind::Constant: return s.constant;
  }
  return c10::IValue();
}

}  // namespace

CompiledModule::CompiledModule(const LoadedModel& model, CompileOptions options, RunWriter* writer,
                               CpuProfiler* profiler)
    : model_(model),
      options_(std::move(options)),
      writer_(writer),
      profiler_(profiler),
      program_(model.module, model.method),
      tracer_(program_),
      backend_(make_backend(options_.backend, options_.strict, options_.kernel_cache_dir,
                            CudaOptions{options_.cuda_arch, options_.cuda_graphs})) {
  if (profiler_) {
    guard_key_ = profiler_->key("guard_check", "guard");
    eager_call_key_ = profiler_->key(model.method + " (eager)", "eager");
  }
  record_sources();
}

// The user's source files go into the run, so every reader shows source without the model file.
void CompiledModule::record_sources() {
  if (!writer_) return;
  std::vector<UserSourceFile> files;
  try {
    files = user_source_files(model_.module);
  } catch (const std::exception& e) {
    log(LogChannel::GraphBreaks, "the model's source files could not be read from its debug info: {}", e.what());
  }
  for (auto& f : files) writer_->record(SourceEvent{f.file, sha256_hex(f.text), std::move(f.text)});
}

CompiledModule::~CompiledModule() {
  for (const auto& f : frames_) {
    if (f->eager_misses > 1) {
      log(LogChannel::Recompiles, "{}: ran eagerly on {} calls: {}", f->name, f->eager_misses, eager_miss_cause(*f));
    }
  }
}

Frame& CompiledModule::root_frame() {
  if (!frames_.empty()) return *frames_.front();
  auto frame = std::make_unique<Frame>();
  frame->index = 0;
  frame->key = "root";
  frame->name = model_.method;
  frame->start = tracer_.entry_state(&frame->inputs);
  frame->dynamic_dims.resize(frame->inputs.size());
  frame->dynamic_ints.resize(frame->inputs.size());
  for (const auto& d : options_.dynamic) {
    if (d.input < 0 || static_cast<size_t>(d.input) >= frame->inputs.size()) {
      throw Error(ErrorKind::Usage, fmt::format("--dynamic {}:{}: the model has {} inputs", d.input,
                                                d.dim, frame->inputs.size()));
    }
    auto& dims = frame->dynamic_dims[static_cast<size_t>(d.input)];
    if (dims.size() <= static_cast<size_t>(d.dim)) dims.resize(static_cast<size_t>(d.dim) + 1);
    dims[static_cast<size_t>(d.dim)] = true;
  }
  frames_.push_back(std::move(frame));
  record_frame(*frames_.front());
  return *frames_.front();
}

void CompiledModule::record_frame(Frame& frame) {
  if (!writer_) return;
  frame.store_id = writer_->next_id();
  // Where the frame starts: the first node it runs that has a source line.
  SourceLoc& loc = frame.loc;
  std::string module_path;
  if (!frame.start.scopes.empty()) {
    const Scope& top = frame.start.scopes.back();
    module_path = frame.start.activations[static_cast<size_t>(top.activation)].module_path;
    const auto& nodes = program_.nodes(top.block);
    for (size_t i = top.index; i < nodes.size() && !loc.known(); ++i) loc = locate(nodes[i]);
  }
  writer_->record(FrameEvent{frame.store_id, frame.name, module_path, loc.file, loc.line});
}

Frame& CompiledModule::successor(Frame& from, const CacheEntry& entry, const std::vector<bool>& outcome) {
  const GraphBreakSite& site = entry.exit.site;
  // The key names the position, the layout of the values handed on, and the outcome.
  std::string key = entry.exit.resume.position_key() + "|" + entry.exit.resume.layout_key() + "|";
  for (bool b : outcome) key += b ? '1' : '0';
  auto it = from.successors.find(key);
  if (it != from.successors.end()) return *it->second;
  for (const auto& f : frames_) {  // another path may have reached the same point already
    if (f->key == key) {
      from.successors[key] = f.get();
      return *f;
    }
  }
  auto frame = std::make_unique<Frame>();
  frame->index = static_cast<int>(frames_.size());
  frame->key = key;
  std::string branch;
  if (!outcome.empty()) branch = outcome[0] ? ", branch taken" : ", branch not taken";
  frame->name = fmt::format("{} (resume after {}:{}{})", model_.method,
                            std::filesystem::path(site.loc.file).filename().string(), site.loc.line, branch);
  frame->start = resume_state_for_outcome(entry.exit.resume, outcome);
  frame->loc = site.loc;
  frame->inputs = entry.exit.next_input_desc;
  frame->dynamic_dims.resize(frame->inputs.size());
  for (size_t i = 0; i < frame->inputs.size(); ++i) frame->dynamic_dims[i] = frame->inputs[i].dynamic_dims;
  frame->dynamic_ints.resize(frame->inputs.size());
  frames_.push_back(std::move(frame));
  record_frame(*frames_.back());
  from.successors[key] = frames_.back().get();
  return *frames_.back();
}

CacheEntry* CompiledModule::lookup(Frame& frame, const std::vector<c10::IValue>& values) {
  std::optional<CpuProfiler::Scope> timed;
  if (profiler_ && profiler_->enabled()) timed.emplace(*profiler_, guard_key_, 0);
  for (auto it = frame.entries.rbegin(); it != frame.entries.rend(); ++it) {
    if ((*it)->guards.check(values)) return it->get();
  }
  return nullptr;
}

CacheEntry& CompiledModule::compile(Frame& frame, const std::vector<c10::IValue>& values,
                                    const std::string& reason, std::vector<c10::IValue>* capture_outputs) {
  int64_t start = now_ns();
  auto entry = std::make_unique<CacheEntry>();
  entry->compile_label = fmt::format("{}/{}", frame.index, frame.compiles++);
  CaptureOutcome outcome = tracer_.capture(frame, values);
  int64_t captured = now_ns();
  entry->graph = std::move(outcome.graph);
  entry->guards = std::move(outcome.guards);
  entry->exit = std::move(outcome.exit);
  *capture_outputs = std::move(outcome.output_values);
  if (static_cast<int>(outcome.slot_values.size()) == entry->graph.num_slots) {
    entry->graph.capture_values = std::make_shared<const std::vector<c10::IValue>>(std::move(outcome.slot_values));
  }
  entry->compiled = backend_->compile(entry->graph, values, profiler_);
  entry->graph.capture_values.reset();  // the run's intermediates: not kept past the compile
  int64_t done = now_ns();
  ++stats_.compiles;
  stats_.compile_ns += done - start;
  const CompileReport& report = entry->compiled->report();
  if (report.compile_failed && stats_.compile_failures++ == 0) {
    stats_.first_compile_failure = report.failure.substr(0, report.failure.find('\n'));
  }

  if (writer_) {
    entry->store_id = writer_->next_id();
    writer_->record(CompileEvent{entry->store_id, frame.store_id, entry->compile_label, reason, start,
                                 done - start, report.compile_failed ? "compile_failed" : "ok", report.cache_hit});
    writer_->record(CompilePhaseEvent{entry->store_id, "capture", start, captured - start});
    if (report.phases.empty()) {
      writer_->record(CompilePhaseEvent{entry->store_id, backend_->name() + "_compile", captured, done - captured});
    }
    for (const auto& p : report.phases) writer_->record(CompilePhaseEvent{entry->store_id, p.name, p.start_ns, p.duration_ns});
    for (const auto& h : report.hints) {
      writer_->record(PerfHintEvent{entry->store_id, h.kind, h.op, h.message, h.loc.file, h.loc.line});
    }
    entry->graph_store_id = writer_->next_id();
    if (report.parts.empty()) {
      writer_->record(GraphEvent{entry->graph_store_id, entry->store_id, static_cast<int>(entry->graph.op_count()),
                                 report.ir.empty() ? entry->graph.ir() : report.ir,
                                 report.compile_failed ? report.failure : report.code});
    } else {
      // The captured graph, then each graph compiled from it (a training graph's forward and
      // backward), as PyTorch's logs have a Dynamo graph and its AOT graphs under one compile.
      const std::string summary = report.ir.substr(0, report.ir.find('\n') + 1);  // "# training: ..."
      writer_->record(GraphEvent{entry->graph_store_id, entry->store_id, static_cast<int>(entry->graph.op_count()),
                                 summary + entry->graph.ir(),
                                 "// compiled as its aot_forward and aot_backward graphs: their rows hold the code\n"});
      std::vector<int64_t> part_ids;
      for (const auto& part : report.parts) {
        part_ids.push_back(writer_->next_id());
        GraphEvent g{part_ids.back(), entry->store_id, part.op_count, part.ir, part.code};
        g.kind = part.kind;
        writer_->record(g);
      }
      entry->compiled->set_part_ids(std::move(part_ids));
    }
    for (const auto& g : entry->guards.guards()) {
      Id id = writer_->next_id();
      entry->guard_store_ids.push_back(id);
      writer_->record(GuardEvent{id, entry->store_id, std::string(guard_kind_name(g.kind)), g.text, g.loc.file, g.loc.line});
    }
  }
  if (log_enabled(LogChannel::Guards)) {
    std::string text;
    for (const auto& g : entry->guards.guards()) {
      text += fmt::format("\n  {}{}", g.text, g.loc.known() ? fmt::format("  # {}:{}", g.loc.file, g.loc.line) : "");
    }
    log(LogChannel::Guards, "guards for {} ({}):{}", entry->compile_label, frame.name, text);
  }
  if (entry->exit.kind == EntryExit::Kind::Break) {
    record_break(*entry);
    if (options_.fullgraph) {
      const GraphBreakSite& s = entry->exit.site;
      const BreakInfo& info = break_info(s.cause);
      throw Error(ErrorKind::Check,
                  fmt::format("fullgraph: graph break {} ({}) at {}:{}: {}\n  {}\n  hint: {}", info.id,
                              info.type, s.loc.file, s.loc.line, s.reason, s.loc.text, info.hint));
    }
  }
  frame.entries.push_back(std::move(entry));
  stats_.cache_entries = 0;
  for (const auto& f : frames_) stats_.cache_entries += static_cast<int64_t>(f->entries.size());
  return *frame.entries.back();
}

void CompiledModule::record_break(const CacheEntry& entry) {
  ++stats_.graph_breaks;
  const GraphBreakSite& s = entry.exit.site;
  const BreakInfo& info = break_info(s.cause);
  log(LogChannel::GraphBreaks, "graph break {} ({}) at {}:{}{}: {}\n    {}\n  hint: {}", info.id,
      info.type, s.loc.file, s.loc.line, s.module_path.empty() ? "" : " in " + s.module_path, s.reason,
      s.loc.text, info.hint);
  if (!writer_) return;
  writer_->record(GraphBreakEvent{entry.store_id, std::string(info.type), std::string(info.id), s.op,
                                  s.reason, std::string(info.hint), s.loc.file, s.loc.line, s.loc.col,
                                  s.loc.text, s.module_path, stack_json(s.stack)});
}

void CompiledModule::fail_on_recompile(const Frame& frame, const std::vector<std::string>& messages,
                                       const Guard* guard) {
  std::string where = guard && guard->loc.known()
                          ? fmt::format("\n  guard created at {}:{}: {}", guard->loc.file, guard->loc.line, guard->loc.text)
                          : "";
  throw Error(ErrorKind::Check,
              fmt::format("fail_on_recompile: {} would recompile: {}{}", frame.name,
                          messages.empty() ? "no entry matched" : messages.front(), where));
}

std::vector<c10::IValue> CompiledModule::run_break(const EntryExit& exit, const std::vector<c10::IValue>& outputs,
                                                   const std::vector<c10::IValue>& frame_inputs) {
  if (!exit.run_node) return {};
  InputBindings bindings(frame_inputs);
  torch::jit::Stack stack;
  for (const auto& t : exit.node_inputs) stack.push_back(build_result(t, outputs, bindings));
  const torch::jit::Node* node = exit.site.node;
  if (node->kind() == c10::prim::SetAttr) {
    stack[0].toObject()->setAttr(node->s(c10::attr::name), stack[1]);
    return {};
  }
  if (node->kind() == c10::prim::RaiseException) {
    std::string cls = stack.size() > 1 && stack[1].isString() ? stack[1].toStringRef() : "Exception";
    if (cls.rfind("builtins.", 0) == 0) cls = cls.substr(9);
    throw Error(ErrorKind::Input, fmt::format("the model raised {} at {}:{}: {}", cls, exit.site.loc.file,
                                              exit.site.loc.line, stack.empty() ? "" : stack[0].toStringRef()));
  }
  if (node->kind() == c10::aten::warn) {  // implemented by LibTorch's interpreter, not an operator
    fmt::print(stderr, "{}:{}: UserWarning: {}\n", exit.site.loc.file, exit.site.loc.line,
               stack.empty() ? std::string() : stack[0].toStringRef());
    return {};
  }
  try {
    std::optional<CpuProfiler::Scope> timed;
    if (profiler_ && profiler_->enabled()) timed.emplace(*profiler_, profiler_->key(exit.site.op, "eager"), 0);
    run_node(node, stack);
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Input, fmt::format("the model raised at {}:{}: {}", exit.site.loc.file,
                                              exit.site.loc.line, e.what_without_backtrace()));
  } catch (const std::exception& e) {  // raise in TorchScript: torch::jit::JITException
    throw Error(ErrorKind::Input, fmt::format("the model raised at {}:{}: {}", exit.site.loc.file,
                                              exit.site.loc.line, e.what()));
  }
  return std::vector<c10::IValue>(stack.begin(), stack.end());
}

c10::IValue CompiledModule::call_eager(const std::vector<c10::IValue>& inputs) {
  try {
    return model_.module.get_method(model_.method)(inputs);
  } catch (const c10::Error& e) {
    throw Error(ErrorKind::Input, fmt::format("running {} eagerly failed: {}", model_.method,
                                              e.what_without_backtrace()));
  }
}

c10::IValue CompiledModule::call(const std::vector<c10::IValue>& inputs) {
  ++stats_.calls;
  Id call_id = writer_ ? writer_->next_id() : ++call_id_;
  last_call_id_ = call_id;
  Frame& root = root_frame();
  int gpu = first_cuda_device(inputs);
  reset_gpu_memory_peak(gpu);
  if (gpu >= 0 && call_timer_gpu_ != gpu) {
    call_timer_ = std::make_unique<DeviceTimer>(c10::Device(c10::kCUDA, static_cast<c10::DeviceIndex>(gpu)));
    call_timer_gpu_ = gpu;
  }
  DeviceTimer* timer = gpu >= 0 ? call_timer_.get() : nullptr;
  int64_t start = now_ns();
  if (timer) timer->start();
  if (profiler_) profiler_->begin_call(call_id);
  CallResult r;
  if (runs_eagerly_by_stance()) {
    std::optional<CpuProfiler::Scope> timed;
    if (profiler_ && profiler_->enabled()) timed.emplace(*profiler_, eager_call_key_, 0);
    r.value = call_eager(inputs);
    r.path = "eager";
    if (options_.stance == Stance::EagerThenCompile) eager_call_inputs_ = inputs;
  } else {
    if (!eager_call_inputs_.empty()) {
      mark_changed_since_eager_call(root, inputs);
      eager_call_inputs_.clear();
    }
    r = run_frames(root, inputs, call_id);
  }
  // The timer waits for the GPU before the profiler's window closes, so the window holds the
  // call's kernels however the profile mode flushes them; its own CUDA calls (an event and the
  // wait for it) are not the call's API time.
  if (profiler_) profiler_->end_call_scope();
  last_call_ns_ = timer ? timer->stop_ns() : now_ns() - start;
  if (profiler_) profiler_->end_call();
  if (r.path != "compiled") ++stats_.eager_calls;
  if (writer_) {
    writer_->record(CallEvent{call_id, root.store_id, r.root_compile, start, last_call_ns_, r.path,
                              shapes_json(inputs), gpu_memory_peak(gpu)});
  }
  return r.value;
}

const char* CompiledModule::call_timed_with() const {
  return call_timer_ ? call_timer_->method() : "host clock";
}

bool CompiledModule::runs_eagerly_by_stance() const {
  return options_.stance == Stance::ForceEager || (options_.stance == Stance::EagerThenCompile && stats_.calls == 1);
}

// Walks frames from the root: each frame runs its matching entry (compiling one on a miss), and a
// break runs its node eagerly and continues in the resume frame.
CompiledModule::CallResult CompiledModule::run_frames(Frame& root, const std::vector<c10::IValue>& inputs, Id call_id) {
  CallResult r;
  Frame* frame = &root;
  std::vector<c10::IValue> values = inputs;
  for (;;) {
    CacheEntry* entry = lookup(*frame, values);
    std::vector<c10::IValue> outputs;
    if (entry) {
      ++entry->hits;
      outputs = entry->compiled->run(values, entry->graph_store_id);
    } else {
      entry = compile_on_miss(*frame, values, call_id, &outputs);
      if (!entry) {  // past the recompile limit, or eager_on_recompile
        r.value = frame == &root ? call_eager(inputs) : tracer_.run_eagerly(frame->start, values);
        r.path = "eager";
        return r;
      }
    }
    if (frame == &root) r.root_compile = entry->store_id;
    const EntryExit& exit = entry->exit;
    if (exit.kind == EntryExit::Kind::Return) {
      r.value = build_result(exit.result, outputs, InputBindings(values));
      return r;
    }
    std::vector<c10::IValue> results = run_break(exit, outputs, values);
    std::vector<bool> outcome;
    for (int i : exit.outcome_results) outcome.push_back(results[static_cast<size_t>(i)].toBool());
    Frame& next = successor(*frame, *entry, outcome);
    InputBindings bindings(values);
    std::vector<c10::IValue> next_values;
    for (const auto& s : exit.next_inputs) next_values.push_back(value_from(s, outputs, results, bindings));
    frame = &next;
    values = std::move(next_values);
  }
}

// No entry of `frame` matched: compile one, or return null when the frame must run eagerly.
CacheEntry* CompiledModule::compile_on_miss(Frame& frame, const std::vector<c10::IValue>& values, Id call_id,
                                            std::vector<c10::IValue>* outputs) {
  if (frame.entries.empty()) return &compile(frame, values, "first call", outputs);
  const Guard* first_guard = nullptr;
  std::vector<std::string> messages = explain_miss(frame, values, call_id, &first_guard);
  std::string reason = fmt::format("{}", fmt::join(messages, "; "));
  if (options_.stance == Stance::FailOnRecompile) fail_on_recompile(frame, messages, first_guard);
  if (runs_eagerly_after_miss(frame, reason)) return nullptr;
  log(LogChannel::Recompiles, "recompiling {}: triggered by:\n    {}", frame.name, fmt::join(messages, "\n    "));
  CacheEntry& fresh = compile(frame, values, reason, outputs);
  ++stats_.recompiles;
  if (writer_) {
    writer_->record(RecompileEvent{frame.store_id, call_id, fresh.store_id, reason,
                                   static_cast<int>(frame.entries.size() - 1)});
  }
  return &fresh;
}

// Why every entry of `frame` failed on `values`, newest first like Dynamo's recompiles log; each
// failure is recorded, and every size or int that changed becomes symbolic (automatic dynamic).
std::vector<std::string> CompiledModule::explain_miss(Frame& frame, const std::vector<c10::IValue>& values,
                                                      Id call_id, const Guard** first_guard) {
  std::vector<std::string> names;
  for (const auto& in : frame.inputs) names.push_back(in.name);
  std::vector<std::string> messages;
  for (auto it = frame.entries.rbegin(); it != frame.entries.rend(); ++it) {
    const CacheEntry& e = **it;
    GuardFailure f = e.guards.explain_failure(values, names);
    if (!*first_guard) *first_guard = &e.guards.guards()[f.guard_index];
    messages.push_back(f.message);
    ++stats_.guard_failures;
    if (writer_) {
      Id guard_id = f.guard_index < e.guard_store_ids.size() ? e.guard_store_ids[f.guard_index] : 0;
      writer_->record(GuardFailureEvent{call_id, e.store_id, guard_id, f.expected, f.actual, f.message});
    }
    // Every failing size and int guard, not only the first: a call that changes two dims must
    // not cost two recompiles.
    for (size_t i : e.guards.failing(values)) {
      const Guard& g = e.guards.guards()[i];
      if (g.kind == GuardKind::Size && g.input >= 0) mark_dynamic_dim(frame, g.input, g.dim);
      if (g.kind == GuardKind::IntValue && g.input >= 0) frame.dynamic_ints[static_cast<size_t>(g.input)] = true;
    }
  }
  return messages;
}

// Past the recompile limit, or under eager_on_recompile, a miss runs the frame eagerly. Said once
// per frame in the recompiles log; the count follows when the module goes away.
bool CompiledModule::runs_eagerly_after_miss(Frame& frame, const std::string& reason) {
  bool over_limit = static_cast<int>(frame.entries.size()) >= options_.recompile_limit;
  if (!over_limit && options_.stance != Stance::EagerOnRecompile) return false;
  if (over_limit && !frame.limit_hit) {
    frame.limit_hit = true;
    ++stats_.recompile_limit_hits;
    if (writer_) {
      writer_->record(PerfHintEvent{0, "recompile_limit", "",
                                    fmt::format("{} hit recompile_limit ({}); it runs eagerly. Last reason: {}",
                                                frame.name, options_.recompile_limit, reason),
                                    "", 0});
    }
  }
  if (frame.eager_misses++ == 0) {
    log(LogChannel::Recompiles, "{}: running eagerly: {}; triggered by: {}", frame.name, eager_miss_cause(frame), reason);
  }
  return true;
}

std::string CompiledModule::eager_miss_cause(const Frame& frame) const {
  return frame.limit_hit ? fmt::format("recompile limit ({}) reached", options_.recompile_limit)
                         : std::string("stance eager_on_recompile");
}

void CompiledModule::mark_dynamic_dim(Frame& frame, int input, int dim) {
  auto& dims = frame.dynamic_dims[static_cast<size_t>(input)];
  if (dims.size() <= static_cast<size_t>(dim)) dims.resize(static_cast<size_t>(dim) + 1);
  dims[static_cast<size_t>(dim)] = true;
}

// eager_then_compile: what changed between the eager first call and this one is dynamic from the
// first compile on, as PyTorch's stance learns it.
void CompiledModule::mark_changed_since_eager_call(Frame& root, const std::vector<c10::IValue>& inputs) {
  for (size_t i = 0; i < inputs.size() && i < eager_call_inputs_.size() && i < root.inputs.size(); ++i) {
    const c10::IValue& before = eager_call_inputs_[i];
    const c10::IValue& now = inputs[i];
    if (before.isTensor() && now.isTensor() && before.toTensor().dim() == now.toTensor().dim()) {
      for (int64_t d = 0; d < now.toTensor().dim(); ++d) {
        if (before.toTensor().size(d) != now.toTensor().size(d)) mark_dynamic_dim(root, static_cast<int>(i), static_cast<int>(d));
      }
    } else if (before.isInt() && now.isInt() && before.toInt() != now.toInt()) {
      root.dynamic_ints[i] = true;
    }
  }
}

}  // namespace tcprof

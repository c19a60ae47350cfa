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
      backend_(make_backend(options_.backend, options_.strict, options_.kernel_cache_dir)) {
  if (profiler_) {
    guard_key_ = profiler_->key("guard_check", "guard");
    eager_call_key_ = profiler_->key(model.method + " (eager)", "eager");
  }
}

CompiledModule::~CompiledModule() = default;

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
  entry->compiled = backend_->compile(entry->graph, values, profiler_);
  int64_t done = now_ns();
  ++stats_.compiles;
  stats_.compile_ns += done - start;
  const CompileReport& report = entry->compiled->report();
  if (report.compile_failed) ++stats_.compile_failures;

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
    writer_->record(GraphEvent{entry->graph_store_id, entry->store_id, static_cast<int>(entry->graph.op_count()),
                               report.ir.empty() ? entry->graph.ir() : report.ir,
                               report.compile_failed ? report.failure : report.code});
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
  for (const auto& s : exit.node_inputs) stack.push_back(value_from(s, outputs, {}, bindings));
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
  int64_t start = now_ns();
  Frame& root = root_frame();
  Id root_compile = 0;
  if (profiler_) profiler_->begin_call(call_id);
  std::string path = "compiled";
  c10::IValue result;

  bool eager_call = options_.stance == Stance::ForceEager ||
                    (options_.stance == Stance::EagerThenCompile && stats_.calls == 1);
  if (eager_call) {
    std::optional<CpuProfiler::Scope> timed;
    if (profiler_ && profiler_->enabled()) timed.emplace(*profiler_, eager_call_key_, 0);
    result = call_eager(inputs);
    path = "eager";
  } else {
    Frame* frame = &root;
    std::vector<c10::IValue> values = inputs;
    for (;;) {
      CacheEntry* entry = lookup(*frame, values);
      std::vector<c10::IValue> outputs;
      if (entry) {
        ++entry->hits;
        outputs = entry->compiled->run(values, entry->graph_store_id);
      } else {
        std::string reason = "first call";
        std::vector<std::string> messages;
        const Guard* first_guard = nullptr;
        bool recompile = !frame->entries.empty();
        if (recompile) {
          // Explain every entry's failure, newest first, like Dynamo's recompiles log.
          std::vector<std::string> names;
          for (const auto& in : frame->inputs) names.push_back(in.name);
          for (auto it = frame->entries.rbegin(); it != frame->entries.rend(); ++it) {
            const CacheEntry& e = **it;
            GuardFailure f = e.guards.explain_failure(values, names);
            const Guard& g = e.guards.guards()[f.guard_index];
            if (!first_guard) first_guard = &g;
            messages.push_back(f.message);
            ++stats_.guard_failures;
            if (writer_) {
              Id guard_id = f.guard_index < e.guard_store_ids.size() ? e.guard_store_ids[f.guard_index] : 0;
              writer_->record(GuardFailureEvent{call_id, e.store_id, guard_id, f.expected, f.actual, f.message});
            }
            // Automatic dynamic shapes: a size or int that changed becomes symbolic.
            if (g.kind == GuardKind::Size && g.input >= 0) {
              auto& dims = frame->dynamic_dims[static_cast<size_t>(g.input)];
              if (dims.size() <= static_cast<size_t>(g.dim)) dims.resize(static_cast<size_t>(g.dim) + 1);
              dims[static_cast<size_t>(g.dim)] = true;
            } else if (g.kind == GuardKind::IntValue && g.input >= 0) {
              frame->dynamic_ints[static_cast<size_t>(g.input)] = true;
            }
          }
          reason = fmt::format("{}", fmt::join(messages, "; "));
          log(LogChannel::Recompiles, "recompiling {}: triggered by:\n    {}", frame->name, fmt::join(messages, "\n    "));
          if (options_.stance == Stance::FailOnRecompile) fail_on_recompile(*frame, messages, first_guard);
        }
        bool over_limit = recompile && static_cast<int>(frame->entries.size()) >= options_.recompile_limit;
        if (over_limit && !frame->limit_hit) {
          frame->limit_hit = true;
          ++stats_.recompile_limit_hits;
          log(LogChannel::Recompiles, "{} hit the recompile limit ({}): it runs eagerly from now on",
              frame->name, options_.recompile_limit);
          if (writer_) {
            writer_->record(PerfHintEvent{0, "recompile_limit", "",
                                          fmt::format("{} hit recompile_limit ({}); it runs eagerly. "
                                                      "Last reason: {}",
                                                      frame->name, options_.recompile_limit, reason),
                                          "", 0});
          }
        }
        if (over_limit || (recompile && options_.stance == Stance::EagerOnRecompile)) {
          result = frame == &root ? call_eager(inputs) : tracer_.run_eagerly(frame->start, values);
          path = "eager";
          break;
        }
        CacheEntry& fresh = compile(*frame, values, reason, &outputs);
        if (recompile) {
          ++stats_.recompiles;
          if (writer_) {
            writer_->record(RecompileEvent{frame->store_id, call_id, fresh.store_id, reason,
                                           static_cast<int>(frame->entries.size() - 1)});
          }
        }
        entry = &fresh;
      }
      if (frame == &root) root_compile = entry->store_id;
      const EntryExit& exit = entry->exit;
      if (exit.kind == EntryExit::Kind::Return) {
        result = build_result(exit.result, outputs, InputBindings(values));
        break;
      }
      std::vector<c10::IValue> results = run_break(exit, outputs, values);
      std::vector<bool> outcome;
      for (int r : exit.outcome_results) outcome.push_back(results[static_cast<size_t>(r)].toBool());
      Frame& next = successor(*frame, *entry, outcome);
      InputBindings bindings(values);
      std::vector<c10::IValue> next_values;
      for (const auto& s : exit.next_inputs) next_values.push_back(value_from(s, outputs, results, bindings));
      frame = &next;
      values = std::move(next_values);
    }
  }
  if (profiler_) profiler_->end_call();
  if (path != "compiled") ++stats_.eager_calls;
  if (writer_) {
    writer_->record(CallEvent{call_id, root.store_id, root_compile, start, now_ns() - start, path,
                              shapes_json(inputs)});
  }
  return result;
}

}  // namespace tcprof

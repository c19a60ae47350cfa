// The harnesses of the text formats: the TORCH_TRACE reader and importer, Kineto traces, the
// input-spec languages and baseline files (harnesses.h).
#include <string>
#include <string_view>
#include <utility>

#include "analysis/baseline.h"
#include "cli/baseline.h"
#include "importers/trace_import.h"
#include "importers/trace_lines.h"
#include "compiler/runtime/input_spec.h"
#include "core/error.h"
#include "tests/fuzzers/harness_support.h"
#include "tests/fuzzers/harnesses.h"

namespace tcprof::fuzzers {

// Every record of the file, as `tcprof import` reads them; damage is counted, never thrown.
int fuzz_trace_lines(const uint8_t* data, size_t size) {
  const std::string path = write_input("trace.log", data, size);
  try {
    import::TraceLineReader reader(path);
    import::TraceRecord record;
    while (reader.next(record)) {
    }
    (void)reader.damage().damaged();
  } catch (const Error&) {
  }
  return 0;
}

namespace {

// The request imported into a fresh database, then that database read as `tcprof report` reads it:
// what an import writes from a damaged input must be readable.
int import_then_read(import::ImportRequest request, const std::string& db) {
  request.db = fresh_path(db);
  try {
    import::import_traces(request);
  } catch (const Error&) {
    return 0;
  }
  read_like_report(request.db);
  return 0;
}

}  // namespace

int fuzz_torch_trace(const uint8_t* data, size_t size) {
  import::ImportRequest request;
  request.paths = {write_input("trace.log", data, size)};
  return import_then_read(std::move(request), "import.db");
}

int fuzz_kineto(const uint8_t* data, size_t size) {
  import::ImportRequest request;
  request.kineto = {write_input("trace.json", data, size)};
  return import_then_read(std::move(request), "kineto.db");
}

// The same text through each of the three parsers of model commands.
int fuzz_input_spec(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    parse_input_spec(text);
  } catch (const Error&) {
  }
  try {
    parse_vary_spec(text);
  } catch (const Error&) {
  }
  try {
    parse_dim_ref(text);
  } catch (const Error&) {
  }
  return 0;
}

// A baseline file loaded as `check --baseline` loads it, written back and loaded again: what was
// accepted once must be accepted and read the same the second time.
int fuzz_baseline(const uint8_t* data, size_t size) {
  analysis::Baseline baseline;
  try {
    baseline = cli::load_baseline(write_input("baseline.json", data, size));
  } catch (const Error&) {
    return 0;
  }
  const std::string again = fresh_path("baseline-again.json");
  cli::save_baseline(baseline, again);
  if (analysis::baseline_to_json(cli::load_baseline(again)) != analysis::baseline_to_json(baseline)) {
    throw std::logic_error("a baseline read back differs from the one written");
  }
  return 0;
}

}  // namespace tcprof::fuzzers

// JSON forms of the store's rows, shared by every command's --json output so a field has one
// name everywhere.
#pragma once
#include <nlohmann/json.hpp>

#include "analysis/break_sites.h"
#include "analysis/kernel_stats.h"
#include "analysis/run_summary.h"
#include "core/run_reader.h"

namespace tcprof::json_rows {

nlohmann::json run(const RunRow& r);
nlohmann::json summary(const analysis::RunSummary& s);
nlohmann::json break_site(const analysis::BreakSite& b);
nlohmann::json guard_failure(const GuardFailureRow& f);
nlohmann::json recompile(const RecompileRow& r);
nlohmann::json kernel_stats(const analysis::KernelStats& k);
nlohmann::json perf_hint(const PerfHintRow& h);

}  // namespace tcprof::json_rows

// The gate's verdict in the four forms CI systems read: text for logs, JSON for scripts, JUnit XML
// for test reports (one testcase per frame) and GitHub workflow commands (annotations on the
// pull request's lines).
#pragma once
#include <string>

#include <nlohmann/json.hpp>

#include "analysis/gate.h"

namespace tcprof::cli {

struct GateContext {
  std::string baseline_path;  // empty when gating on limits only
  std::string db_path;
  std::string model;
  std::string update_command;  // the command that rewrites the baseline
};

std::string gate_text(const analysis::GateResult& r, const GateContext& c);
nlohmann::json gate_json(const analysis::GateResult& r, const GateContext& c);
std::string gate_junit(const analysis::GateResult& r, const GateContext& c);
std::string gate_github(const analysis::GateResult& r, const GateContext& c);

std::string xml_escape(std::string_view s);

}  // namespace tcprof::cli

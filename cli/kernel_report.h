// `tcprof report DB --kernels`: per kernel name the columns of nsys `cuda_gpu_kern_sum` (Time %,
// total, instances, avg, median, min, max, stddev), and per graph where its time went by kind
// (generated kernels, extern calls, fallbacks, eager ops, guards) plus the dispatch time of calls
// that no kernel accounts for.
#pragma once
#include <cstddef>
#include <string>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/run_reader.h"

namespace tcprof::cli {

// "Run N · command model · started · status", the model path shortened from the left to fit.
void write_kernel_report_header(fmt::memory_buffer& out, const RunRow& run);
void write_kernel_report(fmt::memory_buffer& out, const RunReader& reader, Id run_id, size_t top);
nlohmann::json kernel_report_json(const RunReader& reader, Id run_id);

}  // namespace tcprof::cli

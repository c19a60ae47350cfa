// The statistics every figure here uses, defined once: the median of durations, the median of
// values that each stand for several (a --profile summary row is `count` launches), and the mean,
// for a cost paid on some calls only (a sampling profiler's), which a median does not see.
#pragma once
#include <cstdint>
#include <utility>
#include <vector>

namespace tcprof::analysis {

// The median (the mean of the two middle values for an even count); 0 when empty.
double median(std::vector<int64_t> values);

// The arithmetic mean; 0 when empty.
double mean(const std::vector<int64_t>& values);

// The median of `values` where each (value, weight) pair counts `weight` times.
double weighted_median(std::vector<std::pair<double, int64_t>> values);

}  // namespace tcprof::analysis

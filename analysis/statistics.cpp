#include "analysis/statistics.h"

#include <algorithm>
#include <cstddef>

namespace tcprof::analysis {

double median(std::vector<int64_t> v) {
  if (v.empty()) return 0;
  size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(mid), v.end());
  double upper = static_cast<double>(v[mid]);
  if (v.size() % 2 == 1) return upper;
  double lower = static_cast<double>(*std::max_element(v.begin(), v.begin() + static_cast<ptrdiff_t>(mid)));
  return (lower + upper) / 2;
}

double mean(const std::vector<int64_t>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (int64_t v : values) sum += static_cast<double>(v);
  return sum / static_cast<double>(values.size());
}

double weighted_median(std::vector<std::pair<double, int64_t>> values) {
  std::sort(values.begin(), values.end());
  int64_t total = 0;
  for (const auto& v : values) total += v.second;
  if (total == 0) return 0;
  auto value_at = [&](int64_t rank) {  // 0-based
    int64_t seen = 0;
    for (const auto& v : values) {
      seen += v.second;
      if (rank < seen) return v.first;
    }
    return values.back().first;
  };
  if (total % 2 == 1) return value_at(total / 2);
  return (value_at(total / 2 - 1) + value_at(total / 2)) / 2;
}

}  // namespace tcprof::analysis

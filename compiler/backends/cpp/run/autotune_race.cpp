#include "compiler/backends/cpp/run/autotune_race.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/clock.h"

namespace tcprof {

RaceDecision decide(const std::vector<RaceEntry>& entries, double floor) {
  RaceDecision d;
  if (entries.empty()) return d;
  if (!entries[0].ran) {  // the planned candidate cannot run here: the fastest that can
    for (size_t i = 1; i < entries.size(); ++i) {
      if (entries[i].ran && (!entries[static_cast<size_t>(d.winner)].ran || entries[i].best_ns < entries[static_cast<size_t>(d.winner)].best_ns)) {
        d.winner = static_cast<int>(i);
      }
    }
    return d;
  }
  const RaceEntry& planned = entries[0];
  // When the planned candidate stays, the margin reported is the one its nearest challenger missed.
  double nearest_gain = -1e300, nearest_margin = 0;
  for (size_t i = 1; i < entries.size(); ++i) {
    const RaceEntry& e = entries[i];
    if (!e.ran || planned.best_ns <= 0) continue;
    const double margin = std::max({floor, planned.noise, e.noise}) + e.extra_margin;
    const double gain = 1.0 - static_cast<double>(e.best_ns) / static_cast<double>(planned.best_ns);
    if (gain > margin && gain > d.gain) {
      d.winner = static_cast<int>(i);
      d.margin = margin;
      d.gain = gain;
    }
    if (gain > nearest_gain) nearest_gain = gain, nearest_margin = margin;
  }
  if (d.winner == 0) d.margin = nearest_margin;
  return d;
}

RaceDecision race(const std::vector<std::function<bool()>>& candidates, const RaceOptions& options,
                  std::vector<RaceEntry>* entries) {
  const std::function<int64_t()> clock = options.clock ? options.clock : std::function<int64_t()>(now_ns);
  const size_t n = candidates.size();
  entries->assign(n, RaceEntry{});
  for (size_t i = 0; i < n && i < options.extra_margin.size(); ++i) (*entries)[i].extra_margin = options.extra_margin[i];
  std::vector<std::vector<int64_t>> rounds(n);
  // One untimed run each (first-touch pages, caches, scratchpads); its time only sets the budget.
  int64_t slowest = 0;
  for (size_t i = 0; i < n; ++i) {
    const int64_t t0 = clock();
    if (!candidates[i]()) continue;
    const int64_t t = clock() - t0;
    (*entries)[i].ran = true;
    (*entries)[i].best_ns = t;
    slowest = std::max(slowest, t);
    if (t > options.too_slow_ns) break;
  }
  const int round_count = slowest > options.slow_ns ? 0 : options.rounds;
  // Repeats per round from the untimed run (slower than the timed ones: it errs towards more).
  std::vector<int64_t> repeats(n, 1);
  for (size_t i = 0; i < n; ++i) {
    const int64_t t = std::max<int64_t>((*entries)[i].best_ns, 1);
    if ((*entries)[i].ran && t < options.min_round_ns) {
      repeats[i] = std::clamp<int64_t>(options.min_round_ns / t, 1, std::max(options.max_repeats, 1));
    }
  }
  // In turns, each round starting one candidate later, so that neither side always runs first.
  for (int r = 0; r < round_count; ++r) {
    for (size_t k = 0; k < n; ++k) {
      const size_t i = (static_cast<size_t>(r) + k) % n;
      if (!(*entries)[i].ran) continue;
      const int64_t t0 = clock();
      bool ok = true;
      for (int64_t j = 0; j < repeats[i] && ok; ++j) ok = candidates[i]();
      if (!ok) {
        (*entries)[i].ran = false;
        continue;
      }
      rounds[i].push_back((clock() - t0) / repeats[i]);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    RaceEntry& e = (*entries)[i];
    std::vector<int64_t>& times = rounds[i];
    if (!e.ran || times.empty()) continue;  // timed by its untimed run alone: a slow graph
    std::sort(times.begin(), times.end());
    e.best_ns = times.front();
    e.noise = e.best_ns > 0 ? static_cast<double>(times[times.size() / 2] - e.best_ns) / static_cast<double>(e.best_ns) : 0;
  }
  return decide(*entries, options.floor);
}

std::string race_time_text(const RaceEntry& entry) {
  if (!entry.ran) return "not run";
  return fmt::format("{:.3f} ms ±{:.1f}%", static_cast<double>(entry.best_ns) / 1e6, entry.noise * 100);
}

}  // namespace tcprof

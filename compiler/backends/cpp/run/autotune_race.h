// How autotuning times and decides, for every choice it makes (a direct kernel against LibTorch's
// op, the layout of a oneDNN chain): the candidates run in turns, several rounds after one untimed
// run each, so that a slow spell of the machine slows them alike; each one's best round is its time
// and the spread of its rounds (median over best) its noise. The planned candidate (index 0) keeps
// its place unless another is faster by more than the margin: the larger of the two candidates'
// noise and a floor, plus any extra margin the caller gives it for a cost beyond its time (no
// caller does today: a GEMM that copies its weight is the challenger of LibTorch's linear instead,
// which already makes it beat the margin). On a noisy
// machine decisions then stay the planned ones instead of flipping with the load, and a user's
// autotune cache keeps a set that holds in quiet times too.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace tcprof {

struct RaceEntry {
  bool ran = false;       // false: the candidate could not run (not a choice)
  int64_t best_ns = 0;    // its fastest round
  double noise = 0;       // (median round - best round) / best round
  double extra_margin = 0;  // what it must win by beyond the noise (a weight copy's cost)
};

struct RaceDecision {
  int winner = 0;
  double margin = 0;  // the margin the winner beat the planned candidate by, or the one it kept its place with
  double gain = 0;    // 1 - winner's time / planned candidate's time (0 when the planned one stays)
};

struct RaceOptions {
  int rounds = 5;
  // A round of a candidate faster than this runs it repeatedly for about this long and takes the
  // mean: a few microseconds timed once are mostly the clock and the scheduler, whose spread
  // would otherwise set the margin (0: one run per round).
  int64_t min_round_ns = 0;
  int max_repeats = 64;
  double floor = 0.02;  // no candidate displaces the planned one by less than 2%
  std::vector<double> extra_margin;  // per candidate
  // A candidate whose untimed run takes longer is timed by that run alone (slow graphs), and one
  // over `too_slow_ns` ends the race: the candidates not yet run are not choices.
  int64_t slow_ns = INT64_MAX, too_slow_ns = INT64_MAX;
  std::function<int64_t()> clock;  // nanoseconds; the steady clock when empty (tests inject one)
};

// The decision over measured entries (also for entries read back from the autotune cache).
RaceDecision decide(const std::vector<RaceEntry>& entries, double floor);

// Runs the candidates (each returns false when it cannot run) and decides. `entries` receives what
// each measured.
RaceDecision race(const std::vector<std::function<bool()>>& candidates, const RaceOptions& options,
                  std::vector<RaceEntry>* entries);

// "0.123 ms ±1.2%"
std::string race_time_text(const RaceEntry& entry);

}  // namespace tcprof

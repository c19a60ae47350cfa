// Autotuning's race (compiler/backends/cpp/run/autotune_race.h) on a clock the test drives: each
// candidate "takes" a given time, and a slow spell of the machine stretches every run inside it.
// The planned candidate must keep its place unless another beats it by more than the noise.
#include <gtest/gtest.h>

#include <functional>
#include <vector>

#include "compiler/backends/cpp/run/autotune_race.h"

namespace tcprof {
namespace {

// A machine on a virtual clock: runs take their candidate's time, times `slow_factor` while the
// run's start falls in [slow_from, slow_until) of the machine's runs (counted from 0).
struct VirtualMachine {
  int64_t now = 0;
  int runs = 0;
  int slow_from = 0, slow_until = 0;
  double slow_factor = 1.0;

  std::function<bool()> candidate(int64_t ns) {
    return [this, ns] {
      const bool slow = runs >= slow_from && runs < slow_until;
      now += static_cast<int64_t>(static_cast<double>(ns) * (slow ? slow_factor : 1.0));
      ++runs;
      return true;
    };
  }
  RaceOptions options() {
    RaceOptions o;
    o.clock = [this] { return now; };
    return o;
  }
};

// Two equal candidates, the planned one caught by a slow spell that covers its untimed run and the
// first half of the rounds: measured one after the other, as the chain layouts were, it would lose
// every timed run to the spell; in turns it keeps its best rounds, and its place.
TEST(AutotuneRace, ASlowSpellDoesNotFlipAChoiceBetweenEqualCandidates) {
  VirtualMachine m;
  m.slow_from = 0, m.slow_until = 6, m.slow_factor = 1.6;  // the warm-ups and rounds 0-1 (of 5)
  std::vector<RaceEntry> entries;
  RaceDecision d = race({m.candidate(100'000), m.candidate(99'000)}, m.options(), &entries);
  EXPECT_EQ(d.winner, 0) << "the challenger is 1% faster: within the 2% floor";
  EXPECT_EQ(entries[0].best_ns, 100'000);
  EXPECT_EQ(entries[1].best_ns, 99'000);
  EXPECT_GE(d.margin, 0.02);
}

// What the slow spell would do to the old way of measuring: each candidate timed alone, the planned
// one entirely inside the spell. The same numbers through decide() then flip the choice, which is
// what the race prevents.
TEST(AutotuneRace, MeasuredOneAfterTheOtherTheSameSpellFlipsIt) {
  std::vector<RaceEntry> sequential(2);
  sequential[0] = {true, 160'000, 0.0, 0.0};  // every run of the planned one inside the spell
  sequential[1] = {true, 99'000, 0.0, 0.0};
  EXPECT_EQ(decide(sequential, 0.02).winner, 1);
}

TEST(AutotuneRace, AClearlyFasterCandidateWinsThroughTheSpell) {
  VirtualMachine m;
  m.slow_from = 2, m.slow_until = 5, m.slow_factor = 2.0;  // the first two rounds, in part
  std::vector<RaceEntry> entries;
  RaceDecision d = race({m.candidate(100'000), m.candidate(70'000)}, m.options(), &entries);
  EXPECT_EQ(d.winner, 1);
  EXPECT_NEAR(d.gain, 0.30, 1e-9);
}

// Noise raises the margin: rounds of the planned candidate spread by 30% (median over best) let no
// challenger 15% faster through; with quiet rounds the same challenger wins.
TEST(AutotuneRace, NoiseBetweenRoundsIsTheMarginToBeat) {
  std::vector<RaceEntry> noisy(2);
  noisy[0] = {true, 100'000, 0.30, 0.0};
  noisy[1] = {true, 85'000, 0.01, 0.0};
  RaceDecision d = decide(noisy, 0.02);
  EXPECT_EQ(d.winner, 0);
  EXPECT_DOUBLE_EQ(d.margin, 0.30);
  noisy[0].noise = 0.01;
  EXPECT_EQ(decide(noisy, 0.02).winner, 1);
}

// A cost beyond time (a weight copy) adds to the margin of the candidate that has it.
TEST(AutotuneRace, ExtraMarginIsAddedForTheCandidateThatCostsMore) {
  std::vector<RaceEntry> e(2);
  e[0] = {true, 100'000, 0.0, 0.0};
  e[1] = {true, 97'000, 0.0, 0.02};  // 3% faster, must beat 2% + 2%
  EXPECT_EQ(decide(e, 0.02).winner, 0);
  e[1].best_ns = 95'000;
  EXPECT_EQ(decide(e, 0.02).winner, 1);
}

// Candidates of a few microseconds run several times a round and are timed by the mean: the
// virtual clock's spell then covers part of a round, not a whole sample.
TEST(AutotuneRace, ShortCandidatesAreRepeatedWithinARound) {
  VirtualMachine m;
  RaceOptions o = m.options();
  o.min_round_ns = 100'000;
  std::vector<RaceEntry> entries;
  RaceDecision d = race({m.candidate(5'000), m.candidate(4'000)}, o, &entries);
  // untimed runs, then 5 rounds of 20 (100 us / 5 us) and of 25 (100 us / 4 us) runs
  EXPECT_EQ(m.runs, 2 + 5 * 20 + 5 * 25);
  EXPECT_EQ(entries[0].best_ns, 5'000);
  EXPECT_EQ(entries[1].best_ns, 4'000);
  EXPECT_EQ(d.winner, 1);
  o.max_repeats = 8;
  m.runs = 0;
  race({m.candidate(5'000), m.candidate(4'000)}, o, &entries);
  EXPECT_EQ(m.runs, 2 + 5 * 8 + 5 * 8);
}

TEST(AutotuneRace, CandidatesThatCannotRunAreNoChoice) {
  VirtualMachine m;
  std::vector<RaceEntry> entries;
  RaceDecision d = race({[] { return false; }, m.candidate(50'000), m.candidate(40'000)}, m.options(), &entries);
  EXPECT_FALSE(entries[0].ran);
  EXPECT_EQ(d.winner, 2) << "without the planned candidate, the fastest that ran";
}

// A graph whose untimed run is slow is timed by that run alone; one too slow ends the race and the
// planned candidate stays (the chain layouts of a big model).
TEST(AutotuneRace, SlowRunsShortenTheRace) {
  VirtualMachine m;
  RaceOptions o = m.options();
  o.slow_ns = 1'000'000, o.too_slow_ns = 5'000'000;
  std::vector<RaceEntry> entries;
  race({m.candidate(2'000'000), m.candidate(1'500'000)}, o, &entries);
  EXPECT_EQ(m.runs, 2) << "one run each";
  m.runs = 0;
  RaceDecision d = race({m.candidate(6'000'000), m.candidate(1'000)}, o, &entries);
  EXPECT_EQ(m.runs, 1);
  EXPECT_FALSE(entries[1].ran);
  EXPECT_EQ(d.winner, 0);
}

}  // namespace
}  // namespace tcprof

// Compile phases timed with ScopedCompilePhase land in compile_phases in order.
#include <gtest/gtest.h>

#include "core/run_reader.h"
#include "profiler/phase_timer.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

TEST(PhaseTimer, RecordsEachPhaseOfItsCompile) {
  testing::TempDir dir;
  std::string db = dir.file("p.db");
  Id compile;
  {
    RunInfo info;
    info.command = "test";
    RunWriter w(db, info);
    compile = w.next_id();
    for (const char* phase : {"capture", "lower", "codegen"}) {
      ScopedCompilePhase timer(&w, compile, phase);
    }
    ScopedCompilePhase nothing(nullptr, compile, "load");
  }
  RunReader r(db);
  auto phases = r.compile_phases(r.runs().at(0).id);
  ASSERT_EQ(phases.size(), 3u);
  EXPECT_EQ(phases[0].phase, "capture");
  EXPECT_EQ(phases[2].phase, "codegen");
  EXPECT_EQ(phases[1].compile_id, compile);
  EXPECT_GE(phases[1].start_ns, phases[0].start_ns + phases[0].duration_ns);
}

}  // namespace
}  // namespace tcprof

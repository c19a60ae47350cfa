// Files written by older tcprof versions: readers open them as they are (with the values their
// runs had for newer columns), writers upgrade them in place, once, even when two start together.
// fixtures/schema2_run.sql is the dump of a real run recorded by tcprof at schema 2
// (submodule_break.pt, 4 calls with a varying batch: 5 breaks, 5 recompiles, 25 kernels).
#include <gtest/gtest.h>

#include <thread>

#include "core/run_reader.h"
#include "core/run_writer.h"
#include "core/schema.h"
#include "core/sqlite_db.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::TempDir;

std::string schema2_file(const TempDir& dir) {
  std::string path = dir.file("schema2.db");
  Database db(path, Database::Mode::ReadWriteCreate);
  db.exec(testing::read_file(TCPROF_CORE_FIXTURES "/schema2_run.sql"));
  return path;
}

RunInfo info(const std::string& command) {
  RunInfo i;
  i.command = command;
  return i;
}

TEST(StoreUpgrade, SchemaTwoFileReadsWithTheValuesItsRunsHad) {
  TempDir dir;
  RunReader r(schema2_file(dir));
  EXPECT_EQ(r.schema_version(), 2);
  auto runs = r.runs();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].source, "tcprof");
  EXPECT_EQ(runs[0].rank, 0);
  EXPECT_EQ(runs[0].world_size, 1);
  Id run = runs[0].id;
  EXPECT_TRUE(r.sources(run).empty());
  auto compiles = r.compiles(run);
  ASSERT_EQ(compiles.size(), 8u);
  for (const auto& c : compiles) EXPECT_EQ(c.attempt, 0);
  auto graphs = r.graphs(run);
  ASSERT_FALSE(graphs.empty());
  for (const auto& g : graphs) {
    EXPECT_EQ(g.kind, "captured");
    EXPECT_EQ(g.fx_key, "");
  }
  EXPECT_EQ(r.graph_breaks(run).size(), 5u);
  EXPECT_EQ(r.recompiles(run).size(), 5u);
}

TEST(StoreUpgrade, WriterUpgradesInPlaceAndKeepsOlderRuns) {
  TempDir dir;
  std::string path = schema2_file(dir);
  {
    RunWriter w(path, info("explain"));
    w.record(SourceEvent{"model.py", "ab", "x = 1\n"});
  }
  RunReader r(path);
  EXPECT_EQ(r.schema_version(), kSchemaVersion);
  auto runs = r.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].command, "run");
  EXPECT_EQ(runs[0].source, "tcprof");
  EXPECT_EQ(r.graph_breaks(runs[0].id).size(), 5u);
  EXPECT_TRUE(r.sources(runs[0].id).empty());
  ASSERT_EQ(r.sources(runs[1].id).size(), 1u);
  EXPECT_EQ(r.sources(runs[1].id)[0].text, "x = 1\n");
}

TEST(StoreUpgrade, TwoWritersOpeningAnOldFileTogetherUpgradeItOnce) {
  for (int trial = 0; trial < 5; ++trial) {
    TempDir dir;
    std::string path = schema2_file(dir);
    std::string errors[2];
    std::thread writers[2];
    for (int i = 0; i < 2; ++i) {
      writers[i] = std::thread([&, i] {
        try {
          RunWriter w(path, info("run"));
        } catch (const std::exception& e) {
          errors[i] = e.what();
        }
      });
    }
    for (auto& t : writers) t.join();
    EXPECT_EQ(errors[0], "");
    EXPECT_EQ(errors[1], "");
    RunReader r(path);
    EXPECT_EQ(r.schema_version(), kSchemaVersion);
    EXPECT_EQ(r.runs().size(), 3u);
  }
}

}  // namespace
}  // namespace tcprof

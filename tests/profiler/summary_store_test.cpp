// Schema 2 additions: kernel_summaries, run_counters, the per-graph kind split, and files written
// by schema 1 (read as they are; upgraded when a writer opens them).
#include <gtest/gtest.h>

#include "analysis/kernel_stats.h"
#include "core/run_reader.h"
#include "core/run_writer.h"
#include "core/schema.h"
#include "core/sqlite_db.h"
#include "tests/test_support.h"

namespace tcprof {
namespace {

using testing::TempDir;

RunInfo info() {
  RunInfo i;
  i.command = "test";
  return i;
}

// Turns a fresh file back into what schema 1 wrote.
void downgrade_to_v1(const std::string& path) {
  Database db(path, Database::Mode::ReadWriteCreate);
  db.exec("DROP TABLE kernel_summaries; DROP TABLE run_counters; DROP TABLE sources;");
  db.exec("ALTER TABLE runs DROP COLUMN source; ALTER TABLE runs DROP COLUMN rank; "
          "ALTER TABLE runs DROP COLUMN world_size; ALTER TABLE compiles DROP COLUMN attempt; "
          "ALTER TABLE graphs DROP COLUMN kind; ALTER TABLE graphs DROP COLUMN fx_key; "
          "ALTER TABLE runs DROP COLUMN last_event_at; ALTER TABLE kernels DROP COLUMN bytes; "
          "ALTER TABLE calls DROP COLUMN peak_gpu_bytes; ALTER TABLE steps DROP COLUMN forward_ns; "
          "ALTER TABLE steps DROP COLUMN backward_ns; ALTER TABLE steps DROP COLUMN optimizer_ns; "
          "ALTER TABLE kernels DROP COLUMN mangled_name;");
  db.exec("UPDATE meta SET value='1' WHERE key='schema_version'");
}

TEST(SummaryStore, CountersAreSummedPerName) {
  TempDir dir;
  std::string db = dir.file("c.db");
  {
    RunWriter w(db, info());
    w.record(CounterEvent{"cupti.dropped_records", 3});
    w.record(CounterEvent{"cupti.dropped_records", 4});
    w.record(CounterEvent{"cupti.overhead_ns", 100});
  }
  RunReader r(db);
  EXPECT_EQ(r.schema_version(), kSchemaVersion);
  auto c = r.counters(r.runs().at(0).id);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0], (std::pair<std::string, int64_t>{"cupti.dropped_records", 7}));
  EXPECT_EQ(c[1], (std::pair<std::string, int64_t>{"cupti.overhead_ns", 100}));
}

TEST(SummaryStore, GraphKindSplitCombinesFullAndSummaryRows) {
  TempDir dir;
  std::string db = dir.file("g.db");
  Id graph;
  {
    RunWriter w(db, info());
    Id compile = w.next_id();
    w.record(CompileEvent{compile, 0, "0/0", "first call", 0, 10, "ok", false});
    graph = w.next_id();
    w.record(GraphEvent{graph, compile, 3, "", ""});
    KernelEvent k;
    k.graph_id = graph;
    k.name_id = w.intern("mm");
    k.kind_id = w.intern("extern");
    k.duration_ns = 100;
    w.record(k);
    w.record(k);
    KernelSummaryEvent s;
    s.graph_id = graph;
    s.name_id = w.intern("fused");
    s.kind_id = w.intern("generated");
    s.count = 5;
    s.total_ns = 500;
    s.min_ns = s.max_ns = 100;
    w.record(s);
    KernelEvent guard;
    guard.kind_id = w.intern("guard");
    guard.name_id = w.intern("guards");
    guard.duration_ns = 7;
    w.record(guard);
  }
  RunReader r(db);
  auto split = r.graph_kernel_times(r.runs().at(0).id);
  ASSERT_EQ(split.size(), 3u);
  EXPECT_EQ(split[0].graph_id, 0);  // outside any graph first
  EXPECT_EQ(split[0].kind, "guard");
  EXPECT_EQ(split[1].graph_id, graph);
  EXPECT_EQ(split[1].compile_label, "0/0");
  EXPECT_EQ(split[1].kind, "generated");
  EXPECT_EQ(split[1].instances, 5);
  EXPECT_EQ(split[1].total_ns, 500);
  EXPECT_EQ(split[2].kind, "extern");
  EXPECT_EQ(split[2].instances, 2);
}

TEST(SummaryStore, SchemaOneFilesAreReadAndUpgradedByWriters) {
  TempDir dir;
  std::string db = dir.file("v1.db");
  { RunWriter w(db, info()); }
  downgrade_to_v1(db);
  {
    RunReader r(db);
    EXPECT_EQ(r.schema_version(), 1);
    Id run = r.runs().at(0).id;
    EXPECT_TRUE(r.kernel_summaries(run).empty());
    EXPECT_TRUE(r.counters(run).empty());
    EXPECT_TRUE(analysis::kernel_stats(r, run).empty());
    EXPECT_TRUE(r.graph_kernel_times(run).empty());
  }
  {
    RunWriter w(db, info());
    w.record(CounterEvent{"x", 1});
  }
  RunReader r(db);
  EXPECT_EQ(r.schema_version(), kSchemaVersion);
  EXPECT_EQ(r.runs().size(), 2u);
  EXPECT_EQ(r.counters(r.runs().at(1).id).size(), 1u);
}

}  // namespace
}  // namespace tcprof

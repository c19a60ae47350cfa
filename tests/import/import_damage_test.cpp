// Damaged logs: whatever is intact is imported and the damage is counted and reported. A file cut
// at any byte loses at most the record it was cut in.
#include <gtest/gtest.h>
#include <zlib.h>

#include <filesystem>
#include <fstream>

#include "importers/trace_import.h"
#include "importers/trace_lines.h"
#include "core/run_reader.h"
#include "core/sqlite_db.h"
#include "tests/test_support.h"

namespace tcprof::import {
namespace {

const std::string kFixtures = TCPROF_TRACE_FIXTURES;

std::string gunzip(const std::string& path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  std::string out;
  char buf[1 << 16];
  int n;
  while ((n = gzread(gz, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  gzclose(gz);
  return out;
}

void write(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

struct Read {
  int64_t records = 0;
  TraceDamage damage;
};

Read read_all(const std::string& path) {
  TraceLineReader reader(path);
  TraceRecord r;
  Read out;
  while (reader.next(r)) ++out.records;
  out.damage = reader.damage();
  return out;
}

// Offsets where records begin: a line that does not start with a tab.
std::vector<size_t> record_starts(const std::string& text) {
  std::vector<size_t> out{0};
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] == '\n' && text[i + 1] != '\t') out.push_back(i + 1);
  }
  return out;
}

class ImportDamage : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { log_ = new std::string(gunzip(kFixtures + "/mlp_torch2.11_h100.log.gz")); }
  static void TearDownTestSuite() { delete log_; }
  static std::string* log_;
  testing::TempDir dir_;
};
std::string* ImportDamage::log_ = nullptr;

TEST_F(ImportDamage, IntactLogReadsEveryRecord) {
  std::string path = dir_.file("ok.log");
  write(path, *log_);
  Read r = read_all(path);
  EXPECT_EQ(r.records, static_cast<int64_t>(record_starts(*log_).size()));
  EXPECT_EQ(r.damage.damaged(), 0);
}

TEST_F(ImportDamage, CutAtAnyByteLosesAtMostThatRecord) {
  std::vector<size_t> starts = record_starts(*log_);
  std::vector<size_t> cuts = {1, 100, starts[10], starts[10] + 1, starts[200] - 1, log_->size() - 2, log_->size() - 1};
  for (size_t i = 1; i < 40; ++i) cuts.push_back(log_->size() * i / 40);  // inside payloads, mostly
  for (size_t r = 1; r < starts.size(); r += starts.size() / 12) {  // around record boundaries
    for (size_t d : {starts[r] - 2, starts[r] - 1, starts[r], starts[r] + 1}) cuts.push_back(d);
  }
  for (size_t cut : cuts) {
    std::string path = dir_.file("cut.log");
    write(path, log_->substr(0, cut));
    Read r = read_all(path);
    // Records that began before the cut; the one the cut fell in may be lost, no other.
    int64_t begun = std::lower_bound(starts.begin(), starts.end(), cut) - starts.begin();
    EXPECT_GE(r.records, begun - 1) << "cut at " << cut;
    EXPECT_LE(r.records, begun) << "cut at " << cut;
    EXPECT_LE(r.damage.damaged(), 1) << "cut at " << cut;
  }
}

TEST_F(ImportDamage, BadMd5DropsOnlyThatRecord) {
  std::string text = *log_;
  size_t payload = text.find("\n\t");  // first payload line
  ASSERT_NE(payload, std::string::npos);
  text[payload + 3] = text[payload + 3] == 'x' ? 'y' : 'x';
  std::string path = dir_.file("md5.log");
  write(path, text);
  Read r = read_all(path);
  EXPECT_EQ(r.damage.bad_md5, 1);
  EXPECT_EQ(r.records, static_cast<int64_t>(record_starts(*log_).size()) - 1);
  EXPECT_NE(r.damage.first_problem.find("MD5"), std::string::npos);
}

TEST_F(ImportDamage, JunkLinesAreCountedAndSkipped) {
  std::string text = "hello, this is not glog\n" + *log_;
  size_t mid = record_starts(text)[50];
  text.insert(mid, "V1122 22:22:06.644000 448 x.py:1] {not json\n");
  std::string path = dir_.file("junk.log");
  write(path, text);
  Read r = read_all(path);
  EXPECT_EQ(r.damage.not_glog, 1);
  EXPECT_EQ(r.damage.bad_json, 1);
  EXPECT_EQ(r.records, static_cast<int64_t>(record_starts(*log_).size()));
}

TEST_F(ImportDamage, UnknownRecordKindIsCountedNeverFatal) {
  std::string text = *log_ + "V1122 22:22:06.644000 448 x.py:1] {\"kind_from_the_future\": {}, \"frame_id\": 0, \"frame_compile_id\": 0}\n";
  std::string path = dir_.file("future.log");
  write(path, text);
  ImportResult r = import_traces({{path}, {}, dir_.file("f.db")});
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.runs[0].unknown_records, 1);
  EXPECT_EQ(r.runs[0].compiles, 2);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("kind_from_the_future"), std::string::npos);
}

TEST_F(ImportDamage, GzipCutShortKeepsWhatWasRead) {
  std::string gz = testing::read_file(kFixtures + "/breaks_torch2.11_h100.log.gz");
  std::string path = dir_.file("cut.log.gz");
  write(path, gz.substr(0, gz.size() / 2));
  Read r = read_all(path);
  EXPECT_TRUE(r.damage.gzip_cut);
  EXPECT_GT(r.records, 100);
  ImportResult imported = import_traces({{path}, {}, dir_.file("g.db")});
  ASSERT_EQ(imported.runs.size(), 1u);
  ASSERT_FALSE(imported.warnings.empty());
  EXPECT_NE(imported.warnings[0].find("gzip"), std::string::npos);
}

TEST_F(ImportDamage, NotALogIsAnError) {
  std::string path = dir_.file("notes.txt");
  write(path, "just some text\nnothing to see\n");
  ImportResult r = import_traces({{path}, {}, dir_.file("n.db")});
  EXPECT_TRUE(r.runs.empty());
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("not a TORCH_TRACE log"), std::string::npos);
  EXPECT_FALSE(looks_like_torch_trace(path));
}

TEST_F(ImportDamage, KilledMidCompileLeavesAnIncompleteCompile) {
  // Cut before the second compile's metrics: 0/1 started and never finished.
  size_t last_metrics = log_->rfind("{\"compilation_metrics\"");
  ASSERT_NE(last_metrics, std::string::npos);
  size_t line = log_->rfind('\n', last_metrics) + 1;
  std::string path = dir_.file("killed.log");
  write(path, log_->substr(0, line));
  ImportResult r = import_traces({{path}, {}, dir_.file("k.db")});
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.runs[0].compiles, 2);
  EXPECT_EQ(r.runs[0].compiles_incomplete, 1);
  RunReader reader(r.db);
  EXPECT_EQ(reader.runs()[0].status, "interrupted");
  auto compiles = reader.compiles(r.runs[0].run_id);
  ASSERT_EQ(compiles.size(), 2u);
  EXPECT_EQ(compiles[1].status, "incomplete");
}

TEST_F(ImportDamage, ResetStartsANewRun) {
  // torch._dynamo.reset() between two runs of the same code: the compile ids repeat.
  std::string path = dir_.file("twice.log");
  write(path, *log_ + *log_);
  ImportResult r = import_traces({{path}, {}, dir_.file("t.db")});
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_EQ(r.runs[0].compiles, 2);
  EXPECT_EQ(r.runs[1].compiles, 2);
  EXPECT_EQ(r.runs[1].frames, 1);
  // Each session keeps its own compile phases whole: none left open, the same in both.
  Database db(r.db, Database::Mode::ReadOnly);
  auto phases = db.prepare("SELECT run_id, count(*), sum(phase LIKE '%(unfinished)') FROM compile_phases GROUP BY run_id ORDER BY run_id");
  ASSERT_TRUE(phases.step());
  int64_t first = phases.int64(1);
  EXPECT_EQ(phases.int64(2), 0);
  ASSERT_TRUE(phases.step());
  EXPECT_EQ(phases.int64(1), first);
  EXPECT_EQ(phases.int64(2), 0);
}

TEST_F(ImportDamage, FolderOfRanksGivesOneRunPerRank) {
  std::filesystem::create_directories(dir_.file("ranks"));
  write(dir_.file("ranks/dedicated_log_torch_trace_rank_0_abc.log"), *log_);
  write(dir_.file("ranks/dedicated_log_torch_trace_rank_1_def.log"), *log_);
  ImportResult r = import_traces({{dir_.file("ranks")}, {}, dir_.file("r.db")});
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_EQ(r.runs[0].rank, 0);
  EXPECT_EQ(r.runs[1].rank, 1);
  RunReader reader(r.db);
  auto runs = reader.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].world_size, 2);
  EXPECT_EQ(runs[0].rank + runs[1].rank, 1);
}

TEST_F(ImportDamage, KinetoThatIsNotATraceOrIsCutIsAnError) {
  std::string notes = dir_.file("notes.json");
  write(notes, "{\"hello\": 1}");
  ImportResult r = import_traces({{kFixtures + "/mlp_torch2.11_h100.log.gz"}, {notes}, dir_.file("k1.db")});
  ASSERT_EQ(r.runs.size(), 1u);  // the log is still imported
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("not a torch.profiler"), std::string::npos) << r.errors[0];
  std::string gz = testing::read_file(kFixtures + "/mlp_kineto_torch2.11_h100.json.gz");
  std::string cut = dir_.file("cut.json.gz");
  write(cut, gz.substr(0, gz.size() / 2));
  r = import_traces({{}, {cut}, dir_.file("k2.db")});
  ASSERT_EQ(r.errors.size(), 1u);
  EXPECT_NE(r.errors[0].find("cut short"), std::string::npos) << r.errors[0];
}

// A record whose fields have the wrong JSON types (a stack frame named 3; libFuzzer's torch_trace
// harness found it escaping as nlohmann's type_error) is skipped and counted as damage.
TEST_F(ImportDamage, RecordsWithFieldsOfTheWrongTypeAreSkippedAndCounted) {
  std::string log = *log_;
  const std::string from = "\"name\": \"", to = "\"name\": 3, \"was\": \"";
  const size_t at = log.find("\"dynamo_start\": {\"stack\": [" );
  ASSERT_NE(at, std::string::npos);
  const size_t frame = log.rfind(from, log.find("]}", at));  // the innermost (last) frame's name
  ASSERT_TRUE(frame != std::string::npos && frame > at);
  log.replace(frame, from.size(), to);
  std::string path = dir_.file("typed.log");
  write(path, log);
  ImportResult r = import_traces({{path}, {}, dir_.file("typed-log.db")});
  ASSERT_EQ(r.runs.size(), 1u);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("1 with fields of the wrong JSON type"), std::string::npos) << r.warnings[0];
}

// A Kineto event whose fields have the wrong JSON types (libFuzzer's kineto harness found "ph": 3
// escaping as nlohmann's type_error) is skipped and counted; the trace's other events are imported.
TEST_F(ImportDamage, KinetoEventsOfTheWrongTypesAreSkippedAndCounted) {
  std::string trace = dir_.file("typed.json");
  write(trace, R"({"traceEvents": [
    {"ph": "X", "cat": "kernel", "name": "k0", "pid": 0, "tid": 7, "ts": 10.0, "dur": 2.0, "args": {"correlation": 1}},
    {"ph": 3, "cat": "kernel", "name": "k1", "ts": 12.0, "dur": 1.0},
    {"ph": "X", "cat": ["kernel"], "name": "k2", "ts": 14.0, "dur": 1.0},
    {"ph": "X", "cat": "kernel", "name": "k3", "pid": 0, "tid": 7, "ts": 16.0, "dur": 2.0, "args": {"correlation": 2}}
  ]})");
  ImportResult r = import_traces({{}, {trace}, dir_.file("typed.db")});
  ASSERT_TRUE(r.errors.empty()) << r.errors[0];
  ASSERT_EQ(r.notes.size(), 1u);
  EXPECT_NE(r.notes[0].find("2 kernels"), std::string::npos) << r.notes[0];
  EXPECT_NE(r.notes[0].find("2 malformed events skipped"), std::string::npos) << r.notes[0];
}

// Where the job's files are readable at import time (the CI checkout), the run keeps their text.
TEST_F(ImportDamage, UserSourcesAreRecordedWhenReadable) {
  std::string breaks = gunzip(kFixtures + "/breaks_torch2.11_h100.log.gz");
  std::string here = dir_.file("project");
  std::filesystem::create_directories(here);
  std::filesystem::copy_file(kFixtures + "/make_traces.py", here + "/make_traces.py");
  // String-table lines carry no payload (no MD5), so their paths can move without damage.
  std::string moved;
  size_t at = 0;
  while (at < breaks.size()) {
    size_t nl = breaks.find('\n', at);
    std::string line = breaks.substr(at, nl - at + 1);
    at = nl + 1;
    if (line.find("] {\"str\": [\"/home/user/project/") != std::string::npos) {
      line = testing::replace_all(line, "/home/user/project", here);
    }
    moved += line;
  }
  std::string path = dir_.file("moved.log");
  write(path, moved);
  ImportResult r = import_traces({{path}, {}, dir_.file("s.db")});
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.runs[0].damaged_records, 0);
  RunReader reader(r.db);
  auto sources = reader.sources(r.runs[0].run_id);
  ASSERT_EQ(sources.size(), 1u);
  EXPECT_EQ(sources[0].file, here + "/make_traces.py");
  EXPECT_NE(sources[0].text.find("class Breaky"), std::string::npos);
}

}  // namespace
}  // namespace tcprof::import

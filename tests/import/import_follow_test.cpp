// `tcprof import --follow`: a TORCH_TRACE folder written piece by piece from a real log, cut
// mid-line and mid-payload, while a TraceFollower polls it. After every piece the database holds
// exactly what a one-shot import of the records written so far holds (less what only the end of a
// log decides: a compile still open, a phase not yet ended); a follower killed halfway and
// started again reads the log anew without losing or doubling anything; and once the log is
// complete the database equals a one-shot import of it, row for row. The CLI follows a job whose
// process is alive, shows each line within the stated latency and ends by itself when it exits.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <thread>

#include "core/run_reader.h"
#include "importers/trace_follow.h"
#include "importers/trace_import.h"
#include "tests/test_support.h"

namespace tcprof::import {
namespace {

using tcprof::testing::query_db;
using tcprof::testing::TempDir;

const std::string kFixtures = TCPROF_TRACE_FIXTURES;
const std::string kBin = TCPROF_BIN;

// Ids are (run << 32) + n: the local part n is what two imports of the same records share.
constexpr const char* kLocal = " & 4294967295";

// Rows readers see, without run ids, row ids, pids or hosts. `partial`: leave out what only the
// end of a log decides (compiles still open, phases begun and not ended, the graph that waits
// for its code, the user's sources, the import counters and the run row's closing fields).
std::string dump(const std::string& db, bool partial) {
  auto q = [&](const std::string& sql) { return query_db(db, sql) + "--\n"; };
  const std::string L = kLocal;
  std::string out;
  out += q("SELECT id" + L + ", name, file, line FROM frames ORDER BY id");
  out += q("SELECT id" + L + ", frame_id" + L + ", compile_id, reason, start_ns, duration_ns, status, attempt FROM compiles " +
           (partial ? "WHERE status != 'incomplete' " : "") + "ORDER BY id");
  out += q("SELECT compile_id" + L + ", phase, start_ns, duration_ns FROM compile_phases " +
           (partial ? "WHERE phase NOT LIKE '% (unfinished)' " : "") + "ORDER BY id");
  out += q("SELECT compile_id" + L + ", type, break_id, op, reason, hint, file, line, source, stack_json FROM graph_breaks ORDER BY id");
  out += q("SELECT compile_id" + L + ", kind, expr, file, line FROM guards ORDER BY id");
  // A recompile and its guard failures are written with their compile.
  const std::string closed = partial ? "compile_id IN (SELECT id FROM compiles WHERE status != 'incomplete')" : "1";
  out += q("SELECT call_id" + L + ", compile_id" + L + ", guard_id" + L + ", expected, actual, message FROM guard_failures "
           "WHERE call_id IN (SELECT call_id FROM recompiles WHERE " + closed + ") ORDER BY id");
  out += q("SELECT frame_id" + L + ", compile_id" + L + ", reason, cache_size, call_id" + L + " FROM recompiles WHERE " +
           closed + " ORDER BY id");
  out += q("SELECT compile_id" + L + ", kind, op, message, file, line FROM perf_hints ORDER BY id");
  if (!partial) {
    out += q("SELECT id" + L + ", compile_id" + L + ", kind, op_count, fx_key, length(ir), length(code) FROM graphs ORDER BY id");
    out += q("SELECT file, sha256 FROM sources ORDER BY file");
    out += q("SELECT name, value FROM run_counters ORDER BY name");
    out += q("SELECT command, model_path, status, source, rank, world_size, libtorch_version, config_json, device, "
             "started_at, finished_at, last_event_at FROM runs ORDER BY id");
  }
  return out;
}

std::string one_shot(const std::string& log_text, const TempDir& dir, const std::string& name) {
  const std::string folder = dir.file(name);
  std::filesystem::create_directories(folder);
  // The same file name as the followed log: runs name the file they came from.
  std::ofstream(folder + "/log.log", std::ios::binary) << log_text;
  const std::string db = dir.file(name + ".db");
  ImportResult r = import_traces({{folder + "/log.log"}, {}, db});
  EXPECT_TRUE(r.errors.empty());
  return db;
}

std::string gunzip(const std::string& gz, const TempDir& dir) {
  return tcprof::testing::read_file(tcprof::testing::gunzip_into(gz, dir));
}

// Where each record starts: a line that is not a payload line (payload lines begin with a tab).
std::vector<size_t> record_starts(const std::string& text) {
  std::vector<size_t> out;
  for (size_t at = 0; at < text.size();) {
    if (text[at] != '\t') out.push_back(at);
    size_t nl = text.find('\n', at);
    at = nl == std::string::npos ? text.size() : nl + 1;
  }
  return out;
}

class ImportFollow : public ::testing::TestWithParam<const char*> {};

TEST_P(ImportFollow, GrowingLogEqualsOneShotImportAtEveryStep) {
  TempDir dir;
  const std::string text = gunzip(kFixtures + "/" + GetParam(), dir);
  const std::vector<size_t> starts = record_starts(text);
  ASSERT_GT(starts.size(), 20u);

  // The folder as the job writes it; the one-shot imports read copies named alike elsewhere.
  const std::string followed = dir.file("job");
  std::filesystem::create_directories(followed);
  const std::string log = followed + "/log.log";
  const std::string db = dir.file("follow.db");
  std::ofstream(log, std::ios::binary).flush();

  auto follower = std::make_unique<TraceFollower>(FollowRequest{followed, "", db});
  size_t written = 0;
  const int kSteps = 12;
  for (int step = 1; step <= kSteps; ++step) {
    // Up to a record boundary, then into the next record: half its first line, or into its payload.
    const size_t k = starts.size() * step / (kSteps + 1);
    const size_t boundary = starts[k];
    const size_t next_line = text.find('\n', boundary);
    const size_t cut = boundary + (next_line - boundary) / 2 + (step % 3 == 0 ? (next_line - boundary) / 2 + 2 : 0);
    {
      std::ofstream out(log, std::ios::binary | std::ios::app);
      out << text.substr(written, cut - written);
    }
    written = cut;
    follower->poll();
    follower->flush();
    // The records wholly written: those that end (newline included) at or before the cut.
    const size_t whole = *(std::upper_bound(starts.begin(), starts.end(), cut) - 1);
    SCOPED_TRACE("step " + std::to_string(step) + ": cut at byte " + std::to_string(cut));
    const std::string expected = one_shot(text.substr(0, whole), dir, "step" + std::to_string(step));
    EXPECT_EQ(dump(db, true), dump(expected, true));
    if (step == kSteps / 2) {
      // A follower killed without closing anything, then started again on the same database.
      follower.reset();
      follower = std::make_unique<TraceFollower>(FollowRequest{followed, "", db});
      follower->poll();
      follower->flush();
      EXPECT_EQ(dump(db, true), dump(expected, true));
    }
  }
  {
    std::ofstream out(log, std::ios::binary | std::ios::app);
    out << text.substr(written);
  }
  follower->poll();
  ImportResult r = follower->finish(false);
  EXPECT_TRUE(r.errors.empty());
  const std::string expected = one_shot(text, dir, "whole");
  std::string got = dump(db, false), want = dump(expected, false);
  got = tcprof::testing::replace_all(got, followed, "DIR");
  want = tcprof::testing::replace_all(want, dir.file("whole"), "DIR");
  EXPECT_EQ(got, want);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ImportFollow,
                         ::testing::Values("reset_torch2.6_cpu.log.gz", "killed_torch2.6_cpu.log.gz",
                                           "mlp_torch2.11_h100.log.gz"));

// tensorboard_trace_handler writes a trace per profiled step into its folder: a trace is taken once
// it is complete (its size held still between two polls and it ends its JSON object), once.
TEST(ImportFollowKineto, AProfilerTraceIsImportedOnceComplete) {
  TempDir dir;
  const std::string job = dir.file("job"), prof = dir.file("prof"), db = dir.file("k.db");
  std::filesystem::create_directories(job);
  std::filesystem::create_directories(prof);
  std::ofstream(job + "/log.log", std::ios::binary) << gunzip(kFixtures + "/kineto_torch2.6_cpu.log.gz", dir);
  const std::string trace = gunzip(kFixtures + "/kineto_trace_torch2.6_cpu.json.gz", dir);
  const std::string written = prof + "/host_4242.1790857026000.pt.trace.json";

  TraceFollower follower({job, prof, db});
  follower.poll();
  std::ofstream(written, std::ios::binary) << trace.substr(0, trace.size() / 2);
  follower.poll();
  follower.poll();  // the same size twice, but not a whole trace yet
  follower.flush();
  EXPECT_EQ(query_db(db, "SELECT count(*) FROM calls"), "0\n");
  std::ofstream(written, std::ios::binary | std::ios::app) << trace.substr(trace.size() / 2);
  follower.poll();  // grown: looked at again next time
  follower.poll();
  follower.poll();
  follower.flush();
  // The three compiled-region calls of the fixture (README), once however often it is polled.
  EXPECT_EQ(query_db(db, "SELECT count(*) FROM calls"), "3\n");
  ImportResult r = follower.finish(false);
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.notes.size(), 1u);

  ImportResult once = import_traces({{job + "/log.log"}, {written}, dir.file("once.db")});
  EXPECT_EQ(query_db(db, "SELECT compile_id & 4294967295, start_ns, duration_ns FROM calls ORDER BY start_ns"),
            query_db(once.db, "SELECT compile_id & 4294967295, start_ns, duration_ns FROM calls ORDER BY start_ns"));
}

// The log as if `pid` had written it: the glog prefix's third field is the writer's pid.
std::string written_by(const std::string& text, pid_t pid) {
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at < text.size();) {
    size_t nl = text.find('\n', at);
    size_t end = nl == std::string::npos ? text.size() : nl + 1;
    std::string line = text.substr(at, end - at);
    if (!line.empty() && line[0] != '\t') {
      size_t a = line.find(' '), b = line.find(' ', a + 1), c = line.find(' ', b + 1);
      if (c != std::string::npos) line = line.substr(0, b + 1) + std::to_string(pid) + line.substr(c);
    }
    out += line;
    at = end;
  }
  return out;
}

int64_t rows(const std::string& db, const std::string& sql) {
  try {
    return std::stoll(query_db(db, sql));
  } catch (const std::exception&) {
    return -1;  // not created yet
  }
}

// A stand-in for the training job: alive until killed.
pid_t start_job() {
  pid_t pid = fork();
  if (pid == 0) {
    execlp("sleep", "sleep", "120", static_cast<char*>(nullptr));
    _exit(127);
  }
  return pid;
}

std::string wait_for_file(const std::string& path, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    std::string text = tcprof::testing::read_file(path);
    if (!text.empty() && text.back() == '\n') return text;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return {};
}

TEST(ImportFollowCli, ShowsEachRecordWithinTwoSecondsAndEndsWhenTheJobExits) {
  TempDir dir;
  const pid_t job = start_job();
  const std::string text = written_by(gunzip(kFixtures + "/reset_torch2.6_cpu.log.gz", dir), job);
  const std::vector<size_t> starts = record_starts(text);
  const std::string folder = dir.file("trace"), db = dir.file("live.db");
  std::filesystem::create_directories(folder);
  const std::string log = folder + "/dedicated_log_torch_trace_abc.log";
  tcprof::testing::run_command("(" + kBin + " import --follow " + folder + " --db " + db + " > " + dir.file("out") +
                               " 2>&1; echo $? > " + dir.file("rc") + ") > /dev/null 2>&1 &");
  // Up to the end of the first dynamo_start record: a frame row once the follower has read and
  // committed it.
  const size_t first = text.find("{\"dynamo_start\"");
  ASSERT_NE(first, std::string::npos);
  const size_t first_end = *std::upper_bound(starts.begin(), starts.end(), first);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  auto t0 = std::chrono::steady_clock::now();
  std::ofstream(log, std::ios::binary) << text.substr(0, first_end);
  while (rows(db, "SELECT count(*) FROM frames") < 1 &&
         std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double latency_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::cout << "follow latency (write to committed row): " << latency_s * 1000 << " ms\n";
  RecordProperty("follow_latency_ms", static_cast<int>(latency_s * 1000));
  EXPECT_LT(latency_s, 2.0);
  EXPECT_EQ(query_db(db, "SELECT status FROM runs"), "running\n");

  // The rest, then the job exits: the follower reads to the end and stops by itself.
  std::ofstream(log, std::ios::binary | std::ios::app) << text.substr(first_end);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  kill(job, SIGKILL);
  waitpid(job, nullptr, 0);
  const std::string rc = wait_for_file(dir.file("rc"), 20);
  ASSERT_EQ(rc, "0\n") << tcprof::testing::read_file(dir.file("out"));
  // The log's two sessions (torch._dynamo.reset()), both finished, as a one-shot import gives.
  EXPECT_EQ(query_db(db, "SELECT status, world_size FROM runs ORDER BY id"), "finished|1\nfinished|1\n");
  EXPECT_EQ(query_db(db, "SELECT count(*) FROM compiles"), "3\n");
  EXPECT_NE(tcprof::testing::read_file(dir.file("out")).find("following " + folder), std::string::npos);
}

// Ctrl-C and SIGTERM take the same path (core/interrupt.h); a background job of a shell script
// ignores SIGINT, so the test sends SIGTERM.
TEST(ImportFollowCli, StoppedWhileTheJobRunsEndsTheRunInterrupted) {
  TempDir dir;
  const pid_t job = start_job();
  const std::string text = written_by(gunzip(kFixtures + "/reset_torch2.6_cpu.log.gz", dir), job);
  const std::string folder = dir.file("trace"), db = dir.file("live.db");
  std::filesystem::create_directories(folder);
  std::ofstream(folder + "/dedicated_log_torch_trace_abc.log", std::ios::binary) << text.substr(0, text.size() / 3);
  tcprof::testing::run_command("(" + kBin + " import --follow " + folder + " --db " + db + " > " + dir.file("out") +
                               " 2>&1 & echo $! > " + dir.file("pid") + "; wait $!; echo $? > " + dir.file("rc") + ") > /dev/null 2>&1 &");
  const std::string pid = wait_for_file(dir.file("pid"), 10);
  ASSERT_FALSE(pid.empty());
  for (int i = 0; i < 200 && rows(db, "SELECT count(*) FROM frames") < 1; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  kill(std::stoi(pid), SIGTERM);
  const std::string rc = wait_for_file(dir.file("rc"), 20);
  kill(job, SIGKILL);
  waitpid(job, nullptr, 0);
  EXPECT_EQ(rc, "143\n") << tcprof::testing::read_file(dir.file("out"));
  EXPECT_EQ(query_db(db, "SELECT status FROM runs ORDER BY id DESC LIMIT 1"), "interrupted\n");
}

TEST(ImportFollowCli, AFileInsteadOfAFolderIsAUsageError) {
  TempDir dir;
  auto r = tcprof::testing::run_command(kBin + " import --follow " + kFixtures + "/reset_torch2.6_cpu.log.gz", true);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.output.find("wants the job's TORCH_TRACE folder"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace tcprof::import

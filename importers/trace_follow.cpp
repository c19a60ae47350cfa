#include "importers/trace_follow.h"

#include <signal.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "core/error.h"
#include "core/run_reader.h"
#include "core/schema.h"
#include "core/sqlite_db.h"
#include "core/store_open.h"
#include "importers/kineto_importer.h"
#include "importers/trace_files.h"

namespace tcprof::import {
namespace {

namespace fs = std::filesystem;

bool ends_with(const std::string& s, const std::string& tail) {
  return s.size() >= tail.size() && s.compare(s.size() - tail.size(), tail.size(), tail) == 0;
}

// Runs an earlier import or follow made from `trace` (the same file): removed before reading it
// again from its first line.
void remove_earlier_imports(const std::string& db_path, const std::string& trace) {
  std::error_code ec;
  if (!fs::exists(db_path, ec)) return;
  auto db = open_store_for_writing(db_path);
  std::vector<int64_t> ids;
  auto st = db->prepare("SELECT id FROM runs WHERE source='torch_trace' AND model_path=?");
  st.bind(1, trace);
  while (st.step()) ids.push_back(st.int64(0));
  for (int64_t id : ids) delete_run(*db, id);
}

// tensorboard_trace_handler writes a trace in one go, but not atomically: a trace is complete
// when it ends with the closing brace of its JSON object (for .gz, after a clean gzip end).
bool kineto_complete(const std::string& path) {
  if (!ends_with(path, ".gz")) {  // plain JSON: its last bytes say it
    std::ifstream in(path, std::ios::binary | std::ios::ate);
    const std::streamoff size = in.tellg();
    if (size <= 0) return false;
    const std::streamoff tail = std::min<std::streamoff>(size, 4096);
    std::string bytes(static_cast<size_t>(tail), '\0');
    in.seekg(size - tail);
    in.read(bytes.data(), tail);
    const size_t last = bytes.find_last_not_of(" \t\r\n");
    return in.good() && last != std::string::npos && bytes[last] == '}';
  }
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) return false;
  char buf[1 << 16];
  char last = 0;
  int n = 0;
  while ((n = gzread(gz, buf, sizeof buf)) > 0) {
    for (int i = n - 1; i >= 0; --i) {
      if (!std::isspace(static_cast<unsigned char>(buf[i]))) {
        last = buf[i];
        break;
      }
    }
  }
  int code = Z_OK;
  gzerror(gz, &code);
  gzclose(gz);
  return n == 0 && code == Z_OK && last == '}';
}

// "<host>_<pid>.<time>.pt.trace.json": the pid of the worker, when the default worker name.
int64_t kineto_pid(const std::string& name) {
  static const std::regex pid_re(R"(_(\d+)\.\d+\.pt\.trace\.json)");
  std::smatch m;
  return std::regex_search(name, m, pid_re) ? std::stoll(m[1]) : 0;
}

// A process that exited but was not reaped yet (a zombie) has ended too.
bool process_alive(int64_t pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text;
  std::getline(stat, text);
  const size_t name_end = text.rfind(')');
  return !(name_end != std::string::npos && name_end + 2 < text.size() && text[name_end + 2] == 'Z');
}

}  // namespace

struct TraceFollower::Log {
  std::string path;
  int rank = -1;
  std::unique_ptr<TraceLineReader> reader;
  std::unique_ptr<TorchTraceImporter> importer;
  FieldErrors bad;
  std::set<int64_t> pids;
};

TraceFollower::TraceFollower(FollowRequest request) : request_(std::move(request)) {}

TraceFollower::~TraceFollower() = default;

void TraceFollower::discover_logs() {
  std::error_code ec;
  if (!fs::is_directory(request_.dir, ec)) return;
  std::vector<TraceFile> found;
  for (const auto& entry : fs::directory_iterator(request_.dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file(ec) && is_log_name(name) && known_logs_.count(entry.path().string()) == 0) {
      found.push_back({entry.path().string(), rank_from_name(name)});
    }
  }
  std::sort(found.begin(), found.end(), [](const TraceFile& a, const TraceFile& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.path < b.path;
  });
  for (const auto& file : found) {
    known_logs_.insert(file.path);
    remove_earlier_imports(request_.db, file.path);
    auto log = std::make_unique<Log>();
    log->path = file.path;
    log->rank = file.rank;
    log->reader = std::make_unique<TraceLineReader>(file.path);
    log->reader->set_follow(true);
    log->importer = std::make_unique<TorchTraceImporter>(request_.db, file.path, file.rank, 1);
    logs_.push_back(std::move(log));
  }
  // The world size is the number of ranks seen so far; finish() gives every run the final count.
  const int ranked = static_cast<int>(std::count_if(logs_.begin(), logs_.end(), [](const auto& l) { return l->rank >= 0; }));
  for (auto& log : logs_) log->importer->set_world_size(std::max(1, ranked));
}

TraceFollower::Log* TraceFollower::log_for_kineto(const std::string& path) {
  if (logs_.empty()) return nullptr;
  if (logs_.size() == 1) return logs_.front().get();
  const int64_t pid = kineto_pid(fs::path(path).filename().string());
  for (auto& log : logs_) {
    if (pid != 0 && log->pids.count(pid) > 0) return log.get();
  }
  return nullptr;
}

void TraceFollower::import_kineto_trace(Log& log, const std::string& path) {
  kineto_done_.insert(path);
  KinetoTarget target = log.importer->kineto_target();
  try {
    notes_.push_back(kineto_note(path, import_kineto(path, target)));
  } catch (const Error& e) {
    errors_.push_back(e.what());
  }
}

void TraceFollower::discover_kineto() {
  std::error_code ec;
  if (request_.kineto_dir.empty() || !fs::is_directory(request_.kineto_dir, ec)) return;
  std::vector<std::string> ready;
  for (const auto& entry : fs::directory_iterator(request_.kineto_dir, ec)) {
    const std::string path = entry.path().string();
    if (!entry.is_regular_file(ec) || kineto_done_.count(path) > 0) continue;
    if (!ends_with(path, ".json") && !ends_with(path, ".json.gz")) continue;
    const auto size = static_cast<int64_t>(entry.file_size(ec));
    KinetoFile& file = kineto_files_[path];
    if (file.size != size) {  // new or still growing: look again next poll
      file = KinetoFile{size, KinetoFile::Growing};
      continue;
    }
    // Read once per size: a trace left half-written is not read again at every poll.
    if (file.state == KinetoFile::Growing) file.state = kineto_complete(path) ? KinetoFile::Whole : KinetoFile::Cut;
    if (file.state == KinetoFile::Whole) ready.push_back(path);
  }
  std::sort(ready.begin(), ready.end());  // the handler's names carry the time: oldest first
  for (const auto& path : ready) {
    Log* log = log_for_kineto(path);
    if (log == nullptr) continue;  // its rank's log has not appeared yet
    import_kineto_trace(*log, path);
    ++records_;
  }
}

int64_t TraceFollower::poll() {
  const int64_t before = records_;
  discover_logs();
  for (auto& log : logs_) {
    const int64_t fresh = feed_records(*log->reader, *log->importer, log->bad);
    records_ += fresh;
    // A log is written by one process; its pid says when the job has ended.
    if (log->reader->records() > 0) log->pids.insert(log->reader->last_pid());
    if (fresh > 0) log->importer->update_run_row();
  }
  discover_kineto();
  return records_ - before;
}

void TraceFollower::flush() {
  for (auto& log : logs_) log->importer->flush();
}

bool TraceFollower::job_ended() const {
  bool seen = false;
  for (const auto& log : logs_) {
    for (int64_t pid : log->pids) {
      seen = true;
      if (pid > 0 && process_alive(pid)) return false;
    }
  }
  return seen;
}

ImportResult TraceFollower::finish(bool job_still_running) {
  ImportResult result;
  result.db = request_.db;
  poll();
  // Traces that were still being written, or whose log never came, are read as they are now.
  for (auto& [path, file] : kineto_files_) {
    if (kineto_done_.count(path) > 0) continue;
    Log* log = log_for_kineto(path);
    if (log == nullptr && !logs_.empty()) log = logs_.front().get();
    if (log != nullptr) import_kineto_trace(*log, path);
  }
  for (auto& log : logs_) {
    log->reader->set_follow(false);  // the end is final now: a half-written last line is damage
    records_ += feed_records(*log->reader, *log->importer, log->bad);
    const TraceDamage damage = with_field_errors(log->reader->damage(), log->bad);
    for (auto& w : log_warnings(log->path, damage, *log->importer)) result.warnings.push_back(std::move(w));
    if (job_still_running) log->importer->stop_early();
    auto runs = log->importer->finish(damage, unknown_records(*log->importer));
    result.runs.insert(result.runs.end(), runs.begin(), runs.end());
  }
  result.notes = notes_;
  result.errors = errors_;
  return result;
}

}  // namespace tcprof::import

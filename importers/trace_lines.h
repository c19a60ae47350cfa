// Reading a TORCH_TRACE log record by record. A record is one line of glog prefix and JSON
// envelope, e.g.
//   V1122 22:22:06.647000 448 torch/_dynamo/convert_frame.py:276] {"dynamo_start": {...}, ...}
// followed, when the envelope has `has_payload` (an MD5), by payload lines each indented with one
// tab. The reader streams: it holds one record at a time, so memory is bounded by the largest
// payload, never the file. Damage (a line that is not glog + JSON, a payload whose MD5 does not
// match, a record cut by the end of the file) is counted and skipped; the next record is read as
// usual, so a file cut at any byte loses at most the record it was cut in.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace tcprof::import {

struct TraceRecord {
  nlohmann::json envelope;  // the JSON object after the glog prefix
  std::string payload;      // payload lines, tab stripped, joined with '\n'; empty when none
  bool has_payload = false;
  int64_t line = 0;         // 1-based line of the envelope in the file
  int64_t pid = 0;          // from the glog prefix: the string table is per process
};

struct TraceDamage {
  int64_t not_glog = 0;        // a line without the glog prefix (and not a payload line)
  int64_t bad_json = 0;        // the prefix is there, the envelope is not a JSON object
  int64_t bad_md5 = 0;         // payload digest mismatch (also: a payload cut short)
  int64_t stray_payload = 0;   // payload lines with no envelope before them
  int64_t bad_fields = 0;      // intact JSON whose fields have the wrong types ("name": 3): skipped
  bool cut_at_end = false;     // the file ends inside a record (no final newline)
  bool gzip_cut = false;       // a .gz stream that ends before its trailer
  std::string first_problem;   // "line 12: ..." for the message
  int64_t damaged() const { return not_glog + bad_json + bad_md5 + stray_payload + bad_fields + (cut_at_end ? 1 : 0); }
};

class TraceLineReader {
 public:
  // Opens `path`, plain or gzip (zlib reads both). Throws Error(Input) when it cannot be opened.
  explicit TraceLineReader(const std::string& path);
  ~TraceLineReader();
  TraceLineReader(const TraceLineReader&) = delete;
  TraceLineReader& operator=(const TraceLineReader&) = delete;

  // The next intact record; false at the end of the file.
  bool next(TraceRecord& record);

  // Follow mode (`import --follow`): the file is still being written. At its current end, next()
  // returns false without judging what is there: a last line without its newline waits for the
  // rest, and a record waits for more payload unless its payload already matches its MD5. A
  // later next() reads what was appended since. Turning it off treats the end as final again.
  void set_follow(bool on);

  const TraceDamage& damage() const { return damage_; }
  int64_t records() const { return records_; }
  int64_t last_pid() const { return last_pid_; }  // the glog prefix's pid of the last record
  uint64_t bytes_read() const { return bytes_; }  // uncompressed
  // How far into the file as stored (compressed bytes for .gz): progress against its size.
  uint64_t file_offset() const;
  const std::string& path() const { return path_; }

 private:
  bool read_line(std::string& line, bool& complete);  // false at the end of the input
  bool fill();
  void note(const std::string& what);
  // Parses an envelope line into `pending_`; false when it is not glog + JSON (counted).
  bool parse_envelope(const std::string& line, int64_t number);
  bool finish_pending(TraceRecord& out);

  std::string path_;
  void* gz_ = nullptr;  // gzFile
  std::string buffer_;
  size_t pos_ = 0;
  bool eof_ = false;
  bool follow_ = false;
  uint64_t bytes_ = 0;
  int64_t line_no_ = 0;
  int64_t records_ = 0;
  int64_t last_pid_ = 0;
  TraceDamage damage_;

  // The record being assembled: its envelope has been read, payload lines may follow.
  bool have_pending_ = false;
  bool pending_cut_ = false;
  TraceRecord pending_;
  std::string expected_md5_;
  bool first_payload_line_ = true;
  bool skip_payload_ = false;  // the envelope before was damaged: its payload goes with it
  std::string line_;
};

}  // namespace tcprof::import

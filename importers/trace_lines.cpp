#include "importers/trace_lines.h"

#include <zlib.h>

#include <cstring>

#include <fmt/format.h>

#include "core/error.h"
#include "core/md5.h"

namespace tcprof::import {
namespace {

constexpr size_t kChunk = size_t{1} << 20;

// glog: a severity letter, MMDD, time, thread or process id, source file:line, "] ".
// Returns the offset of the JSON after "] ", or npos when the line is not glog.
size_t glog_json_offset(const std::string& line, int64_t& pid) {
  if (line.size() < 8 || std::strchr("VIWEF", line[0]) == nullptr || line[0] == '\0') return std::string::npos;
  for (int i = 1; i <= 4; ++i) {
    if (line[i] < '0' || line[i] > '9') return std::string::npos;
  }
  // The prefix is short; a "] " far into the line belongs to the JSON, not the prefix.
  size_t close = line.find("] ", 5);
  if (close == std::string::npos || close > 512) return std::string::npos;
  size_t second_space = line.find(' ', line.find(' ') + 1);
  if (second_space != std::string::npos && second_space < close) {
    pid = std::strtoll(line.c_str() + second_space + 1, nullptr, 10);
  }
  return close + 2;
}

}  // namespace

TraceLineReader::TraceLineReader(const std::string& path) : path_(path) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) {
    throw Error(ErrorKind::Input, fmt::format("cannot open '{}': {}", path, std::strerror(errno)));
  }
  gzbuffer(gz, 256 * 1024);
  gz_ = gz;
}

TraceLineReader::~TraceLineReader() {
  if (gz_ != nullptr) gzclose(static_cast<gzFile>(gz_));
}

void TraceLineReader::note(const std::string& what) {
  if (damage_.first_problem.empty()) damage_.first_problem = what;
}

uint64_t TraceLineReader::file_offset() const {
  if (gz_ == nullptr) return 0;
  const z_off_t at = gzoffset(static_cast<gzFile>(gz_));
  return at < 0 ? 0 : static_cast<uint64_t>(at);
}

void TraceLineReader::set_follow(bool on) {
  follow_ = on;
  if (on) eof_ = false;
}

bool TraceLineReader::fill() {
  if (eof_) return false;
  if (pos_ > 0) {
    buffer_.erase(0, pos_);
    pos_ = 0;
  }
  size_t old = buffer_.size();
  buffer_.resize(old + kChunk);
  int n = gzread(static_cast<gzFile>(gz_), buffer_.data() + old, static_cast<unsigned>(kChunk));
  if (n == 0 && follow_) {
    // Only the current end: clear zlib's end-of-file state so the next read sees appended bytes.
    buffer_.resize(old);
    gzclearerr(static_cast<gzFile>(gz_));
    return false;
  }
  if (n <= 0) {
    buffer_.resize(old);
    eof_ = true;
    if (n < 0) {
      int code = 0;
      const char* message = gzerror(static_cast<gzFile>(gz_), &code);
      damage_.gzip_cut = true;
      note(fmt::format("after {} bytes: the compressed stream is damaged or cut short ({})", bytes_,
                       message != nullptr ? message : "zlib error"));
    } else if (!gzdirect(static_cast<gzFile>(gz_))) {
      // A clean end of a .gz file has been checked by zlib (trailer CRC and length); a cut one
      // returns 0 with Z_BUF_ERROR on some zlib versions instead of -1.
      int code = 0;
      gzerror(static_cast<gzFile>(gz_), &code);
      if (code == Z_BUF_ERROR || code == Z_DATA_ERROR) {
        damage_.gzip_cut = true;
        note(fmt::format("after {} bytes: the compressed stream ends before its end (gzip cut short)", bytes_));
      }
    }
    return false;
  }
  buffer_.resize(old + static_cast<size_t>(n));
  bytes_ += static_cast<uint64_t>(n);
  return true;
}

bool TraceLineReader::read_line(std::string& line, bool& complete) {
  for (;;) {
    size_t nl = buffer_.find('\n', pos_);
    if (nl != std::string::npos) {
      line.assign(buffer_, pos_, nl - pos_);
      pos_ = nl + 1;
      complete = true;
      ++line_no_;
      return true;
    }
    if (!fill()) {
      if (pos_ >= buffer_.size()) return false;
      if (follow_) return false;  // the rest of this line is still to be written
      line.assign(buffer_, pos_, std::string::npos);
      pos_ = buffer_.size();
      complete = false;
      ++line_no_;
      return true;
    }
  }
}

bool TraceLineReader::parse_envelope(const std::string& line, int64_t number) {
  int64_t pid = 0;
  size_t at = glog_json_offset(line, pid);
  if (at == std::string::npos) {
    ++damage_.not_glog;
    note(fmt::format("line {}: not a glog line with a JSON record: '{}'", number, line.substr(0, 60)));
    return false;
  }
  nlohmann::json envelope = nlohmann::json::parse(line.begin() + static_cast<std::ptrdiff_t>(at), line.end(),
                                                  nullptr, false);
  if (envelope.is_discarded() || !envelope.is_object()) {
    ++damage_.bad_json;
    note(fmt::format("line {}: the record after the glog prefix is not a JSON object", number));
    return false;
  }
  pending_ = TraceRecord{};
  pending_.line = number;
  pending_.pid = pid;
  auto digest = envelope.find("has_payload");
  pending_.has_payload = digest != envelope.end() && digest->is_string();
  expected_md5_ = pending_.has_payload ? digest->get<std::string>() : std::string();
  pending_.envelope = std::move(envelope);
  have_pending_ = true;
  pending_cut_ = false;
  first_payload_line_ = true;
  return true;
}

bool TraceLineReader::finish_pending(TraceRecord& out) {
  have_pending_ = false;
  if (pending_cut_) {
    damage_.cut_at_end = true;
    note(fmt::format("line {}: the file ends inside this record (cut short); it was dropped", pending_.line));
    return false;
  }
  if (pending_.has_payload && md5_hex(pending_.payload) != expected_md5_) {
    ++damage_.bad_md5;
    note(fmt::format("line {}: the payload does not match its MD5 (has_payload); the record was dropped",
                     pending_.line));
    return false;
  }
  ++records_;
  last_pid_ = pending_.pid;
  out = std::move(pending_);
  return true;
}

bool TraceLineReader::next(TraceRecord& out) {
  bool in_stray = false;
  for (;;) {
    bool complete = true;
    if (!read_line(line_, complete)) {
      if (follow_) {
        // A record is whole once its payload matches its MD5 (or it has none); otherwise the
        // writer is still in the middle of it.
        if (have_pending_ && (!pending_.has_payload || md5_hex(pending_.payload) == expected_md5_)) {
          if (finish_pending(out)) return true;
        }
        return false;
      }
      if (have_pending_) {
        if (finish_pending(out)) return true;
        continue;  // read_line keeps returning false: the loop ends above next time
      }
      return false;
    }
    if (!line_.empty() && line_[0] == '\t') {
      if (have_pending_ && pending_.has_payload) {
        if (!first_payload_line_) pending_.payload += '\n';
        pending_.payload.append(line_, 1, std::string::npos);
        first_payload_line_ = false;
        if (!complete) pending_cut_ = true;
      } else if (!in_stray) {
        // Payload lines nobody announced: a record without has_payload, or after a damaged
        // envelope (already counted: its payload is part of the same damaged record).
        in_stray = true;
        if (!have_pending_ && !skip_payload_) {
          ++damage_.stray_payload;
          note(fmt::format("line {}: payload lines without a record before them", line_no_));
        }
      }
      continue;
    }
    in_stray = false;
    TraceRecord done;
    bool have_done = have_pending_ && finish_pending(done);
    if (line_.empty()) {
      // blank lines carry nothing
    } else if (!complete) {
      damage_.cut_at_end = true;
      skip_payload_ = true;
      note(fmt::format("line {}: the file ends inside this line (cut short); it was dropped", line_no_));
    } else {
      skip_payload_ = !parse_envelope(line_, line_no_);
    }
    if (have_done) {
      out = std::move(done);
      return true;
    }
  }
  return false;
}

}  // namespace tcprof::import

// A one-line progress bar on stderr, drawn only when stderr is a terminal (never in CI logs).
#pragma once
#include <cstdint>
#include <string>

namespace tcprof::cli {

class ProgressBar {
 public:
  ProgressBar(std::string label, int64_t total);
  ~ProgressBar();
  void update(int64_t done, const std::string& status = {});
  void finish();

 private:
  std::string label_;
  int64_t total_;
  bool enabled_;
  int64_t last_draw_ns_ = 0;
  bool finished_ = false;
};

}  // namespace tcprof::cli

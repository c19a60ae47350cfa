#include "cli/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

#include "core/clock.h"

namespace tcprof::cli {

ProgressBar::ProgressBar(std::string label, int64_t total)
    : label_(std::move(label)), total_(total), enabled_(isatty(STDERR_FILENO) == 1) {}

ProgressBar::~ProgressBar() { finish(); }

void ProgressBar::update(int64_t done, const std::string& status) {
  if (!enabled_ || finished_) return;
  int64_t now = now_ns();
  if (done < total_ && now - last_draw_ns_ < 50'000'000) return;  // at most 20 redraws a second
  last_draw_ns_ = now;
  constexpr int kWidth = 30;
  int filled = total_ > 0 ? static_cast<int>(kWidth * done / total_) : kWidth;
  std::string bar(static_cast<size_t>(filled), '#');
  bar.resize(kWidth, '.');
  std::string line = fmt::format("{} [{}] {}/{} {}", label_, bar, done, total_, status);
  if (line.size() > 79) line.resize(79);
  std::fprintf(stderr, "\r%-79s", line.c_str());
  std::fflush(stderr);
}

void ProgressBar::finish() {
  if (!enabled_ || finished_) return;
  finished_ = true;
  std::fprintf(stderr, "\r%79s\r", "");
  std::fflush(stderr);
}

}  // namespace tcprof::cli

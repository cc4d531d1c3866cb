#pragma once
// The sweep's progress report: done/total, points per second and time left. On a terminal one
// line is redrawn in place; otherwise (CI logs, files) a plain line is printed at each tenth of
// the sweep, so logs stay short.
#include <chrono>
#include <cstdio>
#include <string>

namespace railcheck::sweep {

struct ProgressState {
  std::size_t done = 0;
  std::size_t total = 0;
  double elapsed_s = 0;
};

// "12/40 points | 3.1 points/s | ETA 9 s"
std::string progress_line(const ProgressState& p);

class ProgressReporter {
 public:
  ProgressReporter(std::FILE* out, std::size_t total);
  void point_done();
  void finish();

 private:
  std::FILE* out_;
  bool terminal_;
  ProgressState state_;
  std::size_t last_tenth_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace railcheck::sweep

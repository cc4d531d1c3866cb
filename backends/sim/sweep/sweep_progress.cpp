#include "backends/sim/sweep/sweep_progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cmath>

namespace railcheck::sweep {
namespace {

std::string format_seconds(double s) {
  const auto whole = static_cast<long>(std::ceil(s));
  if (whole < 60) return fmt::format("{} s", whole);
  if (whole < 3600) return fmt::format("{}m{:02}s", whole / 60, whole % 60);
  return fmt::format("{}h{:02}m", whole / 3600, (whole % 3600) / 60);
}

}  // namespace

std::string progress_line(const ProgressState& p) {
  std::string line = fmt::format("{}/{} points", p.done, p.total);
  if (p.done == 0 || p.elapsed_s <= 0) return line;
  const double rate = static_cast<double>(p.done) / p.elapsed_s;
  line += fmt::format(" | {:.2f} points/s", rate);
  if (p.done < p.total)
    line += " | ETA " + format_seconds(static_cast<double>(p.total - p.done) / rate);
  else
    line += " | took " + format_seconds(p.elapsed_s);
  return line;
}

ProgressReporter::ProgressReporter(std::FILE* out, std::size_t total)
    : out_(out), terminal_(isatty(fileno(out)) != 0), state_{0, total, 0} {}

void ProgressReporter::point_done() {
  ++state_.done;
  state_.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  if (terminal_) {
    fmt::print(out_, "\r\033[Ksweep: {}", progress_line(state_));
    std::fflush(out_);
    return;
  }
  const std::size_t tenth = state_.total == 0 ? 10 : state_.done * 10 / state_.total;
  if (tenth != last_tenth_ || state_.done == state_.total) {
    last_tenth_ = tenth;
    fmt::print(out_, "sweep: {}\n", progress_line(state_));
  }
}

void ProgressReporter::finish() {
  if (terminal_ && state_.done > 0) fmt::print(out_, "\n");
}

}  // namespace railcheck::sweep

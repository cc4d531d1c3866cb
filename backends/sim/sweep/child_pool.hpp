#pragma once
// Runs commands as child processes, at most `jobs` at a time, and reports each one's exit.
// Each child gets its own process, so SimGrid's once-per-process configuration holds.
#include <functional>
#include <string>
#include <vector>

#include "engine/core/result.hpp"

namespace railcheck::sweep {

struct ChildJob {
  std::vector<std::string> argv;
  std::string log_path;  // the child's stdout and stderr; empty: the parent's
};

// exit_code: the child's exit status, or 128 + signal when a signal ended it.
using ChildDone = std::function<void(std::size_t job, int exit_code)>;

// Returns an error only when a child cannot be started at all (missing runner, no processes
// left); children that start and fail are reported through `done`.
Result<bool> run_children(const std::vector<ChildJob>& jobs, unsigned parallel, const ChildDone& done);

}  // namespace railcheck::sweep

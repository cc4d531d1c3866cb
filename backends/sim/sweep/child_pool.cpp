#include "backends/sim/sweep/child_pool.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <spawn.h>
#include <sys/wait.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <optional>

extern char** environ;

namespace railcheck::sweep {
namespace {

Result<pid_t> spawn(const ChildJob& job) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  if (!job.log_path.empty()) {
    posix_spawn_file_actions_addopen(&fa, STDOUT_FILENO, job.log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, STDOUT_FILENO, STDERR_FILENO);
  }
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv;
  for (const std::string& a : job.argv) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return Error{fmt::format("cannot start {}: {}", job.argv[0], std::strerror(rc)), {}};
  return pid;
}

}  // namespace

Result<bool> run_children(const std::vector<ChildJob>& jobs, unsigned parallel, const ChildDone& done) {
  parallel = std::max(parallel, 1U);
  std::map<pid_t, std::size_t> running;
  std::size_t next = 0;
  std::optional<Error> failed;
  while (next < jobs.size() || !running.empty()) {
    while (!failed && next < jobs.size() && running.size() < parallel) {
      auto pid = spawn(jobs[next]);
      if (!pid) {
        failed = pid.error();
        break;
      }
      running.emplace(pid.value(), next++);
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      return Error{fmt::format("waiting for sweep children: {}", std::strerror(errno)), {}};
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;  // not one of ours
    const std::size_t job = it->second;
    running.erase(it);
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    done(job, code);
  }
  if (failed) return *failed;
  return true;
}

}  // namespace railcheck::sweep

#pragma once
// Forked children for the netns lab: anything that enters a namespace or changes its scheduling
// runs in one, so the calling process never moves. A child can never hang (alarm) and never
// returns into its parent's code (it _exits with the body's code).
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <functional>
#include <string>

namespace railcheck::conform {

// Runs `body` in a forked child killed by SIGALRM after `alarm_s` seconds; returns its pid.
inline pid_t fork_child(const std::function<int()>& body, unsigned alarm_s = 20) {
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid != 0) return pid;
  alarm(alarm_s);
  int code = 98;
  try {
    code = body();
  } catch (...) {
    std::fprintf(stderr, "child: exception\n");
  }
  std::fflush(nullptr);
  _exit(code);
}

// The child's exit code, or 128 + the signal that ended it; -1 if it cannot be waited for.
inline int wait_child(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return -1;
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

inline int run_in_child(const std::function<int()>& body) { return wait_child(fork_child(body)); }

// A child's way to fail: one line on stderr, the code as its exit status.
inline int fail_with(int code, const std::string& why) {
  std::fprintf(stderr, "child: %s\n", why.c_str());
  return code;
}

}  // namespace railcheck::conform

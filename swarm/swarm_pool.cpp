#include "swarm/swarm_pool.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

namespace railcheck::swarm {
namespace {

using Clock = std::chrono::steady_clock;

// One seed as one line: numbers separated by spaces, then a tab and the finding's text.
std::string encode(const SeedResult& r) {
  const Finding f = r.finding.value_or(Finding{});
  return fmt::format("{} {} {} {} {} {} {} {} {} {} {} {} {} {} {}\t{}\n", r.seed, r.enabled, r.drawn, r.phases,
                     r.triggers, r.connection_failed ? 1 : 0, r.ranks, r.digest, r.batches, r.sim_end.count(),
                     static_cast<std::uint64_t>(r.wall_s * 1e6), r.finding ? 1 : 0, static_cast<unsigned>(f.kind),
                     f.at.count(), f.conn, f.detail);
}

std::optional<SeedResult> decode(const std::string& line) {
  const auto tab = line.find('\t');
  if (tab == std::string::npos) return std::nullopt;
  std::istringstream in(line.substr(0, tab));
  SeedResult r;
  unsigned failed = 0, has = 0, kind = 0;
  std::uint64_t wall_us = 0;
  std::int64_t end = 0, at = 0;
  Finding f;
  in >> r.seed >> r.enabled >> r.drawn >> r.phases >> r.triggers >> failed >> r.ranks >> r.digest >> r.batches >> end >>
      wall_us >> has >> kind >> at >> f.conn;
  if (!in) return std::nullopt;
  r.connection_failed = failed != 0;
  r.sim_end = Nanos{end};
  r.wall_s = static_cast<double>(wall_us) * 1e-6;
  if (has != 0) {
    f.kind = static_cast<FindingKind>(kind);
    f.at = Nanos{at};
    f.detail = line.substr(tab + 1);
    r.finding = f;
  }
  return r;
}

[[noreturn]] void worker(unsigned k, const PoolPlan& plan, const SwarmConfig& cfg, int fd, Clock::time_point deadline) {
  for (std::uint64_t i = 0;; ++i) {
    const std::uint64_t index = k + i * plan.jobs;
    if (plan.seeds && index >= *plan.seeds) break;
    if (plan.seconds && Clock::now() >= deadline) break;
    const std::string line = encode(run_seed(plan.first_seed + index, cfg));
    for (std::size_t off = 0; off < line.size();) {
      const ssize_t n = write(fd, line.data() + off, line.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) _exit(3);
      off += static_cast<std::size_t>(n);
    }
  }
  _exit(0);
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
  std::uint64_t next_index = 0;  // index of the seed it runs now
};

}  // namespace

Result<bool> run_pool(const PoolPlan& plan, const SwarmConfig& cfg,
                      const std::function<void(const SeedResult&)>& on_result, const std::function<void()>& on_tick) {
  const unsigned jobs = std::max(1U, plan.jobs);
  PoolPlan p = plan;
  p.jobs = jobs;
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(plan.seconds.value_or(0)));
  std::fflush(stdout);
  std::fflush(stderr);
  std::vector<Worker> workers(jobs);
  for (unsigned k = 0; k < jobs; ++k) {
    int fds[2];
    if (pipe(fds) != 0) return Error{fmt::format("pipe: {}", std::strerror(errno)), "too many open files?"};
    const pid_t pid = fork();
    if (pid < 0) return Error{fmt::format("fork: {}", std::strerror(errno)), "fewer jobs (-j)"};
    if (pid == 0) {
      close(fds[0]);
      for (unsigned j = 0; j < k; ++j) close(workers[j].fd);
      worker(k, p, cfg, fds[1], deadline);
    }
    close(fds[1]);
    workers[k] = Worker{pid, fds[0], {}, k};
  }

  std::size_t open = jobs;
  while (open > 0) {
    std::vector<pollfd> fds;
    std::vector<std::size_t> who;
    for (std::size_t k = 0; k < workers.size(); ++k) {
      if (workers[k].fd < 0) continue;
      fds.push_back(pollfd{workers[k].fd, POLLIN, 0});
      who.push_back(k);
    }
    const int ready = poll(fds.data(), fds.size(), 500);
    if (on_tick) on_tick();
    if (ready < 0 && errno != EINTR) return Error{fmt::format("poll: {}", std::strerror(errno)), ""};
    for (std::size_t i = 0; i < fds.size() && ready > 0; ++i) {
      if (fds[i].revents == 0) continue;
      Worker& w = workers[who[i]];
      char chunk[4096];
      const ssize_t n = read(w.fd, chunk, sizeof chunk);
      if (n > 0) {
        w.buffer.append(chunk, static_cast<std::size_t>(n));
        for (auto nl = w.buffer.find('\n'); nl != std::string::npos; nl = w.buffer.find('\n')) {
          if (auto r = decode(w.buffer.substr(0, nl))) {
            w.next_index = r->seed - p.first_seed + jobs;
            on_result(*r);
          }
          w.buffer.erase(0, nl + 1);
        }
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      close(w.fd);
      w.fd = -1;
      --open;
      int status = 0;
      while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
      }
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) continue;
      // The worker died inside a seed: that seed is the finding.
      SeedResult r;
      r.seed = p.first_seed + w.next_index;
      r.finding = Finding{FindingKind::Crash, Nanos{0}, 0,
                          WIFSIGNALED(status) ? fmt::format("the run crashed (signal {}: {})", WTERMSIG(status),
                                                            strsignal(WTERMSIG(status)))
                                              : fmt::format("the worker exited with status {}", WEXITSTATUS(status))};
      on_result(r);
    }
  }
  return true;
}

}  // namespace railcheck::swarm

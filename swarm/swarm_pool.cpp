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

// Exit status of a worker that ran its `seeds_per_process` seeds while its lane has more.
constexpr int kBatchDone = 10;

// Runs lane seeds from `index` on (every `jobs`-th) in this process, at most
// `seeds_per_process` of them.
[[noreturn]] void worker(std::uint64_t index, const PoolPlan& plan, const SwarmConfig& cfg, int fd,
                         Clock::time_point deadline) {
  for (unsigned ran = 0;; ++ran, index += plan.jobs) {
    if (plan.seeds && index >= *plan.seeds) _exit(0);
    if (plan.seconds && Clock::now() >= deadline) _exit(0);
    if (ran == plan.seeds_per_process) _exit(kBatchDone);
    const std::string line = encode(run_seed(seed_at(plan, index), cfg));
    for (std::size_t off = 0; off < line.size();) {
      const ssize_t n = write(fd, line.data() + off, line.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) _exit(3);
      off += static_cast<std::size_t>(n);
    }
  }
}

struct Worker {
  pid_t pid = -1;
  int fd = -1;
  std::string buffer;
  std::uint64_t next_index = 0;  // index of the seed it runs now
};

// Forks lane k's next worker, from seed index `index` on.
Result<bool> spawn(std::vector<Worker>& workers, std::size_t k, std::uint64_t index, const PoolPlan& plan,
                   const SwarmConfig& cfg, Clock::time_point deadline) {
  int fds[2];
  if (pipe(fds) != 0) return Error{fmt::format("pipe: {}", std::strerror(errno)), "too many open files?"};
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = fork();
  if (pid < 0) return Error{fmt::format("fork: {}", std::strerror(errno)), "fewer jobs (-j)"};
  if (pid == 0) {
    close(fds[0]);
    for (const Worker& w : workers)
      if (w.fd >= 0) close(w.fd);
    worker(index, plan, cfg, fds[1], deadline);
  }
  close(fds[1]);
  workers[k] = Worker{pid, fds[0], {}, index};
  return true;
}

}  // namespace

Result<bool> run_pool(const PoolPlan& plan, const SwarmConfig& cfg,
                      const std::function<void(const SeedResult&)>& on_result, const std::function<void()>& on_tick) {
  const unsigned jobs = std::max(1U, plan.jobs);
  PoolPlan p = plan;
  p.jobs = jobs;
  p.stride = std::max<std::uint64_t>(1, plan.stride);
  p.seeds_per_process = std::max(1U, plan.seeds_per_process);
  const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(plan.seconds.value_or(0)));
  std::vector<Worker> workers(jobs);
  for (unsigned k = 0; k < jobs; ++k) {
    auto ok = spawn(workers, k, k, p, cfg, deadline);
    if (!ok) return ok;
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
      const std::size_t k = who[i];
      Worker& w = workers[k];
      char chunk[4096];
      const ssize_t n = read(w.fd, chunk, sizeof chunk);
      if (n > 0) {
        w.buffer.append(chunk, static_cast<std::size_t>(n));
        for (auto nl = w.buffer.find('\n'); nl != std::string::npos; nl = w.buffer.find('\n')) {
          if (auto r = decode(w.buffer.substr(0, nl))) {
            w.next_index = (r->seed - p.first_seed) / p.stride + jobs;
            on_result(*r);
          }
          w.buffer.erase(0, nl + 1);
        }
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      close(w.fd);
      w.fd = -1;
      int status = 0;
      while (waitpid(w.pid, &status, 0) < 0 && errno == EINTR) {
      }
      std::uint64_t next = w.next_index;
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        --open;  // the lane is done
        continue;
      }
      if (!WIFEXITED(status) || WEXITSTATUS(status) != kBatchDone) {
        // The worker died inside a seed: that seed is the finding, and the lane goes on after it.
        SeedResult r;
        r.seed = seed_at(p, next);
        r.finding = Finding{FindingKind::Crash, Nanos{0}, 0,
                            WIFSIGNALED(status) ? fmt::format("the run crashed (signal {}: {})", WTERMSIG(status),
                                                              strsignal(WTERMSIG(status)))
                                                : fmt::format("the worker exited with status {}", WEXITSTATUS(status))};
        on_result(r);
        next += jobs;
      }
      auto ok = spawn(workers, k, next, p, cfg, deadline);
      if (!ok) return ok;
    }
  }
  return true;
}

}  // namespace railcheck::swarm

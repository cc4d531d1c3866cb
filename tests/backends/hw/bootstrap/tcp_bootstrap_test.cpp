// The bootstrap over real TCP sockets on 127.0.0.1 (backends/hw/bootstrap/tcp_bootstrap.hpp):
// ranks as threads and as forked processes, the all-gather for 1, 2, 3 and 8 ranks, and every
// refusal and abort failing every rank quickly instead of hanging. Ports are picked by the
// kernel (port 0, read back) so tests never collide.
#include "backends/hw/bootstrap/tcp_bootstrap.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "engine/bootstrap/bootstrap_codec.hpp"
#include "engine/bootstrap/frame_auth.hpp"
#include "engine/core/rng.hpp"
#include "tests/backends/hw/bootstrap/test_job_key.hpp"

namespace railcheck::hw {
namespace {

using Catch::Matchers::Contains;
using Clock = std::chrono::steady_clock;

std::vector<std::uint8_t> blob_of(std::uint32_t rank, std::size_t size, std::uint64_t seed) {
  SeededRng rng(seed * 7919 + rank);
  std::vector<std::uint8_t> b(size);
  for (auto& x : b) x = static_cast<std::uint8_t>(rng.next_u64());
  return b;
}

RootListener open_root() {
  auto root = RootListener::open("127.0.0.1:0");
  REQUIRE(root.ok());
  return std::move(root).value();
}

struct RankRun {
  BootstrapConfig cfg;
  std::vector<std::uint8_t> blob;
};

// Runs every rank on its own thread; rank index 0 of `runs` hosts `root`.
std::vector<BootstrapResult> run_threads(std::vector<RankRun> runs, RootListener& root) {
  std::vector<std::optional<BootstrapResult>> results(runs.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    threads.emplace_back([&, i] { results[i] = run_bootstrap(runs[i].cfg, runs[i].blob, i == 0 ? &root : nullptr); });
  }
  for (auto& t : threads) t.join();
  std::vector<BootstrapResult> out;
  for (auto& r : results) out.push_back(std::move(*r));
  return out;
}

std::vector<RankRun> ranks(std::uint32_t n, const std::string& root_address, std::size_t size, std::uint64_t seed,
                           Nanos timeout = sec(20)) {
  std::vector<RankRun> runs;
  for (std::uint32_t r = 0; r < n; ++r) {
    BootstrapConfig cfg;
    cfg.root_address = root_address;
    cfg.rank = r;
    cfg.nranks = n;
    cfg.run_id = seed;
    cfg.timeout = timeout;
    cfg.key = test_job_key();
    runs.push_back(RankRun{cfg, blob_of(r, size, seed)});
  }
  return runs;
}

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// Every rank failed with `text`, well before the 20 s timeout: nobody waited for it.
void require_all_failed_fast(const std::vector<BootstrapResult>& results, const std::string& text,
                             Clock::time_point t0) {
  for (std::size_t r = 0; r < results.size(); ++r) {
    CAPTURE(r);
    REQUIRE_FALSE(results[r].ok());
    CHECK_THAT(results[r].error().what, Contains(text));
  }
  CHECK(seconds_since(t0) < 5.0);
}

}  // namespace

TEST_CASE("ranks as threads all-gather every blob over TCP for 1, 2, 3 and 8 ranks", "[hw][bootstrap]") {
  for (std::uint32_t n : {1U, 2U, 3U, 8U}) {
    const std::uint64_t seed = 100 + n;
    INFO("nranks " << n << " seed " << seed);
    auto root = open_root();
    const auto t0 = Clock::now();
    auto results = run_threads(ranks(n, root.address(), 128, seed), root);
    for (std::uint32_t r = 0; r < n; ++r) {
      CAPTURE(r);
      REQUIRE(results[r].ok());
      REQUIRE(results[r]->blobs.size() == n);
      for (std::uint32_t o = 0; o < n; ++o) CHECK(results[r]->blobs[o] == blob_of(o, 128, seed));
    }
    CHECK(seconds_since(t0) < 5.0);
  }
}

TEST_CASE("rank 0 opens a fixed root port itself and late ranks retry until it listens", "[hw][bootstrap]") {
  // A port that was free a moment ago: open and close a listener on port 0.
  std::string address;
  {
    auto probe = open_root();
    address = probe.address();
  }
  auto runs = ranks(3, address, 40, 7);
  std::vector<std::optional<BootstrapResult>> results(3);
  std::vector<std::thread> threads;
  // Ranks 1 and 2 start first and find nobody listening; rank 0 comes 200 ms later.
  for (std::size_t i : {1U, 2U})
    threads.emplace_back([&, i] { results[i] = run_bootstrap(runs[i].cfg, runs[i].blob); });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  threads.emplace_back([&] { results[0] = run_bootstrap(runs[0].cfg, runs[0].blob); });
  for (auto& t : threads) t.join();
  for (std::size_t r = 0; r < 3; ++r) {
    CAPTURE(r);
    REQUIRE(results[r]->ok());
    for (std::uint32_t o = 0; o < 3; ++o) CHECK((*results[r])->blobs[o] == blob_of(o, 40, 7));
  }
}

TEST_CASE("ranks as forked processes all-gather every blob", "[hw][bootstrap]") {
  for (std::uint32_t n : {2U, 3U, 8U}) {
    const std::uint64_t seed = 200 + n;
    INFO("nranks " << n << " seed " << seed);
    auto root = open_root();  // before fork: every child inherits the picked address
    const auto runs = ranks(n, root.address(), 128, seed);
    std::vector<pid_t> pids;
    std::vector<int> pipes;
    for (std::uint32_t r = 0; r < n; ++r) {
      int fds[2];
      REQUIRE(::pipe(fds) == 0);
      const pid_t pid = ::fork();
      REQUIRE(pid >= 0);
      if (pid == 0) {
        ::close(fds[0]);
        auto res = run_bootstrap(runs[r].cfg, runs[r].blob, r == 0 ? &root : nullptr);
        // Report: 'E' + message, or 'K' + every blob in rank order.
        std::string report;
        if (!res) {
          report = "E" + res.error().message();
        } else {
          report = "K";
          for (const auto& b : res->blobs) report.append(b.begin(), b.end());
        }
        const bool written = ::write(fds[1], report.data(), report.size()) == static_cast<ssize_t>(report.size());
        ::_exit(written ? 0 : 3);
      }
      ::close(fds[1]);
      pids.push_back(pid);
      pipes.push_back(fds[0]);
    }
    std::string expected = "K";
    for (std::uint32_t o = 0; o < n; ++o) {
      const auto b = blob_of(o, 128, seed);
      expected.append(b.begin(), b.end());
    }
    for (std::uint32_t r = 0; r < n; ++r) {
      CAPTURE(r);
      std::string got;
      char buf[4096];
      const auto t0 = Clock::now();
      for (;;) {
        pollfd p{pipes[r], POLLIN, 0};
        const int ready = ::poll(&p, 1, 1000);
        if (ready == 0 && seconds_since(t0) > 30) break;  // a hung child: fail, do not hang the test
        if (ready <= 0) continue;
        const ssize_t k = ::read(pipes[r], buf, sizeof buf);
        if (k <= 0) break;
        got.append(buf, static_cast<std::size_t>(k));
      }
      ::close(pipes[r]);
      CHECK(got == expected);
    }
    for (pid_t pid : pids) {
      int status = 0;
      if (::waitpid(pid, &status, WNOHANG) == 0) {
        ::kill(pid, SIGKILL);
        ::waitpid(pid, &status, 0);
      }
      CHECK(WIFEXITED(status));
    }
  }
}

TEST_CASE("a duplicate rank is rejected on every rank, quickly", "[hw][bootstrap]") {
  auto root = open_root();
  auto runs = ranks(3, root.address(), 16, 1);
  runs[2].cfg.rank = 1;
  const auto t0 = Clock::now();
  require_all_failed_fast(run_threads(runs, root), "rank 1 checked in twice", t0);
}

TEST_CASE("a rank-count mismatch is rejected on every rank, quickly", "[hw][bootstrap]") {
  auto root = open_root();
  auto runs = ranks(3, root.address(), 16, 2);
  runs[1].cfg.nranks = 4;
  const auto t0 = Clock::now();
  require_all_failed_fast(run_threads(runs, root), "says nranks=4, the root was started with nranks=3", t0);
}

TEST_CASE("a rank that aborts makes every other rank fail fast", "[hw][bootstrap]") {
  auto root = open_root();
  auto runs = ranks(4, root.address(), 16, 3);
  std::atomic<bool> give_up{true};
  runs[2].cfg.abort_flag = &give_up;
  std::vector<std::optional<BootstrapResult>> results(4);
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (std::size_t i : {0U, 1U, 2U}) {
    threads.emplace_back([&, i] { results[i] = run_bootstrap(runs[i].cfg, runs[i].blob, i == 0 ? &root : nullptr); });
  }
  // Rank 3 starts once rank 2 has returned, i.e. once its CheckIn and Abort were written to the
  // root: the root cannot have formed the ring first, so the abort must travel through it.
  threads[2].join();
  threads.emplace_back([&] { results[3] = run_bootstrap(runs[3].cfg, runs[3].blob); });
  threads[0].join();
  threads[1].join();
  threads[3].join();
  REQUIRE_FALSE(results[2]->ok());
  CHECK_THAT(results[2]->error().what, Contains("bootstrap rank 2 of 4 failed (requested): the abort flag was set"));
  for (std::size_t r : {0U, 1U, 3U}) {
    CAPTURE(r);
    REQUIRE_FALSE(results[r]->ok());
    CHECK_THAT(results[r]->error().what, Contains("rank 2 aborted the run (requested): the abort flag was set"));
  }
  CHECK(seconds_since(t0) < 5.0);
}

TEST_CASE("a rank that dies after checking in makes every other rank fail fast", "[hw][bootstrap]") {
  auto root = open_root();
  auto runs = ranks(3, root.address(), 16, 4);
  // Rank 2 is a process that checks in by hand and dies (its socket closes) before any answer.
  // The listener's backlog holds its connection, CheckIn and close until the root runs, and
  // hands them over before the ranks' own check-ins.
  {
    auto at = parse_socket_address(root.address());
    REQUIRE(at.ok());
    auto pc = start_connect(at.value());
    REQUIRE(pc.ok());
    REQUIRE(pc->failed_errno == 0);
    pollfd p{pc->fd.get(), POLLOUT, 0};
    REQUIRE(::poll(&p, 1, 2000) == 1);
    REQUIRE(connect_errno(pc->fd) == 0);
    bootstrap::FrameAuth rank2(test_job_key(), runs[2].cfg.run_id, 2, 0xdead);
    const auto frame = rank2.seal(bootstrap::kFromRoot,
                                  bootstrap::Frame{runs[2].cfg.run_id, bootstrap::CheckIn{2, 3, 16, "127.0.0.1:9"}});
    REQUIRE(::write(pc->fd.get(), frame.data(), frame.size()) == static_cast<ssize_t>(frame.size()));
  }  // closed here
  const auto t0 = Clock::now();
  runs.pop_back();
  require_all_failed_fast(run_threads(runs, root), "(peer lost): rank 2 (127.0.0.1:9) lost its check-in connection",
                          t0);
}

TEST_CASE("a rank that never starts makes the others time out naming it", "[hw][bootstrap]") {
  auto root = open_root();
  auto runs = ranks(3, root.address(), 16, 5, ms(600));
  runs.pop_back();  // rank 2 never runs
  const auto t0 = Clock::now();
  const auto results = run_threads(runs, root);
  for (const auto& r : results) {
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().what, Contains("2 of 3 ranks checked in (missing: 2)"));
  }
  const double took = seconds_since(t0);
  CHECK(took >= 0.5);
  CHECK(took < 3.0);
}

TEST_CASE("bad configurations are one clear error, not a hang", "[hw][bootstrap]") {
  BootstrapConfig cfg;
  cfg.root_address = "localhost:29500";
  cfg.key = test_job_key();
  auto r = run_bootstrap(cfg, std::vector<std::uint8_t>{1});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().what, Contains("bad socket address \"localhost:29500\""));

  cfg.root_address = "127.0.0.1:0";
  cfg.nranks = 2;
  r = run_bootstrap(cfg, std::vector<std::uint8_t>{1});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().what, Contains("has port 0"));

  cfg.rank = 2;
  r = run_bootstrap(cfg, std::vector<std::uint8_t>{1});
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().what, Contains("rank 2 out of range for nranks=2"));
}

TEST_CASE("a rank with another run id is told so", "[hw][bootstrap]") {
  auto root = open_root();
  auto runs = ranks(2, root.address(), 8, 6, ms(800));
  runs[1].cfg.run_id = 99;
  const auto results = run_threads(runs, root);
  REQUIRE_FALSE(results[1].ok());
  // The root refuses its check-in before the run sees it (frame_auth.hpp: another run).
  CHECK_THAT(results[1].error().what, Contains("(wrong run id): the root refused this check-in (other run): rank 1's "
                                               "frame belongs to run 0x0000000000000063, this is run 0x0000000000000006"));
  REQUIRE_FALSE(results[0].ok());  // its partner never checked in
  CHECK_THAT(results[0].error().what, Contains("timeout"));
}

}  // namespace railcheck::hw

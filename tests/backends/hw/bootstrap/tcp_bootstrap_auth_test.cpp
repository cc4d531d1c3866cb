// The bootstrap with a job key over real TCP on 127.0.0.1 (issue 46): the right key joins; a
// process with a wrong key fails its own join at once with one line; and an attacker in the
// middle of rank 1's connection to the root (a relay that forwards every byte and keeps a copy)
// that alters, replays in the stream, replays on a connection of its own, or sends another
// job's frame has each of them refused and logged once, while every rank gets every blob.
#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/hw/bootstrap/tcp_bootstrap.hpp"
#include "engine/bootstrap/bootstrap_codec.hpp"
#include "engine/bootstrap/frame_auth.hpp"
#include "tests/backends/hw/bootstrap/test_job_key.hpp"

namespace railcheck::hw {
namespace {

using Catch::Matchers::Contains;
using Clock = std::chrono::steady_clock;

constexpr std::uint64_t kRun = 0x46;

std::vector<std::uint8_t> blob_of(std::uint32_t rank) { return std::vector<std::uint8_t>(64, static_cast<std::uint8_t>(rank * 7 + 1)); }

// Log lines from every rank of a test, in order.
struct LogLines {
  std::mutex mu;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> sink() {
    return [this](const std::string& l) {
      std::lock_guard<std::mutex> g(mu);
      lines.push_back(l);
    };
  }
  std::size_t count(const std::string& text) {
    std::lock_guard<std::mutex> g(mu);
    std::size_t n = 0;
    for (const auto& l : lines) n += l.find(text) != std::string::npos ? 1 : 0;
    return n;
  }
};

BootstrapConfig config(const std::string& root, std::uint32_t rank, std::uint32_t n, LogLines& log) {
  BootstrapConfig cfg;
  cfg.root_address = root;
  cfg.rank = rank;
  cfg.nranks = n;
  cfg.run_id = kRun;
  cfg.timeout = sec(10);
  cfg.key = test_job_key();
  cfg.log = log.sink();
  return cfg;
}

void require_every_blob(const std::vector<BootstrapResult>& results, std::uint32_t n) {
  for (std::uint32_t r = 0; r < n; ++r) {
    CAPTURE(r);
    REQUIRE(results[r].ok());
    REQUIRE(results[r]->blobs.size() == n);
    for (std::uint32_t o = 0; o < n; ++o) CHECK(results[r]->blobs[o] == blob_of(o));
  }
}

// The relay's thread uses these: Catch2's assertions are for the test's own thread only, so they
// throw and the relay keeps the first failure for the test to check after it joins.
[[noreturn]] void relay_failed(const std::string& what) { throw std::runtime_error(what); }

Fd connect_to(const std::string& address) {
  auto at = parse_socket_address(address);
  if (!at.ok()) relay_failed("bad address " + address);
  auto pc = start_connect(at.value());
  if (!pc.ok() || pc->failed_errno != 0) relay_failed("connect to " + address + " failed");
  pollfd p{pc->fd.get(), POLLOUT, 0};
  if (::poll(&p, 1, 2000) != 1 || connect_errno(pc->fd) != 0) relay_failed("connect to " + address + " timed out");
  return std::move(pc->fd);
}

void write_all(const Fd& fd, const std::vector<std::uint8_t>& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    pollfd p{fd.get(), POLLOUT, 0};
    ::poll(&p, 1, 1000);
    auto r = send_some(fd, std::span(bytes).subspan(done), "test");
    if (!r.ok()) relay_failed("relay write failed");
    done += r->done;
  }
}

enum class Attack { AlterInStream, ReplayInStream, ReplayOnOwnConnection, OtherJobOnOwnConnection };

// Sits between rank 1 and the root: forwards both ways, and once rank 1's first frame (its
// sealed CheckIn) has gone through, mounts `attack` with it.
class Relay {
 public:
  Relay(std::string root, Attack attack) : root_(std::move(root)), attack_(attack) {
    auto l = listen_on(parse_socket_address("127.0.0.1:0").value());
    REQUIRE(l.ok());
    listener_ = std::move(l).value();
    thread_ = std::thread([this] {
      try {
        run();
      } catch (const std::exception& e) {
        std::lock_guard lock(failure_mutex_);
        failure_ = e.what();
      }
    });
  }
  ~Relay() { stop(); }
  void stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }
  // Empty unless the relay itself failed (not the attack: the ranks' results say how that went).
  std::string failure() const {
    std::lock_guard lock(failure_mutex_);
    return failure_;
  }
  std::string address() const { return listener_.bound.to_string(); }
  bool attacked() const { return attacked_; }

 private:
  void run() {
    Fd client;
    while (!stop_ && !client.valid()) {
      pollfd p{listener_.fd.get(), POLLIN, 0};
      ::poll(&p, 1, 50);
      auto a = accept_one(listener_);
      if (a.ok() && a.value()) client = std::move(*a.value());
    }
    if (stop_) return;
    Fd upstream = connect_to(root_);
    std::vector<std::uint8_t> seen;  // rank 1 -> root
    Fd own;
    while (!stop_) {
      pollfd p[2] = {{client.get(), POLLIN, 0}, {upstream.get(), POLLIN, 0}};
      ::poll(p, 2, 50);
      std::uint8_t buf[4096];
      for (int i = 0; i < 2; ++i) {
        if ((p[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        const Fd& from = i == 0 ? client : upstream;
        const Fd& to = i == 0 ? upstream : client;
        auto r = recv_some(from, buf, "relay");
        if (!r.ok() || r->eof) return;
        std::vector<std::uint8_t> chunk(buf, buf + r->done);
        write_all(to, chunk);
        if (i == 0) seen.insert(seen.end(), chunk.begin(), chunk.end());
      }
      const std::size_t header = bootstrap::frame_wire::kHeaderSize;
      if (attacked_ || seen.size() < header) continue;
      const std::size_t len = seen[16] | seen[17] << 8 | seen[18] << 16 | static_cast<std::size_t>(seen[19]) << 24;
      const std::size_t whole = header + len + bootstrap::auth_wire::kTrailerSize;
      if (seen.size() < whole) continue;
      std::vector<std::uint8_t> check_in(seen.begin(), seen.begin() + static_cast<std::ptrdiff_t>(whole));
      // Give the root a moment to take the original first (it is the connection it accepted first).
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      switch (attack_) {
        case Attack::AlterInStream: check_in[header + 2] ^= 0x40; write_all(upstream, check_in); break;
        case Attack::ReplayInStream: write_all(upstream, check_in); break;
        case Attack::ReplayOnOwnConnection:
          own = connect_to(root_);
          write_all(own, check_in);
          break;
        case Attack::OtherJobOnOwnConnection: {
          bootstrap::FrameAuth other(test_job_key(), kRun + 1, 1, 0xa77ac);
          own = connect_to(root_);
          write_all(own, other.seal(bootstrap::kFromRoot,
                                    bootstrap::Frame{kRun + 1, bootstrap::CheckIn{1, 3, 64, "127.0.0.1:9"}}));
          break;
        }
      }
      attacked_ = true;
    }
  }

  std::string root_;
  Attack attack_;
  Listener listener_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> attacked_{false};
  mutable std::mutex failure_mutex_;
  std::string failure_;
  std::thread thread_;
};

}  // namespace

TEST_CASE("with the job key every rank joins and nothing is refused", "[hw][bootstrap][auth]") {
  LogLines log;
  auto root = RootListener::open("127.0.0.1:0");
  REQUIRE(root.ok());
  std::vector<std::optional<BootstrapResult>> results(4);
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < 4; ++r) {
    threads.emplace_back([&, r] {
      results[r] = run_bootstrap(config(root->address(), r, 4, log), blob_of(r), r == 0 ? &root.value() : nullptr);
    });
  }
  for (auto& t : threads) t.join();
  std::vector<BootstrapResult> done;
  for (auto& r : results) done.push_back(std::move(*r));
  require_every_blob(done, 4);
  for (const auto& r : done) CHECK(r->refused == 0);
  CHECK(log.count("refused") == 0);
}

TEST_CASE("a process with a wrong key fails its own join at once, and the run goes on", "[hw][bootstrap][auth]") {
  LogLines log;
  auto root = RootListener::open("127.0.0.1:0");
  REQUIRE(root.ok());
  // The stranger claims rank 1 with another key, and starts before the real rank 1.
  BootstrapConfig stranger = config(root->address(), 1, 3, log);
  stranger.key = test_job_key(0x99);
  std::optional<BootstrapResult> refused;
  double took = 0;
  std::thread stranger_thread([&] {
    const auto t0 = Clock::now();
    refused = run_bootstrap(stranger, blob_of(1));
    took = std::chrono::duration<double>(Clock::now() - t0).count();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  std::vector<std::optional<BootstrapResult>> results(3);
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < 3; ++r) {
    threads.emplace_back([&, r] {
      results[r] = run_bootstrap(config(root->address(), r, 3, log), blob_of(r), r == 0 ? &root.value() : nullptr);
    });
  }
  for (auto& t : threads) t.join();
  stranger_thread.join();
  // It waits for no deadline (10 s): the root answers as soon as it reads the check-in.
  CHECK(took < 5.0);
  REQUIRE(refused);
  REQUIRE_FALSE(refused->ok());
  CHECK(refused->error().what.find('\n') == std::string::npos);
  CHECK_THAT(refused->error().what, Contains("bootstrap rank 1 of 3: the root aborted the run (not authenticated)") &&
                                       Contains("wrong key"));
  std::vector<BootstrapResult> done;
  for (auto& r : results) done.push_back(std::move(*r));
  require_every_blob(done, 3);
  CHECK(done[0]->refused == 1);
  CHECK(log.count("refused a bootstrap frame from 127.0.0.1:") == 1);
  CHECK(log.count(": wrong key: ") == 1);
}

TEST_CASE("altered, replayed and other-job frames are refused and logged once, every rank undisturbed",
          "[hw][bootstrap][auth]") {
  const auto [attack, reason] = GENERATE(table<Attack, std::string>({
      {Attack::AlterInStream, "bad MAC (forged or altered)"},
      {Attack::ReplayInStream, "replayed"},
      {Attack::ReplayOnOwnConnection, "replayed"},
      {Attack::OtherJobOnOwnConnection, "other run"},
  }));
  CAPTURE(reason);
  LogLines log;
  auto root = RootListener::open("127.0.0.1:0");
  REQUIRE(root.ok());
  Relay relay(root->address(), attack);
  std::vector<std::optional<BootstrapResult>> results(3);
  std::vector<std::thread> threads;
  for (std::uint32_t r = 0; r < 3; ++r) {
    threads.emplace_back([&, r] {
      // Rank 1 reaches the root through the attacker; rank 2 comes late, after the attack.
      if (r == 2) std::this_thread::sleep_for(std::chrono::milliseconds(600));
      auto cfg = config(r == 1 ? relay.address() : root->address(), r, 3, log);
      results[r] = run_bootstrap(cfg, blob_of(r), r == 0 ? &root.value() : nullptr);
    });
  }
  for (auto& t : threads) t.join();
  relay.stop();
  REQUIRE(relay.failure().empty());
  CHECK(relay.attacked());
  std::vector<BootstrapResult> done;
  for (auto& r : results) done.push_back(std::move(*r));
  require_every_blob(done, 3);
  CHECK(done[0]->refused == 1);  // the root (rank 0's process) refused it
  CHECK(log.count("refused a bootstrap frame from 127.0.0.1:") == 1);
  CHECK(log.count(": " + reason + ": ") == 1);
}

TEST_CASE("without a key the bootstrap refuses to run unless told to, and then warns", "[hw][bootstrap][auth]") {
  LogLines log;
  BootstrapConfig cfg;
  cfg.root_address = "127.0.0.1:0";
  cfg.log = log.sink();
  auto r = run_bootstrap(cfg, blob_of(0));
  REQUIRE_FALSE(r.ok());
  CHECK_THAT(r.error().message(), Contains("no job key") && Contains("RAILCHECK_JOB_KEY_FILE"));

  cfg.allow_unauthenticated = true;
  r = run_bootstrap(cfg, blob_of(0));  // one rank: no peer needed
  REQUIRE(r.ok());
  CHECK(log.count("WARNING: running without a job key (authentication off)") == 1);
}

}  // namespace railcheck::hw

// What authentication costs (issue 46, docs/security.md), side by side in one run:
//   1. the whole TCP bootstrap (check-in to last blob, 128-byte blobs, ranks as threads of one
//      process on 127.0.0.1) with a job key and without, at --ranks (1024 by default);
//   2. one control message sealed and opened (engine/auth/sealed_channel.hpp), the MAC work the
//      plugin adds to each control message, at the sizes they have.
// Best of --reps runs each, alternating off and on so load drifts hit both alike.
#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <optional>
#include <thread>
#include <vector>

#include "backends/hw/bootstrap/tcp_bootstrap.hpp"
#include "bench/machine_line.hpp"
#include "bench/parse_options.hpp"
#include "engine/auth/sealed_channel.hpp"

namespace {

using namespace railcheck;
using Clock = std::chrono::steady_clock;

// Seconds for one bootstrap of `n` ranks, or nullopt if any rank failed (printed).
std::optional<double> bootstrap_once(std::uint32_t n, bool with_key, std::uint64_t run_id) {
  auto root = hw::RootListener::open("127.0.0.1:0");
  if (!root) {
    std::fprintf(stderr, "%s\n", root.error().message().c_str());
    return std::nullopt;
  }
  const auto key = auth::JobKey::from_bytes(std::vector<std::uint8_t>(32, 0x5a)).value();
  std::vector<std::optional<hw::BootstrapResult>> results(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  const auto t0 = Clock::now();
  for (std::uint32_t r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      hw::BootstrapConfig cfg;
      cfg.root_address = root->address();
      cfg.rank = r;
      cfg.nranks = n;
      cfg.run_id = run_id;
      cfg.timeout = sec(300);
      if (with_key) {
        cfg.key = key;
      } else {
        cfg.allow_unauthenticated = true;
        cfg.log = [](const std::string&) {};  // the warning, once per rank: not what is measured
      }
      const std::vector<std::uint8_t> blob(128, static_cast<std::uint8_t>(r));
      results[r] = hw::run_bootstrap(cfg, blob, r == 0 ? &root.value() : nullptr);
    });
  }
  for (auto& t : threads) t.join();
  const double s = std::chrono::duration<double>(Clock::now() - t0).count();
  for (std::uint32_t r = 0; r < n; ++r) {
    if (!results[r]->ok()) {
      std::fprintf(stderr, "rank %u: %s\n", r, results[r]->error().message().c_str());
      return std::nullopt;
    }
  }
  return s;
}

// Nanoseconds to seal one message of `bytes` and open it at the peer.
double seal_open_ns(std::size_t bytes, int iterations) {
  const auto key = auth::JobKey::from_bytes(std::vector<std::uint8_t>(32, 0x5a)).value();
  const std::vector<std::uint8_t> binding(40, 7);  // a listener's handle
  auth::SealedChannel a(key, "railcheck control v1", binding, 0, 1);
  auth::SealedChannel b(key, "railcheck control v1", binding, 1, 0);
  std::vector<std::uint8_t> msg;
  std::size_t opened = 0;
  const auto t0 = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    msg.assign(bytes, static_cast<std::uint8_t>(i));
    a.seal(msg);
    opened += b.open(msg).ok ? 1 : 0;
  }
  const double ns = std::chrono::duration<double, std::nano>(Clock::now() - t0).count() / iterations;
  if (opened != static_cast<std::size_t>(iterations)) std::fprintf(stderr, "a sealed message did not open\n");
  return ns;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"bootstrap and control-message cost with a job key and without (issue 46)"};
  std::uint32_t ranks = 1024;
  int reps = 3;
  bool quick = false;
  app.add_option("--ranks", ranks, "ranks of the bootstrap, as threads")->check(CLI::Range(1U, 4096U));
  app.add_option("--reps", reps, "runs of each; the best is reported")->check(CLI::Range(1, 100));
  app.add_flag("--quick", quick, "64 ranks, 1 rep: a smoke run");
  if (auto code = bench::parse_options(app, argc, argv)) return *code;
  if (quick) {
    ranks = 64;
    reps = 1;
  }
  std::printf("# %s\n", bench::machine_summary().c_str());
  double best[2] = {1e30, 1e30};
  for (int rep = 0; rep < reps; ++rep) {
    for (int with_key = 0; with_key < 2; ++with_key) {
      auto s = bootstrap_once(ranks, with_key == 1, 0x4600 + static_cast<std::uint64_t>(rep * 2 + with_key));
      if (!s) return 1;
      best[with_key] = std::min(best[with_key], *s);
    }
  }
  std::printf("bootstrap, %u ranks (threads, 127.0.0.1, 128 B blobs), best of %d:\n", ranks, reps);
  std::printf("  key off  %9.1f ms\n  key on   %9.1f ms   (%.2fx)\n", best[0] * 1e3, best[1] * 1e3, best[1] / best[0]);
  std::printf("control message sealed + opened (HMAC-SHA-256, 48-byte trailer), per message:\n");
  const int iterations = quick ? 20000 : 200000;
  for (std::size_t bytes : {16U, 64U, 512U, 4096U}) {
    std::printf("  %5zu B  %7.0f ns\n", bytes, seal_open_ns(bytes, iterations));
  }
  return 0;
}

// WRITE_IMM bandwidth and latency through FabricConnection::write_imm (the backend's connection:
// its progress loop, pending queue and write table) against a plain libfabric loop doing the same
// writes on its own endpoint pair (two bare FabricRails: fi_writedata + fi_cq_read, nothing
// else), side by side in one run on shm and tcp;ofi_rxm (issue 7 item 5). Both sides live in
// this process on loopback, driven from one thread, so each figure includes the target's polling.
//   bandwidth: `window` writes kept in flight, done when every write completed at the initiator
//              and every immediate landed at the target
//   latency:   one write at a time, post to its immediate landing at the target (mean)
// Each run starts with 32 untimed writes (rxm connection setup, first page touches).
// docs/benchmarks.md and docs/hardware.md record the table.
//   build/bench/fabric_write_imm [--quick] [--provider P]... [--size BYTES]... [--path both|plain|engine]
// The selection options run one case alone (e.g. under perf record); the ratio needs --path both.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "backends/hw/libfabric/fabric_connection.hpp"
#include "backends/hw/libfabric/fabric_rail.hpp"
#include "backends/hw/libfabric/provider_query.hpp"
#include "bench/machine_line.hpp"
#include "bench/median.hpp"
#include "bench/parse_options.hpp"

using namespace railcheck;
using bench::median;
using Clock = std::chrono::steady_clock;

namespace {

constexpr std::uint64_t kWarmup = 32;
constexpr double kSettleSeconds = 0.05;  // after every rail is ready: run_engine

struct Load {
  std::size_t size;
  std::uint64_t writes;  // bandwidth run
  std::uint32_t window;
  std::uint64_t pings;  // latency run
};

struct Figures {
  double gbps = 0;    // GB/s (10^9 bytes)
  double lat_us = 0;  // mean post -> landing
  std::string error;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Completions seen on one path so far: writes completed at the initiator, immediates landed at
// the target. The path's reap() adds to them; measure() resets them between phases.
struct Progress {
  std::uint64_t done = 0, landed = 0;
};

// The measurement, written once so that the ratio compares the two paths and not two loops.
// Each path supplies
//   post(imm)  post one write of l.size bytes carrying imm; false if the path refused it
//              (its message is `refused`)
//   reap()     collect the completions of both sides into `seen`; false if a write failed
// A path is never asked to hold more than l.window writes in flight.
template <class Post, class Reap>
Figures measure(const Load& l, Progress& seen, const char* refused, Post post, Reap reap) {
  // `count` writes, each waited for at both ends before the next: warm-up and latency.
  // Returns what failed, or nullptr.
  auto one_at_a_time = [&](std::uint64_t count) -> const char* {
    seen = {};
    for (std::uint64_t i = 0; i < count; ++i) {
      if (!post(static_cast<std::uint32_t>(i))) return refused;
      while (seen.landed <= i || seen.done <= i)
        if (!reap()) return "a write failed";
    }
    return nullptr;
  };
  // Warm-up: the first writes set up rxm's connection and fault in the pages; untimed.
  if (const char* e = one_at_a_time(kWarmup)) return {0, 0, e};
  // Bandwidth.
  seen = {};
  const auto t0 = Clock::now();
  std::uint64_t posted = 0;
  while (seen.done < l.writes || seen.landed < l.writes) {
    while (posted < l.writes && posted - seen.done < l.window)
      if (!post(static_cast<std::uint32_t>(posted++))) return {0, 0, refused};
    if (!reap()) return {0, 0, "a write failed"};
    if (seconds_since(t0) > 120) return {0, 0, "bandwidth run timed out"};
  }
  Figures f;
  f.gbps = static_cast<double>(l.size) * static_cast<double>(l.writes) / seconds_since(t0) / 1e9;
  // Latency.
  const auto t1 = Clock::now();
  if (const char* e = one_at_a_time(l.pings)) return {0, 0, e};
  f.lat_us = seconds_since(t1) * 1e6 / static_cast<double>(l.pings);
  return f;
}

// ---- the plain loop: two bare rails ----

struct PlainPair {
  std::unique_ptr<fabric::FabricRail> init, target;
  fabric::RailMemory src_mem, dst_mem;
};

Figures run_plain(const std::string& prov, const Load& l, std::vector<std::uint8_t>& src,
                  std::vector<std::uint8_t>& dst) {
  const std::string node = fabric::is_shm(prov) ? "" : "127.0.0.1";
  auto a = fabric::FabricRail::open(prov, node, 1024);
  auto b = fabric::FabricRail::open(prov, node, 1024);
  if (!a || !b) return {0, 0, "open: " + (a ? b.error() : a.error()).message()};
  PlainPair p{std::move(a).value(), std::move(b).value(), {}, {}};
  if (auto r = p.init->insert_peer(p.target->local()); !r) return {0, 0, r.error().message()};
  if (auto r = p.target->insert_peer(p.init->local()); !r) return {0, 0, r.error().message()};
  auto sm = p.init->register_memory(src.data(), src.size());
  auto dm = p.target->register_memory(dst.data(), dst.size());
  if (!sm || !dm) return {0, 0, "register: " + (sm ? dm.error() : sm.error()).message()};
  p.src_mem = std::move(sm).value();
  p.dst_mem = std::move(dm).value();
  // One fi_context2 per write in flight; a completion gives its context back.
  std::vector<fi_context2> ctx(l.window);
  std::vector<fi_context2*> free_ctx;
  for (auto& c : ctx) free_ctx.push_back(&c);
  std::vector<fabric::RailCompletion> batch(64);
  Progress seen;
  auto reap = [&]() -> bool {
    auto n = p.init->poll(batch);
    if (!n) return false;
    for (std::size_t i = 0; i < n.value(); ++i) {
      if (batch[i].error != 0) return false;
      free_ctx.push_back(static_cast<fi_context2*>(batch[i].context));
      ++seen.done;
    }
    auto m = p.target->poll(batch);
    if (!m) return false;
    for (std::size_t i = 0; i < m.value(); ++i)
      if ((batch[i].flags & FI_REMOTE_CQ_DATA) != 0) ++seen.landed;
    return true;
  };
  // free_ctx is never empty here: measure() keeps at most l.window writes in flight, and there
  // are l.window contexts. On FI_EAGAIN the provider's queue is full: reap, then retry.
  auto post = [&](std::uint32_t imm) -> bool {
    for (;;) {
      fi_context2* c = free_ctx.back();
      const ssize_t rc = p.init->write(src.data(), l.size, p.src_mem.desc, imm, p.dst_mem.base, p.dst_mem.key, c);
      if (rc == 0) {
        free_ctx.pop_back();
        return true;
      }
      if (rc != -FI_EAGAIN || !reap()) return false;
    }
  };
  return measure(l, seen, "fi_writedata failed", post, reap);
}

// ---- through FabricConnection ----

Figures run_engine(const std::string& prov, const Load& l, std::vector<std::uint8_t>& src,
                   std::vector<std::uint8_t>& dst) {
  FabricOptions o;
  o.provider = prov;
  o.rails = 2;
  if (!fabric::is_shm(prov)) o.rail_addresses.assign(2, "127.0.0.1");
  std::vector<std::uint8_t> handle;
  auto rx = FabricConnection::listen(o, handle);
  if (!rx) return {0, 0, "listen: " + rx.error().message()};
  auto tx = FabricConnection::connect(o, handle);
  if (!tx) return {0, 0, "connect: " + tx.error().message()};
  FabricConnection& target = *rx.value();
  FabricConnection& init = *tx.value();
  // Measured in steady state, as a long-lived connection runs: the primary ready, every standby
  // through its phase 2 on both sides, then a settling time in which the standby's provider
  // connection comes up (ofi_rxm connects lazily, on the warm-up message, and runs its connection
  // manager every 10 ms). Timing from the primary's readiness alone put that set-up (rxm's buffer
  // pools: ~35 MB zeroed, ~9 000 page faults) inside the timed phases: 10-15 % of tcp;ofi_rxm's
  // 64 B and 64 KiB rates, which looked like a per-message cost of the standby (issue 32).
  auto all_rails_ready = [](const FabricConnection& c) {
    const ConnectionStats st = c.stats();
    return std::all_of(st.rails.begin(), st.rails.end(), [](const RailStats& r) { return r.ready; });
  };
  const auto t_ready = Clock::now();
  while (!(init.ready() && target.ready() && init.rail_connected(PathIndex{0}) && all_rails_ready(init) &&
           all_rails_ready(target))) {
    init.progress();
    target.progress();
    if (seconds_since(t_ready) > 30) return {0, 0, "the connection never became ready (every rail)"};
  }
  for (const auto t_settle = Clock::now(); seconds_since(t_settle) < kSettleSeconds;) {
    init.progress();
    target.progress();
  }
  auto smr = init.register_memory(src.data(), src.size());
  auto dmr = target.register_memory(dst.data(), dst.size());
  if (!smr || !dmr) return {0, 0, "register: " + (smr ? dmr.error() : smr.error()).message()};
  auto addr = target.remote_address(dmr.value(), PathIndex{0}, 0);
  auto key = target.remote_key(dmr.value(), PathIndex{0});
  if (!addr || !key) return {0, 0, "remote key"};
  std::vector<WriteCompletion> done_batch;
  std::vector<std::uint32_t> landed_batch;
  Progress seen;
  auto reap = [&]() -> bool {
    done_batch.clear();
    init.completed_writes(done_batch);
    for (const auto& d : done_batch)
      if (!d.ok) return false;
    seen.done += done_batch.size();
    landed_batch.clear();
    target.landed_imms(landed_batch);
    seen.landed += landed_batch.size();
    return true;
  };
  // The connection queues what the provider cannot take yet, so there is no retry here.
  auto post = [&](std::uint32_t imm) {
    return init.write_imm(PathIndex{0}, src.data(), l.size, smr.value(), addr.value(), key.value(), imm).ok();
  };
  return measure(l, seen, "write_imm refused", post, reap);
}

std::string size_label(std::size_t size) {
  return size >= (1 << 20) ? fmt::format("{} MiB", size >> 20)
         : size >= 1024    ? fmt::format("{} KiB", size >> 10)
                           : fmt::format("{} B", size);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "WRITE_IMM through FabricConnection against a plain fi_writedata loop, shm and tcp;ofi_rxm, 64 B to 4 MiB.\n"
      "With --repeat N the two paths run alternately N times per case; the table shows each path's median,\n"
      "the median of the paired (back-to-back) engine/plain ratios, the ratio of the two paths' best rates,\n"
      "and every pair's rate ratio."};
  bool quick = false;
  std::vector<std::string> providers = {"shm", "tcp;ofi_rxm"};
  std::vector<std::size_t> sizes;
  std::string path = "both";
  int repeat = 1;
  app.add_flag("--quick", quick, "a tenth of the writes (a smoke run, or a profile's baseline)");
  app.add_option("--provider", providers, "providers to run, in order")->check(CLI::IsMember({"shm", "tcp;ofi_rxm"}));
  app.add_option("--size", sizes, "only these sizes (64, 65536, 4194304)")->check(CLI::IsMember({64, 65536, 4194304}));
  app.add_option("--path", path, "both (the ratio), or one path alone (for a profile)")
      ->check(CLI::IsMember({"both", "plain", "engine"}));
  app.add_option("--repeat", repeat, "runs of each path per case, alternated (medians reported)")
      ->check(CLI::Range(1, 100));
  if (auto rc = bench::parse_options(app, argc, argv)) return *rc;
  const bool with_plain = path != "engine", with_engine = path != "plain";
  fmt::print("fabric_write_imm: {} | libfabric {}.{}\n", bench::machine_summary(), FI_MAJOR(fi_version()),
             FI_MINOR(fi_version()));
  fmt::print(
      "both sides in one process on loopback, one thread; rail 0 only; GB/s = 10^9 B/s; {} run(s) a path, "
      "alternated, medians\n\n",
      repeat);
  const std::uint64_t q = quick ? 10 : 1;
  // Each timed phase should last 50 ms or more, or one descheduling decides the ratio (on a
  // quiet 16-core host single runs of 15 ms phases scattered 0.5-1.9): shm moves a 64 B write in
  // ~0.4 us, so it gets ten times tcp;ofi_rxm's count (~9 us); 64 KiB takes 4-17 us, 4 MiB
  // 0.4-0.8 ms.
  auto loads_for = [&](const std::string& prov) {
    const std::uint64_t small = fabric::is_shm(prov) ? 10 : 1;
    std::vector<Load> loads = {
        {64, small * 20000 / q, 64, small * 2000 / q},
        {64 << 10, 20000 / q, 32, 2500 / q},
        {4 << 20, 256 / q + 4, 8, 64 / q + 2},
    };
    if (!sizes.empty())
      std::erase_if(loads, [&](const Load& l) { return std::find(sizes.begin(), sizes.end(), l.size) == sizes.end(); });
    return loads;
  };
  fmt::print(
      "| provider | size | plain GB/s | engine GB/s | engine/plain | plain lat us | engine lat us | "
      "engine/plain | best-rate ratio | rate ratio per run |\n|---|---|---|---|---|---|---|---|---|---|\n");
  int rc = 0;
  auto cell = [](bool has, double v, const char* spec) { return has ? fmt::format(fmt::runtime(spec), v) : "-"; };
  for (const std::string& prov : providers) {
    if (auto ok = fabric::query_provider(prov, fabric::is_shm(prov) ? "" : "127.0.0.1"); !ok) {
      fmt::print("| {} | - | not usable here: {} |\n", prov, ok.error().message());
      continue;
    }
    for (const Load& l : loads_for(prov)) {
      std::vector<std::uint8_t> src(l.size, 0x5a), dst(l.size, 0);
      std::vector<double> pg, eg, pl, el, ratios, lat_ratios;
      std::string error;
      for (int run = 0; run < repeat && error.empty(); ++run) {
        const Figures plain = with_plain ? run_plain(prov, l, src, dst) : Figures{};
        const Figures engine = with_engine ? run_engine(prov, l, src, dst) : Figures{};
        if (!plain.error.empty() || !engine.error.empty()) {
          error = fmt::format("{} {}", plain.error, engine.error);
          break;
        }
        pg.push_back(plain.gbps), pl.push_back(plain.lat_us);
        eg.push_back(engine.gbps), el.push_back(engine.lat_us);
        if (with_plain && with_engine) {
          ratios.push_back(engine.gbps / plain.gbps);
          lat_ratios.push_back(engine.lat_us / plain.lat_us);
        }
      }
      if (!error.empty()) {
        fmt::print("| {} | {} | failed: {} |\n", prov, size_label(l.size), error);
        rc = 1;
        continue;
      }
      const double mpg = median(pg), meg = median(eg), mpl = median(pl), mel = median(el);
      const bool both = with_plain && with_engine;
      // The ratios are medians over pairs (plain, engine) run back to back, which share the
      // host's condition of the moment; a ratio of the two paths' medians mixes minutes. And
      // interference only slows a run down, so the two best runs are the least disturbed estimate
      // of what each path can do.
      const double best_ratio =
          both ? *std::max_element(eg.begin(), eg.end()) / *std::max_element(pg.begin(), pg.end()) : 0;
      fmt::print("| {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |\n", prov, size_label(l.size),
                 cell(with_plain, mpg, "{:.3f}"), cell(with_engine, meg, "{:.3f}"),
                 cell(both, both ? median(ratios) : 0, "{:.2f}"), cell(with_plain, mpl, "{:.1f}"),
                 cell(with_engine, mel, "{:.1f}"), cell(both, both ? median(lat_ratios) : 0, "{:.2f}"),
                 cell(both, best_ratio, "{:.2f}"), both ? fmt::format("{:.2f}", fmt::join(ratios, " ")) : "-");
      std::fflush(stdout);
    }
  }
  return rc;
}

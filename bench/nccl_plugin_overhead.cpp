// What the NCCL net plugin costs on top of the transport it wraps (issue 17 item 4). The same
// messages, side by side in one run, through
//   bare     a FabricConnection pair (the plugin's transport: the HA engine on libfabric,
//            two rails, delivery acks as the provider needs them), driven directly;
//   plugin   libnccl-net-railcheck.so loaded with dlopen and driven through its ncclNet_v11
//            table as NCCL's proxy drives it: listen, connect/accept until both return a comm,
//            regMr, isend / irecv (one buffer, tag 0), test polling (the harness of
//            tests/backends/hw/nccl).
// Both ends live in one process on loopback, driven from one thread (bench/message_pair.hpp:
// rate with a window of requests in flight, latency isend to the sender's completion). The
// plugin reads its settings once per process, so each provider runs in its own forked child.
// With --repeat N each size runs bare then plugin N times; the table gives each path's median
// and the median of the N paired (back-to-back) ratios, which share the host's load of the moment
// (issue 42's goal: a 64 B message through the plugin at most 1.1x the bare connection's time).
// --plugin PATH loads another build of the plugin (the bare column stays this binary's backend).
// The bare connection sends with the plugin's semantics: a send of at most HA_NCCL_STAGE_BYTES
// completes once its bytes left (staged sends, issue 42), as the plugin's does.
// --check verifies every latency message at the receiver (CTest nccl_plugin_overhead_check).
// --auth on|off|both: control messages (delivery acks included, one per message on tcp;ofi_rxm)
// with the job key's MAC or without (issue 46); both: each in its own child, side by side.
// --landing runs NCCL's LL receive pattern instead (the receive posted with
// NCCL_NET_OPTIONAL_RECV_COMPLETION and tested once before the send, as NCCL's proxy posts ahead;
// then only the buffer is watched): the time until a message is in the receiver's buffer, against
// the same receive tested until done, and what one test() of an idle receive costs (issue 42).
// --parallel N runs N bare connection pairs at once, each on a thread of its own, against one
// pair: whether the provider's endpoints in one process move bytes in parallel (issue 42).
//   build/bench/nccl_plugin_overhead [--quick] [--check] [--landing] [--parallel N] [--repeat N] [--size 64 ...] [--plugin PATH]
//                                    [--auth both] [--provider net ...]
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <rdma/fabric.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <utility>
#include <string>
#include <thread>
#include <vector>

#include "backends/hw/auth/job_key_source.hpp"
#include "backends/hw/libfabric/provider_query.hpp"
#include "backends/hw/nccl/plugin_config.hpp"
#include "bench/machine_line.hpp"
#include "bench/median.hpp"
#include "bench/message_pair.hpp"
#include "bench/parse_options.hpp"
#include "tests/backends/hw/nccl/plugin_harness.hpp"

using namespace railcheck;
using bench::Figures;
using bench::Load;

namespace {

namespace harness = railcheck::nccl_harness;
namespace abi = railcheck::nccl_abi;

// One send comm and one receive comm of the plugin, connected to each other in this process.
class PluginPair {
 public:
  explicit PluginPair(const std::string& path) : plugin_(path.c_str(), 11) {}
  PluginPair(const PluginPair&) = delete;
  PluginPair& operator=(const PluginPair&) = delete;
  ~PluginPair() {
    if (sc_ != nullptr) {
      if (smh_ != nullptr) plugin_.dereg_mr(sc_, smh_);
      plugin_.close_send(sc_);
    }
    if (rc_ != nullptr) {
      if (rmh_ != nullptr) plugin_.dereg_mr(rc_, rmh_);
      plugin_.close_recv(rc_);
    }
    if (lc_ != nullptr) plugin_.close_listen(lc_);
  }

  std::string open(std::size_t size) {
    if (plugin_.init() != 0) return "init failed:\n" + harness::log_text();
    char handle[abi::kHandleMaxSize] = {};
    if (plugin_.listen(0, handle, &lc_) != 0) return "listen failed";
    const auto t0 = bench::Clock::now();
    // NCCL calls connect and accept again until each hands back a comm.
    while (sc_ == nullptr || rc_ == nullptr) {
      if (sc_ == nullptr && plugin_.connect(0, handle, &sc_) != 0) return "connect failed";
      if (rc_ == nullptr && plugin_.accept(lc_, &rc_) != 0) return "accept failed";
      if (bench::seconds_since(t0) > 30) return "connect/accept never finished";
    }
    src_.assign(std::max<std::size_t>(size, 1), 0x5a);
    dst_.assign(std::max<std::size_t>(size, 1), 0);
    size_ = size;
    if (plugin_.reg_mr(sc_, src_.data(), src_.size(), abi::kPtrHost, &smh_) != 0 ||
        plugin_.reg_mr(rc_, dst_.data(), dst_.size(), abi::kPtrHost, &rmh_) != 0)
      return "regMr failed";
    return "";
  }

  // A NULL request means "not now" (NCCL tries again on its next proxy step).
  bool post_send() {
    void* req = nullptr;
    while (req == nullptr)
      if (plugin_.isend(sc_, src_.data(), size_, 0, smh_, &req) != 0) return false;
    sends_.push_back(req);
    return true;
  }
  bool post_recv() {
    void* data[] = {dst_.data()};
    std::size_t sizes[] = {dst_.size()};
    int tags[] = {0};
    void* mhs[] = {rmh_};
    void* req = nullptr;
    while (req == nullptr)
      if (plugin_.irecv(rc_, 1, data, sizes, tags, mhs, &req) != 0) return false;
    recvs_.push_back(req);
    return true;
  }
  // NCCL's LL receive pattern (src/transport/net.cc, recvProxyProgress): the receive carries
  // NCCL_NET_OPTIONAL_RECV_COMPLETION; NCCL tests it until the plugin says done (at once where
  // the plugin honours the hint) and then learns of the data only from the buffer itself, as the
  // GPU polls LL flags; meanwhile the sender's proxy tests its send until done. Returns the mean time from isend to the whole message in the receiver's
  // buffer, in microseconds (negative: a call failed or a message never landed within 10 s).
  // With hint = false the same receive without the hint: NCCL's Simple pattern, tested until done.
  double landing_us(std::uint64_t pings, bool hint) {
    double total_s = 0;
    for (std::uint64_t i = 0; i < pings + kLlWarmup; ++i) {
      const auto stamp = static_cast<std::uint8_t>(1 + i % 250);
      std::fill(src_.begin(), src_.end(), stamp);
      void* data[] = {dst_.data()};
      std::size_t sizes[] = {dst_.size()};
      int tags[] = {0};
      void* mhs[] = {rmh_};
      void* rreq = nullptr;
      while (rreq == nullptr) {
        rreq = hint ? reinterpret_cast<void*>(abi::kOptionalRecvCompletion) : nullptr;
        if (plugin_.irecv(rc_, 1, data, sizes, tags, mhs, &rreq) != 0) return -1;
      }
      // NCCL's proxy posts its receives ahead of the data and tests each once at its next turn:
      // with the hint honoured that first test says done, before the sender has sent anything.
      int first_done = 0;
      if (plugin_.test(rreq, &first_done, nullptr) != 0) return -1;
      const auto t0 = bench::Clock::now();
      if (!post_send()) return -1;
      bool recv_done = first_done != 0;
      double landed_s = -1;  // when the whole message was first seen in the buffer
      auto landed = [&] { return size_ == 0 || (dst_.front() == stamp && dst_[size_ - 1] == stamp); };
      while (!recv_done || landed_s < 0 || !sends_.empty()) {
        if (!recv_done) {
          int done = 0;
          if (plugin_.test(rreq, &done, nullptr) != 0) return -1;
          recv_done = done != 0;
        }
        if (!reap_one(sends_, sent)) return -1;
        if (landed_s < 0 && landed()) landed_s = bench::seconds_since(t0);
        if (bench::seconds_since(t0) > 10) return -1;
      }
      if (i >= kLlWarmup) total_s += landed_s;
    }
    return total_s * 1e6 / static_cast<double>(pings);
  }

  // What one test() of a receive that has nothing to land costs, in ns: NCCL's proxy tests every
  // request it has in flight once a turn, so this is a turn's price per outstanding receive.
  double idle_test_ns(std::uint64_t calls) {
    if (!post_recv()) return -1;
    const auto t0 = bench::Clock::now();
    for (std::uint64_t i = 0; i < calls; ++i) {
      int done = 0;
      if (plugin_.test(recvs_.front(), &done, nullptr) != 0 || done != 0) return -1;
    }
    const double ns = bench::seconds_since(t0) * 1e9 / static_cast<double>(calls);
    // Let the receive complete, so the pair closes with nothing outstanding.
    if (!post_send()) return -1;
    while (!recvs_.empty() || !sends_.empty())
      if (!reap()) return -1;
    return ns;
  }

  // test() is the plugin's only progress call, as in NCCL: poll the oldest request of each comm.
  bool reap() {
    if (!reap_one(sends_, sent)) return false;
    return reap_one(recvs_, received);
  }
  std::size_t sends_in_flight() const { return sends_.size(); }
  std::size_t recvs_in_flight() const { return recvs_.size(); }
  std::vector<std::uint8_t>& src() { return src_; }
  const std::vector<std::uint8_t>& dst() const { return dst_; }

  std::uint64_t sent = 0, received = 0;

 private:
  bool reap_one(std::deque<void*>& reqs, std::uint64_t& count) {
    while (!reqs.empty()) {
      int done = 0;
      int sizes[1] = {-1};
      if (plugin_.test(reqs.front(), &done, sizes) != 0) return false;
      if (!done) break;
      reqs.pop_front();
      ++count;
    }
    return true;
  }

  static constexpr std::uint64_t kLlWarmup = 16;

  harness::Plugin plugin_;
  void* lc_ = nullptr;
  void* sc_ = nullptr;
  void* rc_ = nullptr;
  void* smh_ = nullptr;
  void* rmh_ = nullptr;
  std::vector<std::uint8_t> src_, dst_;
  std::size_t size_ = 0;
  std::deque<void*> sends_, recvs_;
};

// The bare connection's options, as the plugin would open it in this child.
Result<FabricOptions> plugin_like_options(const std::string& provider) {
  FabricOptions o;
  o.provider = provider;
  o.rails = 2;  // the plugin's default HA_NCCL_RAILS_PER_GROUP
  o.rail_addresses.assign(2, "127.0.0.1");
  // The same send semantics as the plugin's (a staged send completes once its bytes left): the
  // plugin's settings, read as the plugin reads them (HA_NCCL_STAGE_BYTES capped at rxm's SAR
  // limit in force, rxm_sizes; HA_NCCL_PROGRESS_US).
  const auto env = [](const char* n) { return std::getenv(n); };
  auto cfg = nccl::read_plugin_config(env, nccl::ha_variable_names());
  if (!cfg) return cfg.error();
  if (cfg.value().progress_us > 0) {
    o.staged_send_bytes = nccl::rxm_sizes(cfg.value(), env).staged_bytes;
    o.staged_send_slots = cfg.value().max_requests;
  }
  // The same key setting as the plugin's (run_provider set it for this child).
  auto key = hw::job_key_from_environment();
  if (!key) return key.error();
  o.key = key.value().key;
  return o;
}

Figures run_bare(const std::string& provider, const Load& l) {
  auto o = plugin_like_options(provider);
  if (!o) return {0, 0, o.error().message()};
  bench::FabricPair p;
  if (auto ok = p.open(o.value(), l.size); !ok) return {0, 0, ok.error().message()};
  return bench::measure(p, l);
}

// The LL pattern's landing time against the same receive without the hint (one plugin pair).
struct Landing {
  double plain_us = -1, hinted_us = -1, idle_test_ns = -1;
};
Landing run_landing(const std::string& plugin, const Load& l) {
  PluginPair p(plugin);
  if (auto err = p.open(l.size); !err.empty()) return {};
  Landing r;
  r.plain_us = p.landing_us(l.pings, false);
  r.hinted_us = p.landing_us(l.pings, true);
  r.idle_test_ns = p.idle_test_ns(20 * l.pings);
  return r;
}

// `pairs` bare connection pairs, each driven by a thread of its own at once: their rates summed.
// Whether the provider's endpoints in one process move bytes in parallel at all (issue 42: the
// plugin's streams did not make large messages faster on net).
Figures run_bare_parallel(const std::string& provider, const Load& l, int pairs) {
  auto o = plugin_like_options(provider);
  if (!o) return {0, 0, o.error().message()};
  std::vector<std::unique_ptr<bench::FabricPair>> ps;
  for (int i = 0; i < pairs; ++i) {
    ps.push_back(std::make_unique<bench::FabricPair>());
    if (auto ok = ps.back()->open(o.value(), l.size); !ok) return {0, 0, ok.error().message()};
  }
  std::vector<Figures> out(ps.size());
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < ps.size(); ++i)
    threads.emplace_back([&, i] { out[i] = bench::measure(*ps[i], l); });
  for (auto& t : threads) t.join();
  Figures sum;
  for (const Figures& f : out) {
    if (!f.error.empty()) return f;
    sum.msgs_per_s += f.msgs_per_s;
    sum.lat_us = std::max(sum.lat_us, f.lat_us);
  }
  return sum;
}

Figures run_plugin(const std::string& plugin, const Load& l) {
  PluginPair p(plugin);
  if (auto err = p.open(l.size); !err.empty()) return {0, 0, err};
  return bench::measure(p, l);
}

struct Options {
  bool quick = false;
  bool check = false;
  bool landing = false;
  int parallel = 0;
  int repeat = 1;
  std::vector<std::size_t> sizes;
  std::string plugin = RAILCHECK_NCCL_PLUGIN_PATH;  // the .so built with this bench
  std::string auth = "on";                          // on, off or both
  std::vector<std::string> providers = {"tcp;ofi_rxm"};
};

// One provider's rows; runs in a child of its own (the plugin's settings are per process).
int run_provider(const std::string& provider, bool auth, const Options& opt) {
  // A bench-local key (or none, explicitly): the bench measures the MAC, not the key's secrecy.
  ::unsetenv(hw::kJobKeyFileEnv);
  ::unsetenv(hw::kJobKeyEnv);
  ::unsetenv(hw::kJobAuthEnv);
  if (auth) {
    ::setenv(hw::kJobKeyEnv, "nccl_plugin_overhead bench key, 32+ bytes", 1);
  } else {
    ::setenv(hw::kJobAuthEnv, "off", 1);
  }
  ::setenv("HA_NCCL_PROVIDER", provider.c_str(), 1);
  ::setenv("HA_NCCL_RAIL_ADDRS", "127.0.0.1", 1);
  // ofi_rxm's sizes as the plugin sets them (rxm_sizes), set here before libfabric starts: rxm
  // reads them once per process, and this child starts libfabric (the query below, the bare
  // connection) before it loads the plugin, whose init would set them too late (issue 42: the
  // harness ran HA_NCCL_RXM_EAGER_BYTES=65536 with rxm's 16 KiB on both paths).
  const auto env = [](const char* n) { return std::getenv(n); };
  auto cfg = nccl::read_plugin_config(env, nccl::ha_variable_names());
  if (!cfg) {
    fmt::print("| {} | the plugin's settings are refused: {} |\n", provider, cfg.error().message());
    return 1;
  }
  for (const auto& [var, value] : nccl::rxm_sizes(cfg.value(), env).set) ::setenv(var.c_str(), value.c_str(), 0);
  if (auto ok = fabric::query_provider(provider, "127.0.0.1"); !ok) {
    fmt::print("| {} | not usable here: {} |\n", provider, ok.error().message());
    return 0;
  }
  const std::uint64_t q = opt.quick ? 10 : 1;
  // Windows of 16: under the plugin's 32 requests per comm (HA_NCCL_MAX_REQUESTS).
  std::vector<Load> loads = {
      {64, 20000 / q, 16, 2000 / q},
      {4096, 10000 / q, 16, 1000 / q},
      {64 << 10, 2000 / q, 16, 500 / q},
  };
  // 4 MiB only on request: where striping over HA_NCCL_STREAMS matters (issue 42), and slow on a
  // small host. A window of 4: 16 such messages would be 64 MiB in flight.
  if (std::find(opt.sizes.begin(), opt.sizes.end(), std::size_t{4} << 20) != opt.sizes.end())
    loads.push_back({std::size_t{4} << 20, 400 / q, 4, 100 / q});
  if (!opt.sizes.empty())
    std::erase_if(
        loads, [&](const Load& l) { return std::find(opt.sizes.begin(), opt.sizes.end(), l.size) == opt.sizes.end(); });
  for (Load& l : loads) l.check = opt.check;
  // One plugin instance for the whole child: NCCL loads a plugin once per process.
  int rc = 0;
  for (const Load& l : loads) {
    const std::string label = l.size >= (1 << 20)  ? fmt::format("{} MiB", l.size >> 20)
                              : l.size >= 1024 ? fmt::format("{} KiB", l.size >> 10)
                                               : fmt::format("{} B", l.size);
    if (opt.parallel > 0) {
      std::vector<double> one, many, ratio;
      for (int run = 0; run < opt.repeat; ++run) {
        const Figures a = run_bare_parallel(provider, l, 1);
        const Figures b = run_bare_parallel(provider, l, opt.parallel);
        if (!a.error.empty() || !b.error.empty()) {
          fmt::print("| {} | {} | failed: '{}' '{}' |\n", provider, label, a.error, b.error);
          rc = 1;
          break;
        }
        one.push_back(a.msgs_per_s), many.push_back(b.msgs_per_s), ratio.push_back(b.msgs_per_s / a.msgs_per_s);
      }
      if (ratio.size() == static_cast<std::size_t>(opt.repeat)) {
        const double gbs = static_cast<double>(l.size) / 1e9;
        fmt::print("| {} | {} | {} | {:.0f} ({:.2f} GB/s) | {:.0f} ({:.2f} GB/s) | {:.2f} |\n", provider, label,
                   opt.parallel, bench::median(one), bench::median(one) * gbs, bench::median(many),
                   bench::median(many) * gbs, bench::median(ratio));
      }
      std::fflush(stdout);
      continue;
    }
    if (opt.landing) {
      std::vector<double> plain, hinted, ratio, idle;
      for (int run = 0; run < opt.repeat; ++run) {
        const Landing r = run_landing(opt.plugin, l);
        const double a = r.plain_us, b = r.hinted_us;
        if (a < 0 || b < 0 || r.idle_test_ns < 0) {
          fmt::print("| {} | {} | failed: a call failed or a message never landed within 10 s |\n", provider, label);
          rc = 1;
          break;
        }
        plain.push_back(a), hinted.push_back(b), ratio.push_back(b / a), idle.push_back(r.idle_test_ns);
      }
      if (ratio.size() == static_cast<std::size_t>(opt.repeat))
        fmt::print("| {} | {} | {:.1f} | {:.1f} | {:.2f} | {:.0f} |\n", provider, label, bench::median(plain),
                   bench::median(hinted), bench::median(ratio), bench::median(idle));
      std::fflush(stdout);
      continue;
    }
    std::vector<double> bare_rate, plug_rate, bare_lat, plug_lat, rate_ratio, lat_ratio;
    std::string error;
    for (int run = 0; run < opt.repeat && error.empty(); ++run) {
      const Figures bare = run_bare(provider, l);
      const Figures plug = run_plugin(opt.plugin, l);
      if (!bare.error.empty() || !plug.error.empty()) {
        error = fmt::format("bare '{}', plugin '{}'", bare.error, plug.error);
        break;
      }
      bare_rate.push_back(bare.msgs_per_s), plug_rate.push_back(plug.msgs_per_s);
      bare_lat.push_back(bare.lat_us), plug_lat.push_back(plug.lat_us);
      rate_ratio.push_back(plug.msgs_per_s / bare.msgs_per_s), lat_ratio.push_back(plug.lat_us / bare.lat_us);
    }
    if (!error.empty()) {
      fmt::print("| {}{} | {} | failed: {} |\n", provider, auth ? "" : " (auth off)", label, error);
      rc = 1;
      continue;
    }
    using bench::median;
    fmt::print("| {}{} | {} | {:.0f} | {:.0f} | {:.2f} | {:.1f} | {:.1f} | {:.2f} | {:.2f} |\n", provider,
               auth ? "" : " (auth off)", label,
               median(bare_rate), median(plug_rate), median(rate_ratio), median(bare_lat), median(plug_lat),
               median(lat_ratio), fmt::join(lat_ratio, " "));
    std::fflush(stdout);
  }
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "Send/recv through the NCCL net plugin's ABI against the bare FabricConnection, 64 B to 64 KiB, tcp;ofi_rxm\n"
      "(or the providers --provider names, each in a child of its own).\n"
      "With --repeat N each size runs bare then plugin N times: medians, and the median of the paired ratios."};
  Options opt;
  app.add_flag("--quick", opt.quick, "a tenth of the messages (a smoke run, or a profile's baseline)");
  app.add_flag("--check", opt.check,
               "verify every latency message's bytes at the receiver (waits for each receive: not a timed run)");
  app.add_flag("--landing", opt.landing,
               "instead: NCCL's LL receive pattern (NCCL_NET_OPTIONAL_RECV_COMPLETION, then the buffer is watched) "
               "against the same receive tested until done; time from isend to the message in the buffer");
  app.add_option("--parallel", opt.parallel,
                 "instead: N bare connection pairs at once, each on a thread of its own, against one; summed rates")
      ->check(CLI::Range(1, 16));
  app.add_option("--repeat", opt.repeat, "bare/plugin pairs per size (medians reported)")->check(CLI::Range(1, 100));
  app.add_option("--plugin", opt.plugin, "the plugin to load (another build's, or one carried to another machine)")
      ->check(CLI::ExistingFile);
  app.add_option("--size", opt.sizes, "only these sizes (64, 4096, 65536; 4194304 only when named)")
      ->check(CLI::IsMember({64, 4096, 65536, 4194304}));
  app.add_option("--auth", opt.auth, "control messages with the job key's MAC (on), without (off), or both side by side")
      ->check(CLI::IsMember({"on", "off", "both"}));
  app.add_option("--provider", opt.providers, "libfabric providers to run, one after the other (tcp;ofi_rxm, net, shm)")
      ->capture_default_str();
  if (auto rc = bench::parse_options(app, argc, argv)) return *rc;
  fmt::print("nccl_plugin_overhead: {} | libfabric {}.{}\n", bench::machine_summary(), FI_MAJOR(fi_version()),
             FI_MINOR(fi_version()));
  fmt::print(
      "both ends in one process on loopback, one thread; latency = isend to the sender's completion; {} bare/plugin "
      "pair(s) per size, medians\n\n",
      opt.repeat);
  if (opt.parallel > 0)
    fmt::print(
        "| provider | size | pairs | msgs/s, one pair | msgs/s, pairs together | together/one |\n"
        "|---|---|---|---|---|---|\n");
  else if (opt.landing)
    fmt::print(
        "| provider | size | landed us, tested until done | landed us, LL hint | LL/tested | ns per test() of an idle "
        "receive |\n"
        "|---|---|---|---|---|---|\n");
  else
    fmt::print(
        "| provider | size | msgs/s bare | msgs/s plugin | plugin/bare | lat us bare | lat us plugin | plugin/bare | "
        "latency ratio per pair |\n"
        "|---|---|---|---|---|---|---|---|---|\n");
  std::fflush(stdout);
  int rc = 0;
  std::vector<bool> modes;
  if (opt.auth != "on") modes.push_back(false);
  if (opt.auth != "off") modes.push_back(true);
  for (const std::string& provider : opt.providers) {
    for (const bool auth : modes) {
      const pid_t pid = ::fork();
      if (pid == 0) {
        const int r = run_provider(provider, auth, opt);
        std::fflush(stdout);
        std::_Exit(r);
      }
      int status = 0;
      ::waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fmt::print("| {} | the run failed (status {:#x}) |\n", provider, status);
        rc = 1;
      }
    }
  }
  return rc;
}

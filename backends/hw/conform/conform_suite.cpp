#include "backends/hw/conform/conform_suite.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <functional>
#include <future>
#include <memory>
#include <sstream>

#include "backends/hw/auth/job_key_source.hpp"
#include "backends/hw/conform/auth_case.hpp"
#include "backends/hw/conform/message_stream.hpp"
#include "backends/hw/conform/netns_lab.hpp"
#include "backends/hw/conform/peer_channel.hpp"
#include "backends/hw/conform/peer_process.hpp"
#include "backends/hw/conform/write_imm_case.hpp"
#include "backends/hw/libfabric/fabric_connection.hpp"
#include "backends/hw/libfabric/provider_query.hpp"
#include "engine/handshake/handle_codec.hpp"

namespace railcheck::conform {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kCaseLimit = std::chrono::seconds(120);
constexpr auto kLineWait = std::chrono::seconds(30);

FabricOptions fabric_options(const std::string& provider, const std::vector<std::string>& rail_addresses) {
  FabricOptions o;
  o.provider = provider;
  o.rails = 2;
  o.rail_addresses = rail_addresses;
  // Late is not dead: the suite runs on shared machines, and a cut rail is reported at once.
  o.tunables.soft_rto = std::chrono::milliseconds(2000);
  o.tunables.heartbeat_interval = std::chrono::milliseconds(250);
  o.tunables.heartbeat_misses = 8;
  o.tunables.control_timeout = std::chrono::milliseconds(3000);
  o.key = job_key();  // both processes read the one run_suite set (auth_case.hpp)
  return o;
}

std::string to_hex(const std::vector<std::uint8_t>& b) {
  std::string s;
  for (auto x : b) s += fmt::format("{:02x}", x);
  return s;
}
std::vector<std::uint8_t> from_hex(const std::string& s) {
  std::vector<std::uint8_t> b;
  for (std::size_t i = 0; i + 1 < s.size(); i += 2)
    b.push_back(static_cast<std::uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
  return b;
}

// How the sender fails the primary in a failover case.
enum class CutKind { Silence, LinkDown };

std::string encode_case(const StreamSpec& s, CutKind cut, const std::vector<std::uint8_t>& handle) {
  auto opt = [](const auto& v) { return v ? static_cast<long long>(*v) : -1LL; };
  return fmt::format("stream {} {} {} {} {} {} {} {} {}", s.seed, s.messages, s.max_size, opt(s.fixed_size), s.window,
                     s.max_group, opt(s.cut_primary_after), cut == CutKind::LinkDown ? "link" : "silence",
                     to_hex(handle));
}

// Rail addresses of this side: the lab's, or loopback for tcp (shm addresses are names).
std::vector<std::string> rail_addresses(const std::string& provider, const NetnsLab* lab, int side) {
  if (lab != nullptr) {
    const NetnsSide& s = lab->side(side);
    return {s.rails[0].address, s.rails[1].address};
  }
  if (fabric::is_shm(provider)) return {};
  return {"127.0.0.1", "127.0.0.1"};
}

std::string human_size(std::size_t n) {
  if (n >= (1U << 20) && n % (1U << 20) == 0) return fmt::format("{} MiB", n >> 20);
  if (n >= 1024 && n % 1024 == 0) return fmt::format("{} KiB", n >> 10);
  return fmt::format("{} B", n);
}

class Suite {
 public:
  Suite(const SuiteOptions& o, std::vector<std::string> rails, PeerChannel& peer)
      : o_(o), rails_(std::move(rails)), peer_(peer) {}

  CaseResult handle_size() {
    CaseResult r{"handle size <= 128 B", false, 0, {}};
    const auto t0 = Clock::now();
    std::vector<std::uint8_t> handle;
    auto c = FabricConnection::listen(fabric_options(o_.provider, rails_), handle);
    r.millis = ms_since(t0);
    if (!c) return fail(r, c.error().message());
    auto decoded = decode_handle(handle);
    if (!decoded) return fail(r, "the handle does not decode: " + decoded.error().message());
    r.passed = handle.size() <= kHandleMaxSize;
    r.detail = fmt::format("{} bytes; primary {}", handle.size(), describe(decoded->handle));
    return r;
  }

  // What happens at the listener before the peer is told to connect (the wrong-key case): the
  // case's first detail, or why the case failed.
  using BeforePeer = std::function<Result<std::string>(FabricConnection&, const std::vector<std::uint8_t>& handle)>;

  // One message stream with the peer sending; with `inject_foreign`, a stranger's control
  // messages mid-stream (auth_case.hpp).
  CaseResult stream(std::string name, const StreamSpec& spec, CutKind cut = CutKind::Silence,
                    bool inject_foreign = false, const BeforePeer& before = {}) {
    CaseResult r{std::move(name), false, 0, {}};
    std::vector<std::uint8_t> handle;
    const auto t_listen = Clock::now();
    auto rx = FabricConnection::listen(fabric_options(o_.provider, rails_), handle);
    const double listen_ms = ms_since(t_listen);
    if (!rx) return fail(r, "listen: " + rx.error().message());
    const bool ready_at_listen = rx.value()->ready();
    std::string before_detail;
    std::uint64_t refused_before = 0;
    if (before) {
      auto b = before(*rx.value(), handle);
      if (!b) return fail(r, b.error().message());
      before_detail = std::move(b).value();
      refused_before = rx.value()->stats().control_refused;
    }
    if (!peer_.send_line(encode_case(spec, cut, handle))) return fail(r, "the peer process is gone");
    const auto t0 = Clock::now();
    StreamReceiver recv(*rx.value(), spec);
    std::optional<std::string> verdict;
    // The stranger runs on a thread of its own while this one keeps the receiver progressing
    // (on tcp;ofi_rxm a message to this endpoint completes only as the receiver reads its CQ).
    std::future<Result<int>> injecting;
    // What this thread's receiver has refused since the injection began, for the stranger to
    // know its messages were taken (auth_case.hpp: shm completes only some of its sends).
    std::atomic<std::uint64_t> refused_since_injection{0};
    std::uint64_t refused_at_injection = 0;
    const auto note_refused = [&] {
      if (injecting.valid()) refused_since_injection.store(rx.value()->control_refused() - refused_at_injection);
    };
    while (recv.error().empty() && !recv.done() && Clock::now() - t0 < kCaseLimit) {
      recv.step();
      note_refused();
      if (inject_foreign && !injecting.valid() && recv.verified() >= spec.messages / 2) {
        const std::string node = rails_.empty() ? std::string{} : rails_[0];
        refused_at_injection = rx.value()->control_refused();
        injecting = std::async(std::launch::async, [this, node, &handle, &refused_since_injection] {
          return inject_foreign_control(o_.provider, node, handle, refused_since_injection);
        });
      }
      if (!verdict) verdict = peer_.read_line(std::chrono::milliseconds(0));
      if (verdict && verdict->rfind("fail", 0) == 0) break;
    }
    // The foreign messages are in (or failed) before the connection is judged.
    std::optional<Result<int>> injected;
    if (injecting.valid()) {
      while (injecting.wait_for(std::chrono::milliseconds(0)) != std::future_status::ready) {
        recv.step();
        note_refused();
      }
      injected = injecting.get();
    }
    r.millis = ms_since(t0);
    // The sender keeps its endpoints up until this line (closing earlier would reset
    // connections the receiver still reads from).
    peer_.send_line("done");
    // A receiver that already failed does not wait long for a sender that may still be stuck.
    if (!verdict) verdict = peer_.read_line(recv.error().empty() ? kLineWait : std::chrono::seconds(2));
    if (!recv.error().empty())
      return fail(r, "receiver: " + recv.error() + (verdict ? "" : " (and the sender sent no verdict)"));
    if (!verdict) return fail(r, "the peer sent no verdict (it died or hung)");
    if (verdict->rfind("fail", 0) == 0) return fail(r, "sender: " + verdict->substr(5));
    if (!recv.done())
      return fail(
          r, fmt::format("timed out after {} of {} messages (seed {})", recv.verified(), spec.messages, spec.seed));
    // "ok <connect_us> <ready_right_after_connect>"
    std::istringstream in(verdict->substr(2));
    double connect_us = 0;
    int ready_after_connect = 1;
    in >> connect_us >> ready_after_connect;
    const ConnectionStats st = rx.value()->stats();
    r.passed = true;
    r.detail = fmt::format(
        "{} messages verified; listen {:.1f} ms (ready: {}), connect {:.1f} ms (ready: {}); "
        "failovers {}, on rail {}",
        recv.verified(), listen_ms, ready_at_listen ? "yes" : "no", connect_us / 1000.0,
        ready_after_connect != 0 ? "yes" : "no", st.failovers, st.active_rail);
    if (ready_at_listen || ready_after_connect != 0) {
      r.passed = false;
      r.detail += ": a comm was ready before the handshake could have run (connect/accept must not block)";
    }
    if (!before_detail.empty()) {
      // The stranger's refused requests are the only ones this listener may have refused.
      r.detail = before_detail + "; then the right peer: " + r.detail;
      if (st.control_refused != refused_before) {
        r.passed = false;
        r.detail += fmt::format(": {} control message(s) refused in all", st.control_refused);
      }
    }
    if (inject_foreign) {
      const std::uint64_t expected = 3;
      if (!injected || !injected->ok()) {
        r.passed = false;
        r.detail += ": the foreign messages could not be sent: " +
                    (injected ? injected->error().message() : std::string("the stream ended first"));
      } else if (st.control_refused != expected) {
        r.passed = false;
        r.detail += fmt::format(": {} foreign control message(s) refused, expected {}", st.control_refused, expected);
      } else {
        r.detail +=
            fmt::format("; {} foreign control messages refused ({})", st.control_refused, st.first_control_refusal);
      }
    }
    if (spec.cut_primary_after && (st.active_rail == 0 || st.failovers == 0)) {
      r.passed = false;
      r.detail += ": the primary was cut but the receiver never left it";
    }
    return r;
  }

  // One-sided writes with the peer as initiator and this side as the target (write_imm_case.hpp).
  CaseResult writes(std::string name, const WriteCaseSpec& spec) {
    CaseResult r{std::move(name), false, 0, {}};
    std::vector<std::uint8_t> handle;
    auto rx = FabricConnection::listen(fabric_options(o_.provider, rails_), handle);
    if (!rx) return fail(r, "listen: " + rx.error().message());
    WriteReceiver target(*rx.value(), spec);
    auto where = target.target();
    if (!where) return fail(r, "target: " + where.error().message());
    const auto t0 = Clock::now();
    if (!peer_.send_line(fmt::format("write {} {} {} {} {}", to_string(spec.kind), spec.seed, spec.writes,
                                     to_hex(handle), encode_target(where.value()))))
      return fail(r, "the peer process is gone");
    std::optional<std::string> verdict;
    // The target keeps progressing until the peer's verdict too: on tcp;ofi_rxm the
    // initiator's writes complete only as this side reads its CQ.
    while (target.error().empty() && !(target.done() && verdict) && Clock::now() - t0 < kCaseLimit) {
      target.step();
      if (!verdict) verdict = peer_.read_line(std::chrono::milliseconds(0));
      if (verdict && verdict->rfind("fail", 0) == 0) break;
    }
    r.millis = ms_since(t0);
    const std::string checked = target.done() ? target.verify() : std::string{};
    peer_.send_line("done");
    if (!verdict) verdict = peer_.read_line(kLineWait);
    if (!verdict) return fail(r, "the peer sent no verdict (it died or hung)");
    if (verdict->rfind("fail", 0) == 0) return fail(r, "initiator: " + verdict->substr(5));
    if (!target.error().empty()) return fail(r, "target: " + target.error());
    if (!target.done())
      return fail(r, fmt::format("timed out with {} immediates landed (seed {})", target.landed(), spec.seed));
    if (!checked.empty()) return fail(r, "target: " + checked);
    auto plan = plan_writes(spec);
    std::uint64_t bytes = 0;
    std::array<std::uint64_t, 2> per_rail{};
    for (const auto& w : plan->writes) {
      bytes += w.length;
      ++per_rail[std::min<std::uint32_t>(w.rail, 1)];
    }
    r.passed = true;
    r.detail = fmt::format(
        "{} writes ({} on rail 0, {} on rail 1), {} B verified; {} immediate value(s) each completed exactly once; "
        "over-arrivals 0",
        plan->writes.size(), per_rail[0], per_rail[1], bytes, plan->expected.size());
    return r;
  }

 private:
  static double ms_since(Clock::time_point t) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
  }
  static CaseResult fail(CaseResult r, std::string why) {
    r.passed = false;
    r.detail = std::move(why);
    return r;
  }
  const SuiteOptions& o_;
  std::vector<std::string> rails_;
  PeerChannel& peer_;
};

}  // namespace

std::vector<std::size_t> default_sizes() { return {0, 1, 4096, 65536, 1U << 20, 64U << 20}; }

Result<std::vector<CaseResult>> run_suite(const SuiteOptions& o) {
  // This process enters its namespace before any provider looks at the interfaces.
  const NetnsLab* lab = o.netns;
  if (lab != nullptr) {
    if (fabric::is_shm(o.provider))
      return Error{"--netns needs a network provider: shm never leaves this machine's memory",
                   "use --provider 'tcp;ofi_rxm'"};
    if (auto in = enter_netns(lab->side(0).netns); !in) return in.error();
  }
  const auto host_rails = rail_addresses(o.provider, lab, 0);
  const auto peer_rails = rail_addresses(o.provider, lab, 1);
  // rxm as the NCCL plugin runs it, here and in the peer started below (`railcheck conform` has
  // set and printed it already; a caller of this function gets the same): at rxm's default the
  // tcp;ofi_rxm suite spent half its time zeroing receive buffers.
  (void)fabric::size_rxm_like_the_plugin(o.provider);
  // Fail early and clearly when the provider is not here, before starting a peer.
  if (auto q = fabric::query_provider(o.provider, host_rails.empty() ? "" : host_rails[0]); !q) return q.error();
  ensure_job_key();  // before the fork: the peer inherits it
  // A key the caller set that cannot be used is an error, never a silent run without one.
  if (auto k = hw::job_key_from_environment(); !k) return k.error();
  auto peer_process = start_peer(PeerLaunch{o.self_exe, o.provider, peer_rails, lab, {}});
  if (!peer_process) return peer_process.error();
  std::vector<CaseResult> results;
  {
    PeerChannel peer(peer_process->fd);
    Suite suite(o, host_rails, peer);
    results.push_back(suite.handle_size());

    StreamSpec connect;
    connect.seed = o.seed;
    connect.messages = 16;
    connect.max_size = 256;
    auto c = suite.stream("connect/accept non-blocking", connect);
    results.push_back(std::move(c));

    for (std::size_t size : o.sizes.empty() ? default_sizes() : o.sizes) {
      StreamSpec s;
      s.seed = o.seed + size;
      s.fixed_size = size;
      // About 64 MiB per case, at least 2 and at most 256 messages.
      s.messages = std::clamp<std::uint64_t>((64U << 20) / std::max<std::size_t>(size, 1), 2, 256);
      s.window = size >= (8U << 20) ? 2 : 16;
      s.max_group = 1;
      results.push_back(suite.stream(fmt::format("send/recv exactly once, {}", human_size(size)), s));
    }

    StreamSpec grouped;
    grouped.seed = o.seed + 1000;
    grouped.messages = 400;
    grouped.max_size = 8192;
    grouped.max_group = 8;
    grouped.window = 32;
    results.push_back(suite.stream("grouped receives keep tag mapping and order", grouped));

    // Issue 46: a stranger reaches the receiver's rail 0 mid-stream (not in the netns lab, whose
    // rails this process's namespace does not reach the same way; not with RAILCHECK_JOB_AUTH=off).
    if (lab == nullptr && job_key()) {
      StreamSpec foreign;
      foreign.seed = o.seed + 2000;
      foreign.messages = 200;
      foreign.max_size = 4096;
      results.push_back(
          suite.stream("foreign control messages refused mid-stream (job key)", foreign, CutKind::Silence, true));
    }

    // Issue 46: a second peer under another job's key tries the listener first; it must fail its
    // own join, and the right peer's stream then runs on the same listener. Not in the netns
    // lab (the second peer would need the lab's rails), not with RAILCHECK_JOB_AUTH=off.
    if (lab == nullptr && job_key()) {
      StreamSpec after;
      after.seed = o.seed + 2500;
      after.messages = 100;
      after.max_size = 4096;
      const PeerLaunch launch{o.self_exe, o.provider, peer_rails, nullptr, {}};
      results.push_back(suite.stream("a peer with another job key fails its own join, the run undisturbed", after,
                                     CutKind::Silence, false,
                                     [&](FabricConnection& listener, const std::vector<std::uint8_t>& handle) {
                                       return run_wrong_key_peer(launch, listener, "join " + to_hex(handle));
                                     }));
    }

    WriteCaseSpec counted;
    counted.kind = WriteCaseKind::Counted;
    counted.seed = o.seed + 3000;
    counted.writes = 256;
    results.push_back(suite.writes("WRITE_IMM + ImmCounter, real completion order", counted));

    WriteCaseSpec zero;
    zero.kind = WriteCaseKind::ZeroLength;
    zero.seed = o.seed + 4000;
    zero.writes = 64;
    results.push_back(suite.writes("zero-length writes carry their immediate", zero));

    WriteCaseSpec sharded;
    sharded.kind = WriteCaseKind::Sharded;
    sharded.seed = o.seed + 5000;
    sharded.writes = 64;  // 1 MiB + 777 B over both rails
    results.push_back(suite.writes("sharding across rails: one expectation, once", sharded));

    StreamSpec cut;
    cut.seed = o.seed + 2000;
    cut.messages = 600;
    cut.max_size = 16384;
    cut.cut_primary_after = 200;
    results.push_back(suite.stream("failover: primary endpoint cut mid-stream (silenced, as a dead link)", cut));

    if (lab) {
      // Last: rail 0 stays down until the case ends. Nothing fails at once: the sender's
      // sends stop being acknowledged and its soft RTO decides.
      cut.seed = o.seed + 6000;
      results.push_back(suite.stream(fmt::format("failover: rail 0 link down mid-stream ({} in {})",
                                                 lab->side(1).rails[0].if_name, lab->side(1).netns),
                                     cut, CutKind::LinkDown));
    }
  }  // closes the channel: the peer reads EOF and exits
  if (const int code = wait_peer(peer_process->pid); code != 0)
    results.push_back(CaseResult{"peer process exit", false, 0, fmt::format("the peer exited with code {}", code)});
  return results;
}

namespace {

// The initiator's half of a write case: "write <kind> <seed> <writes> <handle> <target>".
void run_write_peer(PeerChannel& host, const PeerOptions& o, std::istringstream& in, const std::string& line) {
  std::string kind, hex;
  WriteCaseSpec spec;
  const bool parsed = static_cast<bool>(in >> kind >> spec.seed >> spec.writes >> hex);
  std::string rest;
  std::getline(in, rest);
  const auto k = write_case_kind(kind);
  const auto target = decode_target(rest);
  if (!parsed || !k || !target) {
    host.send_line("fail the peer could not parse the case: " + line);
    (void)host.read_line(kLineWait);
    return;
  }
  spec.kind = *k;
  const auto t0 = Clock::now();
  auto c = FabricConnection::connect(fabric_options(o.provider, o.rail_addresses), from_hex(hex));
  if (!c) {
    host.send_line("fail connect: " + c.error().message());
    (void)host.read_line(kLineWait);
    return;
  }
  WriteInitiator init(*c.value(), spec, *target);
  while (init.error().empty() && !init.done() && Clock::now() - t0 < kCaseLimit) init.step();
  if (!init.error().empty()) {
    host.send_line("fail " + init.error());
  } else if (!init.done()) {
    host.send_line("fail timed out before every write completed locally");
  } else {
    host.send_line("ok");
  }
  std::optional<std::string> done;
  const auto until = Clock::now() + kCaseLimit;
  while (!done && !host.closed() && Clock::now() < until) {
    c.value()->progress();
    done = host.read_line(std::chrono::milliseconds(0));
  }
}

}  // namespace

int run_peer(const PeerOptions& o) {
  PeerChannel host(o.fd);
  while (true) {
    auto line = host.read_line(std::chrono::minutes(10));
    if (!line) return host.closed() ? 0 : 1;
    std::istringstream in(*line);
    if (line->rfind("join ", 0) == 0) {
      // The wrong-key case's second peer: one join, then this process ends (auth_case.hpp).
      return run_join_peer(host, fabric_options(o.provider, o.rail_addresses), from_hex(line->substr(5)));
    }
    if (line->rfind("write ", 0) == 0) {
      std::string word;
      in >> word;
      run_write_peer(host, o, in, *line);
      continue;
    }
    std::string kind, cut_kind, hex;
    StreamSpec s;
    long long fixed = -1, cut = -1;
    in >> kind >> s.seed >> s.messages >> s.max_size >> fixed >> s.window >> s.max_group >> cut >> cut_kind >> hex;
    if (kind != "stream" || !in || (cut_kind != "silence" && cut_kind != "link") ||
        (cut_kind == "link" && o.cut_link.empty())) {
      host.send_line("fail the peer could not parse the case: " + *line);
      continue;
    }
    if (fixed >= 0) s.fixed_size = static_cast<std::size_t>(fixed);
    if (cut >= 0) s.cut_primary_after = static_cast<std::uint64_t>(cut);
    const auto t0 = Clock::now();
    auto c = FabricConnection::connect(fabric_options(o.provider, o.rail_addresses), from_hex(hex));
    const double connect_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (!c) {
      host.send_line("fail connect: " + c.error().message());
      (void)host.read_line(kLineWait);
      continue;
    }
    const bool ready_now = c.value()->ready();
    StreamSender::CutAction cut_action;
    bool link_down = false;
    if (cut_kind == "link") {
      cut_action = [&] {
        auto down = set_link_up(o.cut_link, false);
        link_down = down.ok();
        return down ? std::string{} : down.error().message();
      };
    }
    StreamSender tx(*c.value(), s, cut_action);
    while (tx.error().empty() && !tx.done() && Clock::now() - t0 < kCaseLimit) tx.step();
    if (!tx.error().empty()) {
      host.send_line("fail " + tx.error());
    } else if (!tx.done()) {
      host.send_line(fmt::format("fail timed out after {} of {} sends", tx.completed(), s.messages));
    } else {
      host.send_line(fmt::format("ok {:.0f} {}", connect_us, ready_now ? 1 : 0));
    }
    // Keep the endpoints up until the receiver is finished.
    std::optional<std::string> done;
    const auto until = Clock::now() + kCaseLimit;
    while (!done && !host.closed() && Clock::now() < until) {
      c.value()->progress();
      done = host.read_line(std::chrono::milliseconds(0));
    }
    if (link_down) (void)set_link_up(o.cut_link, true);  // the next case finds rail 0 as it was
  }
}

}  // namespace railcheck::conform

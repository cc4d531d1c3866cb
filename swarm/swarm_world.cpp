#include "swarm/swarm_world.hpp"

#include <algorithm>
#include <array>
#include <cmath>

#include "engine/core/rc_timeouts.hpp"
#include "engine/core/rng.hpp"
#include "models/nic_preset.hpp"

namespace railcheck::swarm {
namespace {

constexpr std::array<std::string_view, kFaultKinds> kKindNames = {
    "link-down",  "outage", "flap",          "one-way-loss",   "delay-spike",
    "congestion", "rnr",    "standby-death", "double-failure", "peer-stall"};

// Draws with the shapes the swarm wants: uniform integers, log-uniform durations (faults from
// 100 us to seconds are all interesting), and a coin.
class Draw {
 public:
  explicit Draw(std::uint64_t seed) : rng_(SeededRng(seed).fork(0x5a4a)) {}
  std::uint32_t between(std::uint32_t lo, std::uint32_t hi) {  // inclusive
    return lo + static_cast<std::uint32_t>(rng_.below(std::uint64_t{hi} - lo + 1));
  }
  bool chance(double p) { return rng_.unit() < p; }
  double unit() { return rng_.unit(); }
  Nanos log_between(Nanos lo, Nanos hi) {
    const double a = std::log(static_cast<double>(lo.count()));
    const double b = std::log(static_cast<double>(hi.count()));
    return Nanos{static_cast<std::int64_t>(std::exp(a + (b - a) * rng_.unit()))};
  }
  Nanos uniform(Nanos lo, Nanos hi) {
    return lo + Nanos{static_cast<std::int64_t>(static_cast<double>((hi - lo).count()) * rng_.unit())};
  }

 private:
  SeededRng rng_;
};

// Most worlds are small (thousands of seeds a minute on two cores); a tail reaches the limit.
std::uint32_t draw_ranks(Draw& d, std::uint32_t max_ranks) {
  const double u = d.unit();
  std::uint32_t n = 2;
  if (u < 0.40)
    n = 2;
  else if (u < 0.65)
    n = d.between(3, 4);
  else if (u < 0.85)
    n = d.between(5, 8);
  else if (u < 0.96)
    n = d.between(9, 16);
  else if (u < 0.995)
    n = d.between(17, 64);
  else
    n = d.between(65, 1024);
  return std::clamp(n, 2U, std::max(2U, max_ranks));
}

Topology draw_topology(Draw& d, const DrawLimits& limits) {
  Topology t;
  t.ranks = draw_ranks(d, limits.max_ranks);
  const double u = d.unit();
  t.rails = u < 0.15 ? 1 : u < 0.55 ? 2 : u < 0.85 ? d.between(3, 4) : d.between(5, 8);
  t.rails = std::min(t.rails, 4096 / t.ranks);  // the loader's ranks x rails limit
  t.paths_per_conn = t.rails == 1 ? 1 : d.chance(0.7) ? 2 : d.between(2, std::min(4U, t.rails));
  // Ordered (RC) presets only: the HA connection's in-order invariant is an RC one.
  std::vector<NicPreset> rc;
  for (const NicPreset& p : nic_presets())
    if (p.ordered) rc.push_back(p);
  t.nic = rc[d.between(0, static_cast<std::uint32_t>(rc.size() - 1))];
  return t;
}

Workload draw_workload(Draw& d, const Topology& topo, const HaTunables& engine) {
  Workload w;
  w.pattern = d.chance(0.7) ? TrafficPattern::Bidirectional : TrafficPattern::Unidirectional;
  w.message_bytes = std::uint64_t{1} << d.between(12, 22);  // 4 KiB .. 4 MiB
  w.channels = d.chance(0.75) ? 1 : d.between(2, 4);
  w.window = d.between(1, 16);
  w.recv_group = d.chance(0.7) ? 1 : d.between(2, std::min(4U, engine.max_recvs));
  // Messages per connection: log-uniform 4 .. 256, then cut so the world stays a few thousand
  // messages and a few GB at most (a 1024-rank world gets a handful each).
  const std::uint32_t streams = topo.ranks * (w.pattern == TrafficPattern::Bidirectional ? 2 : 1) * w.channels;
  std::uint32_t messages =
      static_cast<std::uint32_t>(std::exp(std::log(4.0) + (std::log(256.0) - std::log(4.0)) * d.unit()));
  messages = std::min(messages, std::max(2U, 6000 / streams));
  messages = std::min<std::uint64_t>(
      messages, std::max<std::uint64_t>(2, (std::uint64_t{4} << 30) / (w.message_bytes * streams)));
  w.messages = std::max(messages, w.recv_group);
  return w;
}

HaTunables draw_tunables(Draw& d, const DrawLimits& limits) {
  HaTunables e;
  e.replay = limits.policy ? *limits.policy : d.chance(0.6) ? ReplayPolicy::Resync : ReplayPolicy::Probe;
  e.qp.timeout = static_cast<std::uint8_t>(d.between(10, 16));
  e.qp.retry_cnt = static_cast<std::uint8_t>(d.between(1, 7));
  e.qp.rnr_retry = static_cast<std::uint8_t>(d.chance(0.8) ? 7 : d.between(1, 6));
  // Whole milliseconds: a scenario file (and HA_NCCL_RTO_MS) can say nothing finer.
  if (d.chance(0.4)) e.soft_rto = ms(d.log_between(ms(50), ms(3000)).count() / 1'000'000);
  e.soft_rto_max = std::max(ms(5000), ms(4 * e.initial_soft_rto().count() / 1'000'000 + 1));
  e.heartbeat_interval = ms(d.between(20, 200));
  e.heartbeat_misses = d.between(2, 4);
  e.control_timeout = ms(d.between(50, 400));
  e.probe_delay = ms(d.between(1, 20));
  e.false_alarm_window = ms(d.between(50, 200));
  e.liveness = d.chance(0.75);
  e.liveness_floor = ms(d.between(1, 10));
  e.liveness_max =
      ms(d.between(std::max<std::uint32_t>(50, static_cast<std::uint32_t>(to_millis(e.liveness_floor))), 500));
  e.liveness_misses = d.between(2, 5);
  return e;
}

// The rails a fault may hit: those some path uses (channel c's paths are rails c, c+1, ...).
LinkRef draw_link(Draw& d, const Scenario& sc) {
  const std::uint32_t used = std::min(sc.topology.rails, sc.workload.channels + sc.topology.paths_per_conn - 1);
  return LinkRef{d.between(0, sc.topology.ranks - 1), d.between(0, used - 1)};
}

void draw_fault(Draw& d, FaultKind k, Scenario& sc, Nanos active) {
  FaultProfile& f = sc.faults;
  const Nanos at = d.uniform(us(5), active);
  switch (k) {
    case FaultKind::LinkDown: f.downs.push_back({draw_link(d, sc), at, std::nullopt}); return;
    case FaultKind::Outage: f.downs.push_back({draw_link(d, sc), at, at + d.log_between(us(100), ms(800))}); return;
    case FaultKind::Flap: {
      const Nanos period = d.log_between(ms(1), ms(60));
      const auto down = Nanos{static_cast<std::int64_t>(static_cast<double>(period.count()) * (0.1 + 0.7 * d.unit()))};
      f.flaps.push_back({draw_link(d, sc), at, period, std::max(down, us(10)), d.between(1, 10)});
      return;
    }
    case FaultKind::OneWayLoss:
      f.losses.push_back(
          {draw_link(d, sc), at, at + d.log_between(ms(1), ms(600)), d.chance(0.5) ? 1.0 : 0.01 + 0.5 * d.unit()});
      return;
    case FaultKind::DelaySpike: {
      // A fixed extra (a full queue on the way), half the time with a per-packet spread on top.
      // The driver delays each message by the extra when it leaves (backends/sim/wire.hpp,
      // spike_delay), so a spike may end while a packet is on the wire (swarm seed 2776).
      const Nanos extra = d.log_between(us(10), ms(5));
      f.jitters.push_back({draw_link(d, sc), at, at + d.log_between(ms(1), ms(200)), extra,
                           d.chance(0.5) ? Nanos{0} : d.uniform(Nanos{0}, extra)});
      return;
    }
    case FaultKind::Congestion:
      f.incasts.push_back({draw_link(d, sc), at, at + d.log_between(ms(1), ms(200)), d.between(2, 8)});
      return;
    case FaultKind::Rnr: {
      sc.workload.receiver_hold = d.log_between(us(100), ms(20));
      const std::uint32_t r = d.between(0, sc.topology.ranks - 1);
      if (std::find(sc.workload.slow_ranks.begin(), sc.workload.slow_ranks.end(), r) == sc.workload.slow_ranks.end())
        sc.workload.slow_ranks.push_back(r);
      return;
    }
    case FaultKind::StandbyDeath: {
      LinkRef primary = draw_link(d, sc);
      f.downs.push_back({primary, at, std::nullopt});
      primary.rail = (primary.rail + 1) % sc.topology.rails;
      f.downs.push_back({primary, at + d.log_between(us(10), ms(700)), std::nullopt});
      return;
    }
    case FaultKind::DoubleFailure: {
      const std::optional<Nanos> back =
          d.chance(0.5) ? std::optional<Nanos>(d.log_between(ms(1), ms(500))) : std::nullopt;
      for (int i = 0; i < 2; ++i) {
        const Nanos t = at + d.uniform(Nanos{0}, us(500));
        f.downs.push_back({draw_link(d, sc), t, back ? std::optional<Nanos>(t + *back) : std::nullopt});
      }
      return;
    }
    case FaultKind::PeerStall:
      f.stalls.push_back({d.between(0, sc.topology.ranks - 1), at, d.log_between(ms(1), ms(400))});
      return;
  }
}

Nanos fault_end(const FaultProfile& f) {
  Nanos end{0};
  for (const auto& x : f.downs) end = std::max(end, x.until.value_or(x.at));
  for (const auto& x : f.flaps) end = std::max(end, x.start + x.period * x.count);
  for (const auto& x : f.jitters) end = std::max(end, x.until);
  for (const auto& x : f.losses) end = std::max(end, x.until);
  for (const auto& x : f.incasts) end = std::max(end, x.until);
  for (const auto& x : f.stalls) end = std::max(end, x.at + x.for_);
  return end;
}

std::size_t fault_count(const FaultProfile& f) {
  return f.downs.size() + f.flaps.size() + f.jitters.size() + f.losses.size() + f.incasts.size() + f.stalls.size();
}

}  // namespace

std::string_view to_string(FaultKind k) { return kKindNames.at(static_cast<std::size_t>(k)); }

Nanos transfer_estimate(const Scenario& sc) {
  const Workload& w = sc.workload;
  // The busiest NIC link carries every stream its rank starts on that rail (channels share
  // rails only when there are more channels than rails), in each direction.
  const std::uint32_t per_link =
      (w.channels + sc.topology.rails - 1) / sc.topology.rails * (w.pattern == TrafficPattern::Bidirectional ? 2 : 1);
  const double bits = static_cast<double>(w.messages) * static_cast<double>(w.message_bytes) * 8.0 * per_link;
  return from_seconds(bits / (sc.topology.nic.link_gbps * 1e9)) + us(20) * w.messages;
}

Nanos liveness_bound(const Scenario& sc) {
  const HaTunables& e = sc.engine;
  // One failover, worst case: detection (the HCA's retry window, the soft RTO at its ceiling
  // plus the window it may race, the liveness detector's misses at its largest timeout), then
  // the policy's probe delay and a control timeout, and heartbeats deciding a standby is sick.
  const Nanos detect = std::max({hardware_retry_window(e.qp), e.soft_rto_max + hardware_retry_window(e.qp),
                                 e.liveness_max * (e.liveness_misses + 2)});
  const Nanos one = detect + e.probe_delay + e.control_timeout + e.heartbeat_interval * (e.heartbeat_misses + 2);
  // Each path can fail once per fault, and once more at the end.
  const auto failovers = static_cast<std::int64_t>(sc.topology.paths_per_conn * (fault_count(sc.faults) + 1));
  // A slow receiver holds each re-post; RNR retries take the NAK delay each.
  const Nanos hold = sc.workload.slow_ranks.empty() ? Nanos{0} : sc.workload.receiver_hold * sc.workload.messages;
  return fault_end(sc.faults) + 8 * transfer_estimate(sc) + hold + failovers * one + sec(1);
}

DrawnWorld draw_world(std::uint64_t seed, const DrawLimits& limits) {
  Draw d(seed);
  DrawnWorld out;
  Scenario& sc = out.scenario;
  sc.name = "swarm-" + std::to_string(seed);
  sc.description = "drawn by railcheck swarm from seed " + std::to_string(seed);
  sc.seed = seed;
  sc.topology = draw_topology(d, limits);
  sc.engine = draw_tunables(d, limits);
  sc.workload = draw_workload(d, sc.topology, sc.engine);

  for (std::size_t k = 0; k < kFaultKinds; ++k)
    if (d.chance(0.5)) out.enabled |= KindSet{1} << k;
  std::vector<FaultKind> kinds;
  for (std::size_t k = 0; k < kFaultKinds; ++k) {
    const auto kind = static_cast<FaultKind>(k);
    // A kind that needs a second rail is off in a one-rail world.
    const bool needs_rails = kind == FaultKind::StandbyDeath;
    if ((out.enabled & bit(kind)) != 0 && !(needs_rails && sc.topology.rails < 2)) kinds.push_back(kind);
  }
  const double u = d.unit();
  const std::uint32_t n = kinds.empty() ? 0 : u < 0.1 ? 0 : u < 0.45 ? 1 : u < 0.75 ? 2 : u < 0.9 ? 3 : d.between(4, 8);
  // Faults land while the transfer runs: a run ends when its last message lands, and a fault
  // after that tests nothing.
  const Nanos active = std::max(us(200), transfer_estimate(sc) + transfer_estimate(sc) / 5);
  for (std::uint32_t i = 0; i < n; ++i) {
    const FaultKind k = kinds[d.between(0, static_cast<std::uint32_t>(kinds.size() - 1))];
    draw_fault(d, k, sc, active);
    out.drawn |= bit(k);
  }
  sc.time_limit = liveness_bound(sc);
  return out;
}

}  // namespace railcheck::swarm

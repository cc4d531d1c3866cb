#include "backends/sim/sim_world.hpp"

#include <algorithm>

#include "backends/sim/event_wire.hpp"

namespace railcheck::sim {
namespace {

// Which (sender, receiver) pairs carry a stream.
std::vector<std::pair<std::uint32_t, std::uint32_t>> stream_pairs(const Scenario& sc) {
  const std::uint32_t n = sc.topology.ranks;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
  if (n == 2) {
    pairs.emplace_back(0, 1);
    if (sc.workload.pattern == TrafficPattern::Bidirectional) pairs.emplace_back(1, 0);
    return pairs;
  }
  for (std::uint32_t r = 0; r < n; ++r) {
    pairs.emplace_back(r, (r + 1) % n);
    if (sc.workload.pattern == TrafficPattern::Bidirectional) pairs.emplace_back(r, (r + n - 1) % n);
  }
  return pairs;
}

// A QP number unique on its NIC: the driver, not the engine, owns resource numbering.
QpEndpoint make_endpoint(std::uint32_t conn, Side side, std::uint32_t path, std::uint32_t rank, std::uint32_t rail,
                         SeededRng& rng) {
  QpEndpoint ep;
  ep.qpn = ((conn * 2 + (side == Side::Receiver ? 1 : 0)) * 8 + path + 1) & kQpnMask;
  ep.lid = static_cast<std::uint16_t>(rank * 16 + rail + 1);
  ep.gid[0] = 0xfe;
  ep.gid[1] = 0x80;
  ep.gid[12] = static_cast<std::uint8_t>(rank >> 8);
  ep.gid[13] = static_cast<std::uint8_t>(rank);
  ep.gid[15] = static_cast<std::uint8_t>(rail);
  ep.psn = static_cast<std::uint32_t>(rng.next_u64()) & kPsnMask;
  return ep;
}

}  // namespace

SimWorld::SimWorld(const Scenario& sc, std::uint64_t seed, WireMode wire)
    : sc_(sc), wire_(wire), rng_(seed), epoch_(simgrid::s4u::Engine::get_clock()) {
  platform_ = std::make_unique<SimPlatform>(sc.topology);
  ranks_.resize(sc.topology.ranks);
  for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
    ranks_[r].id = r;
    if (wire != WireMode::Event) {
      ranks_[r].wake = simgrid::s4u::ConditionVariable::create();
      ranks_[r].mutex = simgrid::s4u::Mutex::create();
    }
  }

  const auto pairs = stream_pairs(sc);
  const std::uint32_t rails = sc.topology.rails;
  const std::uint32_t npaths = std::min(sc.topology.paths_per_conn, rails);
  SeededRng psn_rng = rng_.fork(1);
  // Where the coarse clock's ticks fall relative to the run: drawn from the seed (the lab's
  // faults land at arbitrary phases of it), only where the model is on, so no other run's draws move.
  if (const Nanos tick = sc.topology.nic.idle_rail_poll; tick > Nanos{0})
    idle_poll_phase_ = Nanos{static_cast<std::int64_t>(rng_.fork(2).below(static_cast<std::uint64_t>(tick.count())))};
  for (const auto& [s, r] : pairs) {
    for (std::uint32_t ch = 0; ch < sc.workload.channels; ++ch) {
      SimConnection c;
      c.id = static_cast<std::uint32_t>(conns_.size());
      c.sender_rank = s;
      c.receiver_rank = r;
      HaConnectionConfig send_cfg{ConnRole::Sender, {}, sc.engine};
      HaConnectionConfig recv_cfg{ConnRole::Receiver, {}, sc.engine};
      for (std::uint32_t p = 0; p < npaths; ++p) {
        const std::uint32_t rail = (ch + p) % rails;
        c.path_rail.push_back(rail);
        send_cfg.paths.push_back(PathConfig{PdId{rail}, make_endpoint(c.id, Side::Sender, p, s, rail, psn_rng)});
        recv_cfg.paths.push_back(PathConfig{PdId{rail}, make_endpoint(c.id, Side::Receiver, p, r, rail, psn_rng)});
      }
      c.sender = std::make_unique<HaConnection>(send_cfg);
      c.receiver = std::make_unique<HaConnection>(recv_cfg);
      c.sender_qps.resize(npaths);
      c.receiver_qps.resize(npaths);
      if (wire != WireMode::Event) {
        for (auto* qps : {&c.sender_qps, &c.receiver_qps})
          for (SimQp& q : *qps) {
            q.changed = simgrid::s4u::ConditionVariable::create();
            q.mutex = simgrid::s4u::Mutex::create();
          }
      }
      const bool slow =
          std::find(sc.workload.slow_ranks.begin(), sc.workload.slow_ranks.end(), r) != sc.workload.slow_ranks.end();
      c.workload = std::make_unique<StreamWorkload>(c.id, sc.workload, slow);
      ranks_[s].sides.emplace_back(c.id, Side::Sender);
      ranks_[r].sides.emplace_back(c.id, Side::Receiver);
      conns_.push_back(std::move(c));
    }
  }
  if (wire == WireMode::Event) event_ = std::make_unique<EventWire>(*this);
}

SimWorld::~SimWorld() = default;

Nanos SimWorld::now() const { return from_seconds(simgrid::s4u::Engine::get_clock() - epoch_); }

namespace {

// The path a control message arrived on (in band), if the item is one. Completions of this end's
// own WRs are read promptly: their rail was busy while they were outstanding.
std::optional<PathIndex> control_path(const InboxItem& item) {
  const auto* ev = std::get_if<Event>(&item.what);
  if (ev == nullptr) return std::nullopt;
  if (const auto* m = std::get_if<ControlReceived>(ev); m != nullptr && !m->channel.out_of_band) return m->channel.path;
  return std::nullopt;
}

}  // namespace

void SimWorld::post(std::uint32_t rank, InboxItem item) {
  // A driver that reads idle rails late (NicPreset::idle_rail_poll): what lands on a path where
  // this end has nothing in flight (no send waiting for completion, no receive posted: the
  // libfabric backend's idle rail, fabric_executor.cpp poll_rails) waits for the next tick of the
  // coarse clock, which every process of a host sees change at the same instant. So a request and
  // its answer, each landing on an idle rail, wait a part of a tick and then a whole one: the
  // answer leaves just after a tick and lands just after it, not at a random time (half a tick
  // each under-predicted the lab's failover by 3 ms; docs/validation.md).
  if (const Nanos late = sc_.topology.nic.idle_rail_poll; late > Nanos{0} && item.conn < conns_.size()) {
    SimConnection& c = conns_[item.conn];
    const auto path = control_path(item);
    auto& qps = c.qps(item.side);
    if (path && path->value < qps.size()) {
      const SimQp& qp = qps[path->value];
      if (qp.outstanding.empty() && qp.recv_queue.empty()) {
        const auto since = (item.at - idle_poll_phase_).count();
        item.at = idle_poll_phase_ + late * (since >= 0 ? since / late.count() + 1 : 0);
      }
      // One CQ per rail: a message read late holds back the ones after it on that rail.
      Nanos& not_before = idle_read_not_before_[{item.conn, static_cast<int>(item.side), path->value}];
      item.at = std::max(item.at, not_before);
      not_before = item.at;
    }
  }
  item.order = order_++;
  ranks_[rank].inbox.push(std::move(item));
  if (event_) {
    event_->poke(rank);
  } else {
    ranks_[rank].wake->notify_all();
  }
}

void SimWorld::qp_changed(SimQp& q) {
  if (event_) {
    event_->qp_changed(q);
  } else {
    q.notify();
  }
}

void SimWorld::note_progress(std::uint32_t conn) {
  SimConnection& c = conns_[conn];
  if (!c.counted_done && c.done()) {
    c.counted_done = true;
    ++done_;
  }
}

void SimWorld::stop() {
  stopping_ = true;
  for (std::uint32_t r = 0; r < ranks_.size(); ++r) {
    if (event_) {
      event_->ring(r);
    } else {
      ranks_[r].wake->notify_all();
    }
  }
}

}  // namespace railcheck::sim

// FabricConnection's rail-liveness probes: ProbeRail executed as a kernel-answered TCP probe
// (tcp_rail_probe.hpp), answers fed back as ProbeAnswered, the same contract as the SimGrid
// driver's launch_probe (backends/sim/wire.cpp): an answer carries the probe's nonce, and a probe
// that is not answered produces nothing; the engine's own timer turns silence into misses.
//
// Where the probe port travels: inside each rail's endpoint (psn of an IPv4 endpoint,
// endpoint_address.hpp), so it rides the existing handshake: the handle for rail 0, StandbyParams
// for the standbys. The receiver advertises a port on every rail or on none; the sender runs the
// detector only when the handle's rail 0 names one. A peer built before issue 28 sends psn 0: the
// detector stays off for the connection with one line on stderr, and failures are found as
// before, by completion errors and the soft RTO. Never a hang: a probe that cannot start is a
// probe not answered.
#include <fmt/format.h>

#include "backends/hw/libfabric/fabric_connection_state.hpp"

namespace railcheck {

void FabricConnection::State::open_probes(HaConnectionConfig& cfg, bool sender, bool peer_advertises_probes) {
  if (cfg.paths.empty() || !fabric::carries_probe_port(cfg.paths[0].local)) {
    // shm (names) and efa: no TCP under the rails. On EFA the probe is an fi_read answered by the
    // NIC (issue 28), not built yet; until then the detector is off, as before.
    cfg.tunables.liveness = false;
    return;
  }
  probes = std::make_unique<fabric::TcpRailProbes>(cfg.paths.size(), cfg.tunables.liveness_misses + 2);
  if (sender) {
    if (cfg.tunables.liveness && !peer_advertises_probes)
      fmt::print(stderr,
                 "railcheck fabric: the peer advertises no liveness probe port (a backend from before issue 28): the "
                 "rail-liveness detector is off for this connection; failures are found by completion errors and "
                 "the soft RTO\n");
    cfg.tunables.liveness = cfg.tunables.liveness && peer_advertises_probes;
    return;
  }
  // Receiver: a port on every rail or on none, so that a sender that saw rail 0's port never
  // fails over onto a rail it cannot probe.
  std::vector<std::uint16_t> ports;
  for (std::uint32_t r = 0; r < cfg.paths.size(); ++r) {
    auto port = probes->listen(r, cfg.paths[r].local);
    if (!port) {
      fmt::print(stderr, "railcheck fabric: rail {}: {}; advertising no probe port, the peer's detector stays off\n", r,
                 port.error().what);
      probes.reset();
      return;
    }
    ports.push_back(port.value());
  }
  for (std::uint32_t r = 0; r < cfg.paths.size(); ++r) fabric::set_probe_port(cfg.paths[r].local, ports[r]);
}

void FabricConnection::State::learn_probe_peer(PathIndex path, const QpEndpoint& remote) {
  if (!probes || engine->role() != ConnRole::Sender || !engine->liveness().enabled()) return;
  if (!probes->set_ends(path.value, rails.at(path.value).rail->local(), remote))
    fmt::print(stderr,
               "railcheck fabric: rail {}: the peer advertises no probe port there; a probe on it goes unanswered\n",
               path.value);
}

void FabricConnection::State::probe(const ProbeRail& p) {
  if (!probes || rails.at(p.path.value).cut) return;  // a dead link answers nothing
  probes->send(p.path.value, p.nonce);
}

// A receiver empties its probe listeners' accept queues every this many progress() calls: one
// accept(2) per rail, rare enough to cost nothing per message.
constexpr std::uint32_t kDrainListenersEvery = 4096;

void FabricConnection::State::poll_probes() {
  if (!probes) return;
  if (engine->role() == ConnRole::Receiver && ++probe_polls % kDrainListenersEvery == 0) probes->drain_listeners();
  if (probes->idle()) return;
  probe_answers.clear();
  probes->collect(probe_answers);
  if (probe_answers.empty()) return;
  for (const fabric::ProbeAnswer& a : probe_answers) deferred.push_back(ProbeAnswered{PathIndex{a.rail}, a.nonce});
  drain();
}

}  // namespace railcheck

#pragma once
// The SimGrid platform of a scenario: one host per NIC (rank r, rail k), one split-duplex link
// from each NIC to its rail's switch, and one star zone per rail (rail-only network: rails do
// not route to each other). Rank actors run on their rail-0 NIC host.
#include <cstdint>
#include <simgrid/s4u.hpp>
#include <vector>

#include "models/scenario.hpp"

namespace railcheck::sim {

class SimPlatform {
 public:
  // Builds into the current s4u::Engine. Call once, before any actor is created.
  explicit SimPlatform(const Topology& topo);

  simgrid::s4u::Host* nic_host(std::uint32_t rank, std::uint32_t rail) const { return hosts_[index(rank, rail)]; }
  simgrid::s4u::Link* nic_link(std::uint32_t rank, std::uint32_t rail) const { return links_[index(rank, rail)]; }
  // Where packets for a NIC are put (WireMode::Mailbox); its permanent receiver sits on the NIC host.
  simgrid::s4u::Mailbox* nic_mailbox(std::uint32_t rank, std::uint32_t rail) const {
    return mailboxes_[index(rank, rail)];
  }
  std::uint32_t ranks() const { return static_cast<std::uint32_t>(hosts_.size() / rails_); }
  std::uint32_t rails() const { return rails_; }
  // Whether the route from NIC a to NIC b on a rail is up: a's link up and b's link down, the
  // two directions it uses, are both on. SimGrid starts a transfer on it rather than failing it,
  // and an ACK from a to b arrives, only then. (SimGrid 3.32 turns a split-duplex link off by
  // turning off its two directions only, SplitDuplexLinkImpl::turn_off: the link's own is_on()
  // stays true, so it says nothing.)
  bool route_up(std::uint32_t a, std::uint32_t b, std::uint32_t rail) const {
    return static_cast<simgrid::s4u::SplitDuplexLink*>(nic_link(a, rail))->get_link_up()->is_on() &&
           static_cast<simgrid::s4u::SplitDuplexLink*>(nic_link(b, rail))->get_link_down()->is_on();
  }
  // One-way latency NIC a -> NIC b on a rail (two hops through the switch).
  double one_way_latency(std::uint32_t a, std::uint32_t b, std::uint32_t rail) const;

 private:
  std::size_t index(std::uint32_t rank, std::uint32_t rail) const {
    return static_cast<std::size_t>(rank) * rails_ + rail;
  }
  std::uint32_t rails_;
  std::vector<simgrid::s4u::Host*> hosts_;
  std::vector<simgrid::s4u::Link*> links_;
  std::vector<simgrid::s4u::Mailbox*> mailboxes_;
};

}  // namespace railcheck::sim

#include "backends/sim/sim_platform.hpp"

#include <fmt/format.h>

#include <string>

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {

SimPlatform::SimPlatform(const Topology& topo) : rails_(topo.rails) {
  auto* root = sg4::create_full_zone("fabric");
  hosts_.resize(static_cast<std::size_t>(topo.ranks) * rails_);
  links_.resize(hosts_.size());
  mailboxes_.resize(hosts_.size());
  const double bw_bytes = topo.nic.link_gbps * 1e9 / 8.0;
  const double latency = to_seconds(topo.nic.link_latency);
  for (std::uint32_t k = 0; k < rails_; ++k) {
    auto* rail = sg4::create_star_zone(fmt::format("rail{}", k));
    rail->set_parent(root);
    for (std::uint32_t r = 0; r < topo.ranks; ++r) {
      auto* host = rail->create_host(fmt::format("rank{}-nic{}", r, k), 1e9);
      auto* link =
          rail->create_split_duplex_link(fmt::format("rank{}-nic{}-link", r, k), bw_bytes)->set_latency(latency);
      rail->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}}, true);
      hosts_[index(r, k)] = host;
      links_[index(r, k)] = link;
      mailboxes_[index(r, k)] = sg4::Mailbox::by_name(host->get_name());
    }
    rail->seal();
  }
  root->seal();
}

double SimPlatform::one_way_latency(std::uint32_t a, std::uint32_t b, std::uint32_t rail) const {
  return nic_link(a, rail)->get_latency() + nic_link(b, rail)->get_latency();
}

}  // namespace railcheck::sim

#include "backends/sim/sim_platform.hpp"

#include <fmt/format.h>

#include <string>

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {

SimPlatform::SimPlatform(const Topology& topo, bool loopbacks) : rails_(topo.rails) {
  auto* root = sg4::create_full_zone("fabric");
  hosts_.resize(static_cast<std::size_t>(topo.ranks) * rails_);
  links_.resize(hosts_.size());
  mailboxes_.resize(hosts_.size());
  const double bw_bytes = topo.nic.link_gbps * 1e9 / 8.0;
  const double latency = to_seconds(topo.nic.link_latency);
  for (std::uint32_t k = 0; k < rails_; ++k) {
    auto* rail = sg4::create_star_zone(fmt::format("rail{}", k));
    rail->set_parent(root);
    sg4::Link* loopback = nullptr;
    if (loopbacks) {
      // A fat pipe: flows on it do not share bandwidth, so one link serves every host of the rail.
      loopback = rail->create_link(fmt::format("rail{}-loopback", k), 1e15)
                     ->set_latency(0.0)
                     ->set_sharing_policy(sg4::Link::SharingPolicy::FATPIPE);
    }
    for (std::uint32_t r = 0; r < topo.ranks; ++r) {
      auto* host = rail->create_host(fmt::format("rank{}-nic{}", r, k), 1e9);
      auto* link =
          rail->create_split_duplex_link(fmt::format("rank{}-nic{}-link", r, k), bw_bytes)->set_latency(latency);
      rail->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {{link, sg4::LinkInRoute::Direction::UP}}, true);
      if (loopback != nullptr)
        rail->add_route(host->get_netpoint(), host->get_netpoint(), nullptr, nullptr, {sg4::LinkInRoute{loopback}},
                        false);
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

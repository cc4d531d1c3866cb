// Why the fluid MoE solver and SimGrid part ways on some flat worlds (docs/routing.md): SimGrid
// 3.32's lazy, selective max-min update re-solves only the constraints it marks as modified, and
// a flow whose latency ends marks them from its first link only (System::
// update_modified_cnst_set_from_variable, still so upstream in 2026-08). When that first link is
// already marked, the flow's other links are not, and the solve shares the flow as if they did
// not exist. Five flows inside one node show it: GPUs 6 and 7 each send to GPUs 4 and 1, GPU 5 to
// GPU 4. Max-min gives GPU 4's downlink three thirds and GPU 1's two halves; SimGrid, creating
// the flows in that order, gives GPU 1's downlink 4/3 of its bandwidth. This test pins SimGrid's
// behaviour, and is why `route moe --simgrid` runs network/optim:Full (moe_sim.hpp): when it
// fails, SimGrid has been fixed, and its lazy mode should then give moe_figures_test.cpp's flat
// EP 32 and 64 figures too (before issue 34 it gave them 0.6 % and 6e-7 sooner).
#include <catch2/catch.hpp>
#include <simgrid/s4u.hpp>

#include "backends/sim/routing/gpu_fabric.hpp"

using namespace railcheck;
namespace sg4 = simgrid::s4u;

namespace {

struct DownlinkLoads {
  double gpu1 = 0, gpu4 = 0;  // usage / bandwidth of the NVLink downlinks into GPUs 1 and 4
};

// The five flows, started at once on an engine of `optim`, and the loads of the two downlinks
// they share, read after the 2 us latency and before any landing.
DownlinkLoads five_flow_loads(sim::NetworkOptim optim) {
  auto engine = sim::make_routing_engine(optim);
  sim::FabricParams f;
  const sim::GpuFabric fabric(8, f);
  const double t0 = sg4::Engine::get_clock();
  // (from, to, bytes): large enough that none lands before the probe.
  const struct {
    std::uint32_t from, to;
    double bytes;
  } flows[] = {{5, 4, 14784}, {6, 4, 29568}, {7, 4, 29568}, {6, 1, 22176}, {7, 1, 22176}};
  DownlinkLoads loads;
  sg4::Actor::create("flows", fabric.compute(0), [&] {
    std::vector<sg4::CommPtr> comms;
    for (const auto& fl : flows)
      comms.push_back(sg4::Comm::sendto_async(fabric.nvlink(fl.from), fabric.nvlink(fl.to), fl.bytes));
    sg4::this_actor::sleep_until(t0 + 2.05e-6);
    const auto load = [](const char* name) {
      const sg4::Link* l = sg4::Link::by_name(name);
      return l->get_usage() / l->get_bandwidth();
    };
    loads.gpu1 = load("gpu1-nvlink_DOWN");
    loads.gpu4 = load("gpu4-nvlink_DOWN");
    sg4::Comm::wait_all(comms);
  });
  engine->run();
  return loads;
}

}  // namespace

TEST_CASE("SimGrid 3.32's lazy update over-fills a link when a flow's first link is already marked",
          "[sim][routing][moe]") {
  const DownlinkLoads lazy = five_flow_loads(sim::NetworkOptim::Lazy);
  CHECK(lazy.gpu4 == Approx(1.0));
  CHECK(lazy.gpu1 == Approx(4.0 / 3.0));  // max-min: 1.0
}

TEST_CASE("SimGrid's Full optimisation shares the same five flows max-min, in the same process as the lazy one",
          "[sim][routing][moe]") {
  // Full, then lazy, then Full again: each engine gets the mode it asks for (gpu_fabric.hpp).
  for (const auto optim : {sim::NetworkOptim::Full, sim::NetworkOptim::Lazy, sim::NetworkOptim::Full}) {
    const DownlinkLoads loads = five_flow_loads(optim);
    const bool full = optim == sim::NetworkOptim::Full;
    INFO((full ? "Full" : "Lazy") << ": GPU 1 " << loads.gpu1 << ", GPU 4 " << loads.gpu4);
    CHECK(loads.gpu4 == Approx(1.0));
    CHECK(loads.gpu1 == Approx(full ? 1.0 : 4.0 / 3.0));
  }
}

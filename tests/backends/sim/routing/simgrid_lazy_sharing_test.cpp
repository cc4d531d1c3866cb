// Why the fluid MoE solver and SimGrid part ways on some flat worlds (docs/routing.md): SimGrid
// 3.32's lazy, selective max-min update re-solves only the constraints it marks as modified, and
// a flow whose latency ends marks them from its first link only (System::
// update_modified_cnst_set_from_variable, still so upstream in 2026-08). When that first link is
// already marked, the flow's other links are not, and the solve shares the flow as if they did
// not exist. Five flows inside one node show it: GPUs 6 and 7 each send to GPUs 4 and 1, GPU 5 to
// GPU 4. Max-min gives GPU 4's downlink three thirds and GPU 1's two halves; SimGrid, creating
// the flows in that order, gives GPU 1's downlink 4/3 of its bandwidth. This test pins SimGrid's
// behaviour: when it fails, SimGrid has been fixed, and moe_figures_test.cpp's worlds marked not
// within bandwidth should then agree with the fluid solver (check, then drop the marks).
#include <catch2/catch.hpp>
#include <simgrid/s4u.hpp>

#include "backends/sim/routing/gpu_fabric.hpp"

using namespace railcheck;
namespace sg4 = simgrid::s4u;

TEST_CASE("SimGrid 3.32's lazy update over-fills a link when a flow's first link is already marked",
          "[sim][routing][moe]") {
  auto engine = sim::make_routing_engine();
  sim::FabricParams f;
  const sim::GpuFabric fabric(8, f);
  const double t0 = sg4::Engine::get_clock();
  // (from, to, bytes): large enough that none lands before the probe.
  const struct {
    std::uint32_t from, to;
    double bytes;
  } flows[] = {{5, 4, 14784}, {6, 4, 29568}, {7, 4, 29568}, {6, 1, 22176}, {7, 1, 22176}};
  double down1 = 0, down4 = 0;
  sg4::Actor::create("flows", fabric.compute(0), [&] {
    std::vector<sg4::CommPtr> comms;
    for (const auto& fl : flows)
      comms.push_back(sg4::Comm::sendto_async(fabric.nvlink(fl.from), fabric.nvlink(fl.to), fl.bytes));
    sg4::this_actor::sleep_until(t0 + 2.05e-6);  // after the 2 us latency, before any landing
    const auto load = [](const char* name) {
      const sg4::Link* l = sg4::Link::by_name(name);
      return l->get_usage() / l->get_bandwidth();
    };
    down1 = load("gpu1-nvlink_DOWN");
    down4 = load("gpu4-nvlink_DOWN");
    sg4::Comm::wait_all(comms);
  });
  engine->run();
  CHECK(down4 == Approx(1.0));
  CHECK(down1 == Approx(4.0 / 3.0));  // max-min: 1.0
}

// The fluid MoE solver (backends/sim/routing/moe_fluid.hpp, `route moe`'s default) on worlds
// small enough to time by hand, each also run on SimGrid's engine (`--simgrid`,
// network/optim:Full): the same instants.
#include <catch2/catch.hpp>
#include <limits>

#include "backends/sim/routing/moe_sim.hpp"

using namespace railcheck;

namespace {

constexpr std::uint64_t kToken = 7392;  // bytes: one FP8 DeepSeek-V3 token with its scales

// A dispatch phase of `messages` (from, to, stage, tokens) on 16 GPUs in two nodes of 8.
routing::MoeTables fluid_world(std::initializer_list<routing::MoeMessage> messages) {
  routing::MoeTables t;
  t.dispatch.messages = messages;
  return t;
}

// The dispatch time with the fluid solver, checked against SimGrid's engine.
double fluid_dispatch(const routing::MoeTables& t, const sim::FabricParams& f) {
  const auto fluid = sim::simulate_moe(t, 16, f, kToken, 0, sim::MoeSolver::Fluid);
  const auto engine = sim::simulate_moe(t, 16, f, kToken, 0, sim::MoeSolver::SimGrid);
  // SimGrid's times are differences on a clock that earlier engines of this process left
  // running: allow that clock's rounding (a few ulps of it), nothing more. Alone in a process the
  // clock starts at 0 and this is 1e-12 relative; after the binary's other SimGrid runs it once
  // failed at 1e-12 with the clock at seconds (the phases are microseconds).
  const double clock_ulps = 16 * std::numeric_limits<double>::epsilon() * engine.engine_clock_at_start_s;
  INFO("SimGrid's clock at the start: " << engine.engine_clock_at_start_s << " s");
  CHECK(fluid.dispatch_s == Approx(engine.dispatch_s).epsilon(1e-12).margin(clock_ulps));
  return fluid.dispatch_s;
}

}  // namespace

TEST_CASE("the fluid MoE solver times hand-checkable phases as SimGrid does", "[sim][routing][moe]") {
  sim::FabricParams f;
  const double nvl = f.nvlink_gbytes_s * 1e9, nic = f.nic_gbps_per_gpu * 1e9 / 8;
  const double nvl_lat = 2 * to_seconds(f.nvlink_latency), nic_lat = 2 * to_seconds(f.nic_latency);
  const double b = kToken;
  const auto same = [](double x) { return Approx(x).epsilon(1e-12).margin(0); };
  using routing::Fabric;
  SECTION("one NVLink message: latency, then the whole link") {
    CHECK(fluid_dispatch(fluid_world({{0, 1, Fabric::Nvlink, 0, 1}}), f) == same(nvl_lat + b / nvl));
  }
  SECTION("three messages out of one GPU share its link in thirds") {
    const auto t =
        fluid_world({{0, 1, Fabric::Nvlink, 0, 1}, {0, 2, Fabric::Nvlink, 0, 1}, {0, 3, Fabric::Nvlink, 0, 1}});
    CHECK(fluid_dispatch(t, f) == same(nvl_lat + 3 * b / nvl));
  }
  SECTION("a short and a long message: halves until the short one lands, then the whole link") {
    const auto t = fluid_world({{0, 1, Fabric::Nvlink, 0, 1}, {0, 2, Fabric::Nvlink, 0, 3}});
    CHECK(fluid_dispatch(t, f) == same(nvl_lat + 2 * b / nvl + 2 * b / nvl));
  }
  SECTION("a forward leaves when its rank's last input lands") {
    const auto t = fluid_world({{0, 8, Fabric::Rdma, 0, 2}, {8, 9, Fabric::Nvlink, 1, 2}});
    CHECK(fluid_dispatch(t, f) == same(nic_lat + 2 * b / nic + nvl_lat + 2 * b / nvl));
  }
  SECTION("a receiver's link is shared too") {
    const auto t = fluid_world({{8, 0, Fabric::Rdma, 0, 1},
                                {9, 0, Fabric::Rdma, 0, 1},
                                {10, 0, Fabric::Rdma, 0, 1},
                                {11, 0, Fabric::Rdma, 0, 1}});
    CHECK(fluid_dispatch(t, f) == same(nic_lat + 4 * b / nic));
  }
}

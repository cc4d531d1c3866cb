#include "backends/sim/sim_run.hpp"

#include <chrono>
#include <cstdlib>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "backends/sim/rank_driver.hpp"
#include "backends/sim/wire.hpp"

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {
namespace {

// Turns links off and on at the scenario's instants. Delay spikes leave the links alone: each
// message waits out the spike in force when it leaves (wire.hpp, spike_delay).
void fault_injector(SimWorld* w) {
  const FaultProfile& faults = w->scenario().faults;
  struct Step {
    Nanos at;
    std::function<void()> apply;
  };
  std::vector<Step> steps;
  for (const LinkChange& ch : expand_link_changes(faults)) {
    auto* link = w->platform().nic_link(ch.link.rank, ch.link.rail);
    steps.push_back({ch.at, [link, up = ch.up] { up ? link->turn_on() : link->turn_off(); }});
  }
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.at < b.at; });
  for (const Step& s : steps) {
    const double wait = w->to_clock(s.at) - sg4::Engine::get_clock();
    if (wait > 0) sg4::this_actor::sleep_for(wait);
    s.apply();
  }
}

}  // namespace

std::optional<WireMode> parse_wire_mode(std::string_view s) {
  if (s == "sendto") return WireMode::Sendto;
  if (s == "mailbox") return WireMode::Mailbox;
  if (s == "event") return WireMode::Event;
  return std::nullopt;
}

std::string_view to_string(WireMode m) {
  switch (m) {
    case WireMode::Sendto: return "sendto";
    case WireMode::Mailbox: return "mailbox";
    case WireMode::Event: return "event";
  }
  return "?";
}

Result<WireMode> default_wire_mode() {
  const char* env = std::getenv("RAILCHECK_SIM_WIRE");
  if (env == nullptr || *env == '\0') return kDefaultWire;
  if (auto m = parse_wire_mode(env)) return *m;
  return Error{std::string("RAILCHECK_SIM_WIRE=") + env + ": unknown wire", "expected mailbox, event or sendto"};
}

RunOutput run_scenario(const Scenario& sc, std::uint64_t seed, const ProgressFn& progress, WireMode wire,
                       RunObserver* observer) {
  // SimGrid's configuration is process-global, context options are read when the first engine
  // starts, and models cannot change once set: configure once, on the command line of the
  // first engine of the process.
  static bool configured = false;
  std::vector<std::string> args = {"railcheck"};
  if (!configured) {
    // RDMA fabric, not TCP: no latency/bandwidth correction factors, and ACKs are modelled by
    // the wire actors themselves rather than as cross traffic.
    args.emplace_back("--cfg=network/model:CM02");
    args.emplace_back("--cfg=network/crosstraffic:0");
    // One short-lived actor per WR in flight: large runs have tens of thousands at once. Guard
    // pages cost two memory mappings per actor (vm.max_map_count is 65536 by default), and the
    // actors' stacks are shallow.
    args.emplace_back("--cfg=contexts/guard-size:0");
#ifdef RAILCHECK_SANITIZE
    // SimGrid's own (raw) context switching here too, as in the optimised tree (docs/ci.md,
    // "SimGrid's own contexts in both trees", says why ASan's reports stay sound); its
    // instrumented frames are several times larger, so the stacks are 8x the optimised tree's.
    args.emplace_back("--cfg=contexts/stack-size:256");
#else
    // 32 KiB: the whole backends/sim test suite and `sim_scale 128 8 4` ran with 16 KiB and a
    // guard page (12 KiB overflowed into it), so this is twice the largest depth seen. SimGrid
    // zeroes every stack it allocates: at 64 KiB that memset and its page faults were over half
    // the CPU time of sim_scale, and every live actor held its whole stack resident.
    args.emplace_back("--cfg=contexts/stack-size:32");
#endif
    args.emplace_back("--log=root.thresh:critical");
#if defined(__GLIBC__) && !defined(RAILCHECK_SANITIZE)
    // Every wire actor's stack comes from malloc and goes back when the actor ends. With glibc's
    // defaults the top of the heap is trimmed and faulted in again; keep freed memory in the
    // process so the next actor reuses warm pages. No simulated instant or outcome changes.
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
    configured = true;
  }
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  int argc = static_cast<int>(args.size());
  sg4::Engine engine(&argc, argv.data());

  SimWorld world(sc, seed, wire);
  world.set_observer(observer);
  if (wire != WireMode::Sendto) start_nic_receivers(world);
  for (std::uint32_t r = 0; r < sc.topology.ranks; ++r)
    sg4::Actor::create("rank" + std::to_string(r), world.platform().nic_host(r, 0), RankDriver(world, r));
  start_incast_flows(world);
  if (!expand_link_changes(sc.faults).empty())
    sg4::Actor::create("faults", world.platform().nic_host(0, 0), fault_injector, &world)->daemonize();

  const auto t0 = std::chrono::steady_clock::now();
  auto wall = [t0] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  if (progress) {
    // Looks at the wall clock every simulated millisecond; reports at most every 2 s of wall time.
    sg4::Actor::create("progress", world.platform().nic_host(0, 0), [&world, &progress, wall] {
      double last = 0;
      for (;;) {
        sg4::this_actor::sleep_for(1e-3);
        if (wall() - last >= 2.0) {
          last = wall();
          progress(world.now(), world.done_count(), world.connections().size(), last);
        }
      }
    })->daemonize();
  }
  engine.run();
  if (observer != nullptr) observer->at_end(world);
  RunOutput out{summarize(world, seed, wall()), std::move(world.traces())};
  return out;
}

}  // namespace railcheck::sim

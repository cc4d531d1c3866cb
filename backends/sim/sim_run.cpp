#include "backends/sim/sim_run.hpp"

#include <xbt/log.h>

#include <chrono>
#include <set>
#include <simgrid/s4u.hpp>
#include <string>

#include "backends/sim/rank_driver.hpp"

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {
namespace {

// Turns links off and on, and changes their latency, at the scenario's instants.
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
  for (const LinkJitter& j : faults.jitters) {
    auto* link = w->platform().nic_link(j.link.rank, j.link.rail);
    const double base = link->get_latency();
    steps.push_back({j.at, [link, base, extra = j.extra] { link->set_latency(base + to_seconds(extra)); }});
    steps.push_back({j.until, [link, base] { link->set_latency(base); }});
  }
  std::stable_sort(steps.begin(), steps.end(), [](const Step& a, const Step& b) { return a.at < b.at; });
  for (const Step& s : steps) {
    const double wait = w->to_clock(s.at) - sg4::Engine::get_clock();
    if (wait > 0) sg4::this_actor::sleep_for(wait);
    s.apply();
  }
}

void set_config_once(const std::string& key, const std::string& value) {
  static std::set<std::string> done;
  if (done.insert(key).second) sg4::Engine::set_config(key + ":" + value);
}

}  // namespace

RunOutput run_scenario(const Scenario& sc, std::uint64_t seed, const ProgressFn& progress) {
  int argc = 1;
  char name[] = "railcheck";
  char* argv[] = {name, nullptr};
  sg4::Engine engine(&argc, argv);
  xbt_log_control_set("root.thresh:critical");
  // RDMA fabric, not TCP: no latency/bandwidth correction factors, and ACKs are modelled by
  // the wire actors themselves rather than as cross traffic.
  // Configuration is process-global in SimGrid and models cannot change once set, so a second
  // run in the same process only sets what still differs.
  set_config_once("network/model", "CM02");
  set_config_once("network/crosstraffic", "0");
  // One short-lived actor per WR in flight: large runs have tens of thousands at once. Guard
  // pages cost two memory mappings per actor (vm.max_map_count is 65536 by default), and the
  // actors' stacks are shallow.
  set_config_once("contexts/guard-size", "0");
  set_config_once("contexts/stack-size", "64");
#ifdef RAILCHECK_SANITIZE
  // ASan cannot follow SimGrid's own stack switching; system threads it understands.
  set_config_once("contexts/factory", "thread");
#endif

  SimWorld world(sc, seed);
  for (std::uint32_t r = 0; r < sc.topology.ranks; ++r)
    sg4::Actor::create("rank" + std::to_string(r), world.platform().nic_host(r, 0), RankDriver(world, r));
  if (!sc.faults.empty())
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
  RunOutput out{summarize(world, seed, wall()), std::move(world.traces())};
  return out;
}

}  // namespace railcheck::sim

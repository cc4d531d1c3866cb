#include "backends/sim/routing/moe_sim.hpp"

#include <mutex>
#include <string>
#include <vector>

namespace sg4 = simgrid::s4u;

namespace railcheck::sim {
namespace {

struct PhaseRun {
  const GpuFabric& fabric;
  const routing::MoePhase& phase;
  std::uint64_t token_bytes;
  std::vector<std::uint32_t> stage0_into;                            // stage-0 messages still due per rank
  std::vector<std::vector<const routing::MoeMessage*>> stage1_from;  // per rank
  std::size_t outstanding = 0;
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr done = sg4::ConditionVariable::create();
};

void send(PhaseRun& run, const routing::MoeMessage* m);

// A rank whose stage-0 inputs have all landed forwards (or sends on) its stage-1 messages.
void release_stage1(PhaseRun& run, std::uint32_t rank) {
  for (const routing::MoeMessage* m : run.stage1_from[rank]) send(run, m);
}

void send(PhaseRun& run, const routing::MoeMessage* m) {
  sg4::Actor::create("msg", run.fabric.compute(m->from), [&run, m] {
    const auto [from, to] = run.fabric.route(m->from, m->to);
    sg4::Comm::sendto(from, to, m->tokens * run.token_bytes);
    if (m->stage == 0 && --run.stage0_into[m->to] == 0) release_stage1(run, m->to);
    std::unique_lock lock(*run.mutex);
    if (--run.outstanding == 0) run.done->notify_all();
  });
}

double run_phase(const GpuFabric& fabric, std::uint32_t ranks, const routing::MoePhase& phase,
                 std::uint64_t token_bytes) {
  PhaseRun run{fabric, phase, token_bytes, std::vector<std::uint32_t>(ranks, 0),
               std::vector<std::vector<const routing::MoeMessage*>>(ranks)};
  run.outstanding = phase.messages.size();
  if (run.outstanding == 0) return 0;
  for (const routing::MoeMessage& m : phase.messages) {
    if (m.stage == 0) ++run.stage0_into[m.to];
    if (m.stage == 1) run.stage1_from[m.from].push_back(&m);
  }
  const double t0 = sg4::Engine::get_clock();
  for (const routing::MoeMessage& m : phase.messages)
    if (m.stage == 0) send(run, &m);
  for (std::uint32_t r = 0; r < ranks; ++r)
    if (run.stage0_into[r] == 0) release_stage1(run, r);
  std::unique_lock lock(*run.mutex);
  run.done->wait(lock, [&] { return run.outstanding == 0; });
  return sg4::Engine::get_clock() - t0;
}

}  // namespace

MoeTiming simulate_moe(const routing::MoeTables& tables, std::uint32_t ranks, const FabricParams& fabric_params,
                       std::uint64_t dispatch_token_bytes, std::uint64_t combine_token_bytes) {
  auto engine = make_routing_engine();
  GpuFabric fabric(ranks, fabric_params);
  MoeTiming out;
  sg4::Actor::create("moe", fabric.compute(0), [&] {
    out.dispatch_s = run_phase(fabric, ranks, tables.dispatch, dispatch_token_bytes);
    out.combine_s = run_phase(fabric, ranks, tables.combine, combine_token_bytes);
  });
  engine->run();
  return out;
}

}  // namespace railcheck::sim

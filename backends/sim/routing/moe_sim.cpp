#include "backends/sim/routing/moe_sim.hpp"

#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "backends/sim/wire.hpp"

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

// The sendto driver (before issue 15, kept for one release): an actor per message, each a
// detached host-to-host Comm::sendto.
double run_phase_sendto(const GpuFabric& fabric, std::uint32_t ranks, const routing::MoePhase& phase,
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

// The mailbox driver: one actor carries every message of a phase. It moves (Actor::set_host) to
// the host a message leaves from and puts the message to the permanent receiver of the host it
// lands on (wire.hpp), then takes landings with wait_any. A rank's stage-1 messages leave at the
// instant its last stage-0 input lands, as with an actor per message: the same routes, sizes and
// instants, without a stack per message or a detached comm (docs/routing.md).
double run_phase_mailbox(const GpuFabric& fabric, std::uint32_t ranks, const routing::MoePhase& phase,
                         std::uint64_t token_bytes) {
  if (phase.messages.empty()) return 0;
  std::vector<std::uint32_t> stage0_into(ranks, 0);
  std::vector<std::vector<const routing::MoeMessage*>> stage1_from(ranks);
  for (const routing::MoeMessage& m : phase.messages) {
    if (m.stage == 0) ++stage0_into[m.to];
    if (m.stage == 1) stage1_from[m.from].push_back(&m);
  }
  static char payload;  // never read: the simulated bytes are what matters, and put refuses nullptr
  std::vector<sg4::CommPtr> comms;
  std::vector<const routing::MoeMessage*> carried;  // comms[i] carries carried[i]
  auto post = [&](const routing::MoeMessage* m) {
    const auto [from, to] = fabric.route(m->from, m->to);
    if (sg4::this_actor::get_host() != from) sg4::this_actor::set_host(from);
    comms.push_back(sg4::Mailbox::by_name(to->get_name())->put_async(&payload, m->tokens * token_bytes));
    carried.push_back(m);
  };
  const double t0 = sg4::Engine::get_clock();
  for (const routing::MoeMessage& m : phase.messages)
    if (m.stage == 0) post(&m);
  for (std::uint32_t r = 0; r < ranks; ++r)
    if (stage0_into[r] == 0)
      for (const routing::MoeMessage* m : stage1_from[r]) post(m);
  while (!comms.empty()) {
    const auto i = static_cast<std::size_t>(sg4::Comm::wait_any(comms));
    const routing::MoeMessage* m = carried[i];
    comms[i] = std::move(comms.back());
    comms.pop_back();
    carried[i] = carried.back();
    carried.pop_back();
    if (m->stage == 0 && --stage0_into[m->to] == 0)
      for (const routing::MoeMessage* next : stage1_from[m->to]) post(next);
  }
  return sg4::Engine::get_clock() - t0;
}

// A permanent receiver on every host a message of either phase lands on.
void start_receivers(const GpuFabric& fabric, const routing::MoeTables& tables) {
  std::set<sg4::Host*> landing;
  for (const routing::MoePhase* phase : {&tables.dispatch, &tables.combine})
    for (const routing::MoeMessage& m : phase->messages) landing.insert(fabric.route(m.from, m.to).second);
  for (sg4::Host* h : landing) start_permanent_receiver(h, sg4::Mailbox::by_name(h->get_name()));
}

}  // namespace

MoeTiming simulate_moe(const routing::MoeTables& tables, std::uint32_t ranks, const FabricParams& fabric_params,
                       std::uint64_t dispatch_token_bytes, std::uint64_t combine_token_bytes, WireMode wire) {
  auto engine = make_routing_engine();
  GpuFabric fabric(ranks, fabric_params);
  const auto run_phase = wire == WireMode::Sendto ? run_phase_sendto : run_phase_mailbox;
  if (wire != WireMode::Sendto) start_receivers(fabric, tables);
  MoeTiming out;
  sg4::Actor::create("moe", fabric.compute(0), [&] {
    out.dispatch_s = run_phase(fabric, ranks, tables.dispatch, dispatch_token_bytes);
    out.combine_s = run_phase(fabric, ranks, tables.combine, combine_token_bytes);
  });
  engine->run();
  return out;
}

}  // namespace railcheck::sim

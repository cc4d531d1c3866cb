#include "backends/sim/routing/moe_sim.hpp"

#include <cassert>
#include <mutex>
#include <set>
#include <simgrid/s4u.hpp>
#include <string>
#include <vector>

#include "backends/sim/routing/moe_fluid.hpp"

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

// Where the mailbox driver learns of landings. Each landing host's receiver takes the message
// off its mailbox, appends it here and wakes the driver: O(1) per landing, where a wait_any over
// every comm in flight costs O(comms in flight) per landing, which made a phase's cost grow with
// the square of its messages (docs/routing.md, "MoE at EP 256").
struct Landings {
  sg4::MutexPtr mutex = sg4::Mutex::create();
  sg4::ConditionVariablePtr landed_cv = sg4::ConditionVariable::create();
  std::vector<const routing::MoeMessage*> landed;  // in landing order, not yet taken by the driver

  // Blocks until at least one message has landed; hands back every one that has.
  std::vector<const routing::MoeMessage*> take(std::vector<const routing::MoeMessage*> into) {
    into.clear();
    std::unique_lock lock(*mutex);
    landed_cv->wait(lock, [this] { return !landed.empty(); });
    into.swap(landed);
    return into;
  }
};

// The mailbox driver: one actor carries every message of a phase. It moves (Actor::set_host) to
// the host a message leaves from and puts the message to the permanent receiver of the host it
// lands on; that receiver reports the landing (Landings). A rank's stage-1 messages leave at the
// instant its last stage-0 input lands, as with an actor per message: the same routes, sizes and
// instants, without a stack per message or a detached comm (docs/routing.md).
double run_phase_mailbox(const GpuFabric& fabric, std::uint32_t ranks, const routing::MoePhase& phase,
                         std::uint64_t token_bytes, Landings& landings) {
  if (phase.messages.empty()) return 0;
  std::vector<std::uint32_t> stage0_into(ranks, 0);
  std::vector<std::vector<const routing::MoeMessage*>> stage1_from(ranks);
  for (const routing::MoeMessage& m : phase.messages) {
    if (m.stage == 0) ++stage0_into[m.to];
    if (m.stage == 1) stage1_from[m.from].push_back(&m);
  }
  std::vector<sg4::CommPtr> comms;  // every put of the phase, waited once it has landed
  comms.reserve(phase.messages.size());
  auto post = [&](const routing::MoeMessage* m) {
    const auto [from, to] = fabric.route(m->from, m->to);
    if (sg4::this_actor::get_host() != from) sg4::this_actor::set_host(from);
    // The payload is the message itself, for the receiver to report; its size is simulated.
    auto* payload = const_cast<routing::MoeMessage*>(m);
    comms.push_back(sg4::Mailbox::by_name(to->get_name())->put_async(payload, m->tokens * token_bytes));
  };
  const double t0 = sg4::Engine::get_clock();
  for (const routing::MoeMessage& m : phase.messages)
    if (m.stage == 0) post(&m);
  for (std::uint32_t r = 0; r < ranks; ++r)
    if (stage0_into[r] == 0)
      for (const routing::MoeMessage* m : stage1_from[r]) post(m);
  std::size_t outstanding = phase.messages.size();
  std::vector<const routing::MoeMessage*> batch;
  while (outstanding > 0) {
    batch = landings.take(std::move(batch));
    assert(batch.size() <= outstanding);
    outstanding -= batch.size();
    for (const routing::MoeMessage* m : batch)
      if (m->stage == 0 && --stage0_into[m->to] == 0)
        for (const routing::MoeMessage* next : stage1_from[m->to]) post(next);
  }
  const double end = sg4::Engine::get_clock();
  assert(comms.size() == phase.messages.size());
  sg4::Comm::wait_all(comms);  // all landed: returns at once, and releases the sender side
  return end - t0;
}

// A permanent receiver on every host a message of either phase lands on; it reports each
// landing to `landings`. A put to its mailbox starts at once, from the putting actor's host to
// this host (wire.hpp, start_permanent_receiver).
void start_receivers(const GpuFabric& fabric, const routing::MoeTables& tables, Landings& landings) {
  std::set<sg4::Host*> landing;
  for (const routing::MoePhase* phase : {&tables.dispatch, &tables.combine})
    for (const routing::MoeMessage& m : phase->messages) landing.insert(fabric.route(m.from, m.to).second);
  for (sg4::Host* h : landing) {
    sg4::Mailbox* mbox = sg4::Mailbox::by_name(h->get_name());
    auto actor = sg4::Actor::create("rx", h, [mbox, &landings] {
      for (;;) {
        const auto* m = mbox->get<routing::MoeMessage>();
        std::unique_lock lock(*landings.mutex);
        landings.landed.push_back(m);
        landings.landed_cv->notify_one();
      }
    });
    actor->daemonize();
    mbox->set_receiver(actor);
  }
}

}  // namespace

MoeTiming simulate_moe(const routing::MoeTables& tables, std::uint32_t ranks, const FabricParams& fabric_params,
                       std::uint64_t dispatch_token_bytes, std::uint64_t combine_token_bytes, MoeSolver solver,
                       WireMode wire) {
  if (solver == MoeSolver::Fluid) {
    // As in a fresh process on SimGrid: the clock starts at 0 and the combine follows the
    // dispatch at once, so its instants round as SimGrid's do.
    MoeTiming out;
    out.dispatch_s = fluid_moe_phase(tables.dispatch, ranks, fabric_params, dispatch_token_bytes, 0.0);
    out.combine_s = fluid_moe_phase(tables.combine, ranks, fabric_params, combine_token_bytes, out.dispatch_s);
    return out;
  }
  auto engine = make_routing_engine(NetworkOptim::Full);
  GpuFabric fabric(ranks, fabric_params);
  Landings landings;
  if (wire != WireMode::Sendto) start_receivers(fabric, tables, landings);
  auto run_phase = [&](const routing::MoePhase& phase, std::uint64_t token_bytes) {
    if (wire == WireMode::Sendto) return run_phase_sendto(fabric, ranks, phase, token_bytes);
    return run_phase_mailbox(fabric, ranks, phase, token_bytes, landings);
  };
  MoeTiming out;
  sg4::Actor::create("moe", fabric.compute(0), [&] {
    out.engine_clock_at_start_s = sg4::Engine::get_clock();
    out.dispatch_s = run_phase(tables.dispatch, dispatch_token_bytes);
    out.combine_s = run_phase(tables.combine, combine_token_bytes);
  });
  engine->run();
  // An engine made elsewhere in this process after this one (sim_run.cpp, which sets no
  // network/optim of its own) gets SimGrid's default again.
  set_network_optim(NetworkOptim::Lazy);
  return out;
}

}  // namespace railcheck::sim

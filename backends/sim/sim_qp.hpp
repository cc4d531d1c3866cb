#pragma once
// What the simulated HCA knows about one end of an RC QP: its state, PSNs, the receive queue,
// and the sends that have not completed. Wire actors (wire.cpp) move packets between two ends;
// this file holds no timing.
#include <boost/container/deque.hpp>
#include <boost/container/options.hpp>
#include <cstdint>
#include <map>
#include <optional>
#include <simgrid/s4u.hpp>
#include <vector>

#include "engine/core/engine_assert.hpp"
#include "engine/core/work_request.hpp"

namespace railcheck::sim {

// What the simulated HCA keeps of a posted WR: what landing, completing and flushing it read.
// Not the engine's WorkRequest (104 bytes of SGE and tag lists): the send queue, the receive
// queue and each packet in flight hold one, and in sim_scale every message is in flight at once
// (docs/benchmarks.md, 2026-11-29, "what is live at the memory peak": those copies were 35 MB
// of the 1024 x 8 peak; with PostedWr its RSS went from 415 to 398 MiB).
struct PostedWr {
  WrId id{};
  std::uint64_t bytes = 0;       // WorkRequest::total_bytes()
  std::uint64_t first_addr = 0;  // the first SGE's address, where there is one (has_sge)
  std::optional<std::uint32_t> imm;
  WrOpcode opcode = WrOpcode::Send;
  bool has_sge = false;

  static PostedWr of(const WorkRequest& wr) {
    PostedWr p{.id = wr.id, .bytes = wr.total_bytes(), .imm = wr.imm, .opcode = wr.opcode, .has_sge = !wr.sges.empty()};
    if (p.has_sge) p.first_addr = wr.sges.front().addr;
    return p;
  }
};

struct SimQp {
  QpState state = QpState::Reset;
  // Bumped whenever the QP is moved to ERR or RESET: wire actors carrying packets of an older
  // generation stop retrying, and their ACKs are ignored.
  std::uint32_t generation = 0;

  // Requester side.
  std::uint32_t next_psn = 0;                     // PSN for the next posted send
  std::uint32_t next_completion_psn = 0;          // completions are reported in PSN order
  std::map<std::uint32_t, PostedWr> outstanding;  // psn -> send not yet completed
  double host_free_at = 0;  // simulated seconds: the host has prepared every send before this (NicPreset::host_gbps)

  // Responder side.
  std::uint32_t expected_psn = 0;  // next PSN that may land
  // Posted receives, in order. Boost's deque allocates nothing until the first push (std::deque
  // allocates its map and a 512-byte node at construction): a requester QP never holds one, and
  // there are 4 QPs per connection. Its blocks are 256 bytes, not its default 512: a receiver
  // posts a window of receives (4 in sim_scale), and every receiving QP of a run holds a block.
  boost::container::deque<PostedWr, void, boost::container::deque_options_t<boost::container::block_bytes<256>>>
      recv_queue;

  // WireMode::Event: the packets (EventWire ids) waiting for this QP to change, oldest first.
  std::vector<std::uint32_t> waiters;

  // Wakes wire actors waiting for PSN order, an RNR retry, or a state change. The actor wires
  // only: SimWorld creates them there and leaves them null on the event wire (4 QPs per
  // connection; two SimGrid objects each are memory no event-wire run touches).
  simgrid::s4u::ConditionVariablePtr changed;
  simgrid::s4u::MutexPtr mutex;

  bool accepts_packets() const { return state == QpState::Rtr || state == QpState::Rts; }
  void notify() {
    RAILCHECK_ASSERT(changed != nullptr, "a QP's condition variable exists on the actor wires only");
    changed->notify_all();
  }
};

}  // namespace railcheck::sim

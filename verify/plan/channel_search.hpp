#pragma once
// The channel-agreement world (channel_world.hpp) as a world for verify/explorer.hpp, so that
// `railcheck check` searches it like the failover world: dfs, bfs or seeded random walks, the
// same state and depth bounds, a counterexample as a list of steps. Each step fixes one part of
// the communicator — the rank count, the work FIFO depth, what each ordered pair sends, how many
// collectives and on how many channels, which ranks' p2p copies finished before their group
// ended (pre-scheduling policies only) — and the last one schedules every rank and checks the
// invariants; the world then ends. The steps form a tree, so every state is distinct.
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/core/state_hash.hpp"
#include "verify/invariant.hpp"
#include "verify/plan/channel_world.hpp"

namespace railcheck::plan {

struct ChannelModel;

struct ChannelStep {
  enum class Kind : std::uint8_t {
    Ranks,         // value: the rank count
    FifoDepth,     // value: the work FIFO depth
    Transfer,      // rank a sends value bytes to rank b (0: nothing)
    Collectives,   // value: how many collectives every rank launches
    CollChannels,  // collective a runs on value channels
    P2pDone,       // rank a's p2p copies finished before its group ended (value 1) or not (0)
  };
  Kind kind = Kind::Ranks;
  std::uint32_t a = 0;
  std::uint32_t b = 0;
  std::uint64_t value = 0;
  bool operator==(const ChannelStep&) const = default;
};

// "ranks 2", "fifo-depth 4", "pair 0->1 65536", "pair 1->1 none", "collectives 1",
// "collective 0 channels 2", "rank 1 p2p done before group end": what trace files store.
std::string to_string(const ChannelStep& s);

class ChannelAgreementWorld {
 public:
  using ChoiceType = ChannelStep;
  // Error: an unknown scheduling policy.
  static Result<ChannelAgreementWorld> make(const ChannelModel& m);

  std::vector<ChannelStep> choices() const;
  void apply(const ChannelStep& s);
  std::uint64_t fingerprint() const { return hash_.value(); }

  // Set once the last step was taken: the invariant the world violates and why, or nothing.
  const std::optional<ChannelCounterexample>& verdict() const { return verdict_; }
  const SchedulePolicy& policy() const { return setup_->policy; }
  // The communicator built so far, as a schedule trace (`railcheck replay-sched` reads it).
  std::string sched_trace() const;

 private:
  struct Setup {
    SchedulePolicy policy;
    ChannelWorldBound bound;
  };
  explicit ChannelAgreementWorld(std::shared_ptr<const Setup> setup) : setup_(std::move(setup)) {}
  std::optional<ChannelStep::Kind> next_kind() const;
  SchedInput input() const;

  std::shared_ptr<const Setup> setup_;
  std::uint32_t ranks_ = 0;       // 0: not chosen yet
  std::uint32_t fifo_depth_ = 0;  // 0: not chosen yet
  std::uint32_t pairs_decided_ = 0;
  std::vector<PairTransfer> transfers_;
  std::uint32_t colls_ = 0;  // 0: not chosen yet
  std::vector<std::uint32_t> coll_channels_;
  std::uint32_t done_decided_ = 0;
  std::uint32_t done_mask_ = 0;
  bool evaluated_ = false;
  std::optional<ChannelCounterexample> verdict_;
  StateHasher hash_;
};

// channel-agreement, plans-complete, plan-lifecycle, schedulable.
std::span<const verify::Invariant<ChannelAgreementWorld>> channel_invariants();

}  // namespace railcheck::plan

#pragma once
// Cross-rank comparison of collective placements: a collective is one operation of the whole
// communicator, so every rank must put it on the same channels (each channel's blocks of all
// ranks form one ring/tree) with the same algorithm and protocol, exchanging slots of the same
// step size. The first collective where two ranks disagree is reported with what each chose
// (and, for channels, the loads each rank's picker saw), which is the explanation a reader needs.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/plan/kernel_plan.hpp"
#include "engine/plan/nccl_rank_env.hpp"

namespace railcheck::plan {

struct CollRow {
  std::uint32_t coll_seq = 0;
  std::vector<const CollPlacement*> by_rank;  // nullptr where a rank has no such collective
  bool agreed = true;
};

struct Divergence {
  enum class Kind : std::uint8_t {
    Channels,     // same collective, different channels in the replay (the ranks' inputs differ)
    Sequence,     // ranks issued different collectives (or different counts of them)
    LoggedLines,  // two ranks' own TUNING lines give the same collective different choices
    Plan,         // same collective, another algorithm, protocol, step size or thread count (2.28 model)
  };
  Kind kind = Kind::Channels;
  std::uint32_t coll_seq = 0;
  std::uint32_t rank_a = 0;               // rank 0's view (the reference)
  std::uint32_t rank_b = 0;               // the first rank that differs
  std::string explanation;                // one paragraph: what each rank chose and the loads behind it
  PlanField field = PlanField::Channels;  // Plan and Channels: which part of the plan differs
};

struct AgreementReport {
  std::vector<CollRow> rows;
  std::optional<Divergence> first;
  std::uint32_t diverged_colls = 0;
};

AgreementReport compare_channels(const std::vector<RankSchedule>& ranks);

// What a divergence of that kind proves, for the report's verdict line.
std::string_view describe(Divergence::Kind kind);

// "{0,2}" for a channel list, in the picker's order.
std::string channel_set(const std::vector<std::uint32_t>& channels);

}  // namespace railcheck::plan

#pragma once
// The ImmCounter world for verify/explorer.hpp (`railcheck check` with world = "imm"): one
// transfer of N WRITE_IMMs, at most one failover. Its first steps give every original write a
// fate (with a failover), then the copies land one at a time — the originals that landed before
// the failover decision in any order, then the late originals and the replayed copies the
// policy posts in any order — and the receiver registers its expectation at any point. When
// every copy has landed and the expectation is registered, the schedule runs through the real
// DuplicateFilter and ImmCounter (imm_schedule.hpp) and the world ends. The same schedules as
// check_every_order (arrival_enumerator.hpp), taken as steps, so a violation is a trace.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/core/state_hash.hpp"
#include "verify/explorer.hpp"
#include "verify/imm/imm_invariants.hpp"
#include "verify/invariant.hpp"

namespace railcheck::imm {

struct ImmModel {
  std::string name = "imm";
  std::uint32_t writes = 3;  // 1..6
  ReplayPolicy policy = ReplayPolicy::Resync;
  bool failover = true;
};

struct ImmModelSpec {
  ImmModel model;
  verify::SearchLimits limits;
  std::vector<std::string> invariants;  // names; empty = all
};

// A model file: world = "imm", policy, [bounds] writes and failover, [search], invariants.
Result<ImmModelSpec> load_imm_model(std::string_view text, const std::string& file);
std::string to_model_toml(const ImmModel& m);
std::string describe(const ImmModel& m);

struct ImmStep {
  enum class Kind : std::uint8_t {
    Fate,    // original write `seq` gets fate `fate`
    Land,    // a copy of write `seq` lands (the replayed one when `replay`)
    Expect,  // the receiver registers its expectation of N writes
  };
  Kind kind = Kind::Fate;
  std::uint32_t seq = 0;
  WriteFate fate = WriteFate::Acked;
  bool replay = false;
  bool operator==(const ImmStep&) const = default;
};

// "write 1 ack-lost", "land write 0", "land write 1 (replayed copy)", "register the expectation".
std::string to_string(const ImmStep& s);

class ImmWorld {
 public:
  using ChoiceType = ImmStep;
  explicit ImmWorld(const ImmModel& m);

  std::vector<ImmStep> choices() const;
  void apply(const ImmStep& s);
  std::uint64_t fingerprint() const { return hash_.value(); }

  // Set once the schedule is complete: what the invariants read.
  const std::optional<ScheduleOutcome>& outcome() const { return outcome_; }
  const Schedule& schedule() const { return schedule_; }

 private:
  void fates_decided();

  std::uint32_t writes_;
  Schedule schedule_;
  std::vector<Landing> before_;  // copies still to land before the failover decision
  std::vector<Landing> after_;   // and after it
  bool expected_ = false;
  std::optional<ScheduleOutcome> outcome_;
  StateHasher hash_;
};

// fires-exactly-once, fires-after-every-write, no-double-count.
std::span<const verify::Invariant<ImmWorld>> imm_invariants();

}  // namespace railcheck::imm

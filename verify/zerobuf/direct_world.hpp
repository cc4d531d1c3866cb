#pragma once
// The direct fast path (engine/zerobuf/fast_path.hpp, "Direct") as a checker world: `ranks`
// ranks run `calls` direct calls back to back, each call `blocks` blocks of the steps
// build_direct_program writes out (direct_program.hpp), every block of every rank interleaved
// with every other. Barrier slots are modelled per (block, sender) as { input offset, output
// offset, epoch }; a wait takes a slot at or past its epoch (flag_satisfies). The application
// cycles through `buffers` buffer sets (new tensors each call, at other offsets, as PyTorch hands
// them out): between calls it consumes the output, writes the next input, and calls. A call ends
// when all its blocks have run their steps. One rank may die; when no block anywhere can step,
// a rank blocked in a wait may time out and fail.
//
// Every modelled unit holds a token (fast_values.hpp) and the call whose data it is. Invariants
// (direct_invariants.hpp):
//   no-read-before-written        a rank's input is read, and an output consumed, only once it
//                                 holds this call's data
//   no-overwrite-before-readers-done
//                                 nothing overwrites a buffer someone still has to read: an
//                                 input still to be read for an earlier call, an output its
//                                 owner has not consumed
//   direct-results-match-spec     every consumed output equals the collective's spec
//   no-deadlock, dead-peer-is-error
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "verify/zerobuf/direct_program.hpp"
#include "verify/zerobuf/recorded_violations.hpp"

namespace railcheck::verify::zerobuf {

enum class DirectMutation : std::uint8_t {
  None,
  NoEndBarrier,         // a block returns after its data: no end epoch posted or waited for
  StartWithoutOffsets,  // the start publishes the epoch only: offsets as first published
  SharedSlotNoGe,       // waits want the epoch exactly (==), on the slot start and end share
  TimeoutSkips,         // a timed-out wait carries on as if satisfied, no error
};
std::string_view to_string(DirectMutation m);
std::optional<DirectMutation> parse_direct_mutation(std::string_view s);
std::string_view direct_mutation_names();

struct DirectModel {
  std::string name = "zerobuf-direct";
  std::uint32_t ranks = 2;
  std::uint32_t calls = 2;
  std::vector<FastOp> ops = {FastOp::AllReduce};  // call k runs ops[k % size]
  std::uint32_t units = 2;                        // per-rank piece in 16-byte units
  std::uint32_t blocks = 1;
  std::uint32_t buffers = 2;  // buffer sets the application cycles through
  std::uint32_t dead_ranks = 0;
  bool in_place = false;  // all-reduce output = input
  DirectMutation mutation = DirectMutation::None;
};
std::string describe(const DirectModel& m);

struct DirectChoice {
  enum class Kind : std::uint8_t { Between, Step, Kill, Timeout };
  Kind kind = Kind::Between;
  std::uint8_t rank = 0, block = 0;
  bool operator==(const DirectChoice&) const = default;
};
std::string to_string(const DirectChoice& c);
std::optional<DirectChoice> parse_direct_choice(std::string_view s);

class DirectWorld {
 public:
  using ChoiceType = DirectChoice;
  static constexpr std::uint32_t kMaxRanks = 4, kMaxBlocks = 3, kMaxUnits = 4, kMaxBuffers = 2;

  explicit DirectWorld(const DirectModel& m);
  std::vector<DirectChoice> choices() const;
  void apply(const DirectChoice& c);
  std::uint64_t fingerprint() const;
  std::string describe_choice(const DirectChoice& c) const;

  struct Slot {
    std::uint64_t input_offset = 0, output_offset = 0, epoch = 0;
  };
  struct Unit {
    std::uint32_t value = 0;
    std::uint8_t call = 0;  // call + 1 of the data it holds; 0: never written
  };
  struct Block {
    std::vector<DirectStep> program;  // this call's steps (a function of the call: not hashed)
    std::uint32_t pc = 0;
    std::uint32_t reg = 0;
  };
  struct Rank {
    FastPhase phase = FastPhase::Before;
    std::uint32_t call = 0;      // the call running or next
    std::uint32_t consumed = 0;  // outputs the application consumed
    std::vector<Block> blocks;
    std::vector<Slot> slots;   // [block][sender], written by the senders
    std::vector<Unit> memory;  // the buffer sets, unit by unit
    std::optional<std::uint32_t> waited_peer;
    bool skipped_wait = false;  // TimeoutSkips: went past a wait never satisfied
  };
  const DirectModel& model() const { return m_; }
  const std::vector<Rank>& ranks() const { return ranks_; }
  std::uint32_t deaths() const { return deaths_; }
  std::optional<std::string> bad_access(std::string_view invariant) const { return bad_.find(invariant); }

 private:
  FastOp op_of(std::uint32_t call) const { return m_.ops[call % m_.ops.size()]; }
  std::uint64_t input_offset(std::uint32_t r, std::uint32_t call) const;
  std::uint64_t output_offset(std::uint32_t r, std::uint32_t call) const;
  std::optional<std::size_t> unit_at(std::uint32_t r, std::uint64_t offset) const;
  bool can_step(std::uint32_t r, std::uint32_t b) const;
  void between(std::uint32_t r);
  void step(std::uint32_t r, std::uint32_t b);
  std::optional<std::size_t> peer_unit(std::uint32_t r, std::uint32_t b, std::uint32_t owner, bool input,
                                       std::uint32_t unit, const char* what);
  void load(std::uint32_t r, std::uint32_t b, const DirectStep& s);
  void store(std::uint32_t r, std::uint32_t b, std::uint32_t to, std::uint32_t dst, std::uint32_t value);

  DirectModel m_;
  std::vector<Rank> ranks_;
  std::uint32_t deaths_ = 0;
  RecordedViolations bad_;
};

}  // namespace railcheck::verify::zerobuf

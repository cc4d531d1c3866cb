#pragma once
// The zero-buffer flag world: `ranks` RankRunners (engine/zerobuf) run `iterations` collectives
// back to back over modelled windows, and every interleaving of their steps is a path. Around
// each call the application writes the rank's input before it (the input then holds that
// iteration's data) and consumes its output after it; one rank may die at any point (it takes no
// further step); when no live rank can move, any blocked rank may time out (timeouts are longer
// than any progress, so they fire only when everything is stuck).
//
// Memory is modelled word by word: every part of every buffer is one f32 word, tagged with the
// iteration whose data it holds. The world records what each access saw, and the invariants
// (flag_invariants.hpp) judge:
//   no-read-before-written        a peer's input is read, or an output consumed, only once it
//                                 holds this iteration's data
//   no-overwrite-before-readers-done
//                                 nothing overwrites a buffer someone still has to read: an
//                                 input still to be read by a peer, an output not yet consumed
//   no-flag-aba                   a wait accepts only a flag posted for the epoch it waits for
//   no-deadlock                   every end state has each rank finished, dead or failed, and
//                                 without a death nobody fails
//   dead-peer-is-error            with a dead rank, every other rank finishes correctly or fails
//                                 with a timeout error that names a dead or failed peer
//
// Mutations model driver slips (what the kernel or host loop could get wrong around the engine):
// boolean flags, a skipped wait, a flag posted before its data, no timeout, a timeout taken as
// success. Each trips one invariant (tests/verify/zerobuf, verify/models/zerobuf_*.toml).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/zerobuf/rank_runner.hpp"

namespace railcheck::verify::zerobuf {

using railcheck::zerobuf::CollKind;

enum class FlagMutation : std::uint8_t {
  None,
  BooleanFlags,      // flags set to 1, waits for "set": a stale flag passes (ABA)
  WriteBeforeReady,  // push writes without waiting for the peer's Ready
  ReadBeforePosted,  // pull reads without waiting for the peer's Posted
  SkipReadDoneWait,  // pull returns without waiting for its readers' ReadDone
  FlagBeforeData,    // Written posted before the write it announces
  NoTimeout,         // waits spin forever
  TimeoutSkips,      // a timed-out wait carries on as if satisfied, no error
};
std::string_view to_string(FlagMutation m);
std::optional<FlagMutation> parse_flag_mutation(std::string_view s);
std::string_view flag_mutation_names();

struct FlagModel {
  std::string name = "zerobuf-flags";
  std::uint32_t ranks = 3;
  std::uint32_t iterations = 2;
  std::vector<CollKind> ops = {CollKind::AllReduce};  // call k runs ops[k % size]
  std::uint32_t dead_ranks = 0;                       // 0 or 1
  bool in_place = false;                              // all-reduce output = input
  FlagMutation mutation = FlagMutation::None;
};
std::string describe(const FlagModel& m);

struct FlagChoice {
  enum class Kind : std::uint8_t { Step, Between, Kill, Timeout };
  Kind kind = Kind::Step;
  std::uint32_t rank = 0;
  bool operator==(const FlagChoice&) const = default;
};
std::string to_string(const FlagChoice& c);
std::optional<FlagChoice> parse_flag_choice(std::string_view s);

enum class RankPhase : std::uint8_t { Before, InCall, After, Finished, Dead };

class FlagWorld {
 public:
  using ChoiceType = FlagChoice;
  static constexpr std::uint32_t kMaxRanks = 4;

  explicit FlagWorld(const FlagModel& m);
  std::vector<FlagChoice> choices() const;
  void apply(const FlagChoice& c);
  std::uint64_t fingerprint() const;
  // What the step did, for counterexamples ("r1 Wait Ready from rank 2 (epoch 3): accepted").
  std::string describe_choice(const FlagChoice& c) const;

  struct Slot {
    std::uint64_t value = 0, offset = 0;
    std::uint64_t true_epoch = 0;  // the epoch the posting step was built for
  };
  struct Rank {
    railcheck::zerobuf::RankRunner runner;
    RankPhase phase = RankPhase::Before;
    std::uint32_t iteration = 0;      // the call running or next
    bool posted_early = false;        // FlagBeforeData: Written already posted for the current Write
    bool skipped_wait = false;        // TimeoutSkips: passed a wait that was never satisfied
    std::vector<Slot> flags;          // kFlagKinds x ranks, written by the peers
    std::vector<std::uint8_t> words;  // the window's buffer words: iteration + 1 of their data
    std::uint32_t consumed = 0;       // outputs consumed (iterations)
  };
  const FlagModel& model() const { return m_; }
  const std::vector<Rank>& ranks() const { return ranks_; }
  std::uint32_t deaths() const { return deaths_; }
  // The first bad access seen on this path under `invariant`'s name, if any (sticky).
  std::optional<std::string> bad_access(std::string_view invariant) const;
  bool failed_without_death() const;

 private:
  bool can_step(std::uint32_t r) const;
  bool all_stuck() const;
  railcheck::zerobuf::CollCall call_of(std::uint32_t r, std::uint32_t iteration) const;
  std::optional<std::size_t> word_of(std::uint32_t r, std::uint64_t offset) const;
  std::uint64_t observed(std::uint32_t r, const railcheck::zerobuf::FlagStep& s) const;
  void run_step(std::uint32_t r);
  void between(std::uint32_t r);
  void copy_words(std::uint32_t from, std::uint64_t src, std::uint32_t to, std::uint64_t dst, std::uint64_t bytes,
                  bool remote_read, bool sum, std::uint32_t reader);
  void flag(std::string invariant, std::string message);

  FlagModel m_;
  std::vector<Rank> ranks_;
  std::uint32_t deaths_ = 0;
  std::vector<std::pair<std::string, std::string>> bad_;  // (invariant, message), first per invariant
};

}  // namespace railcheck::verify::zerobuf

#pragma once
// The LL fast path (engine/zerobuf/fast_path.hpp, "LL") as a checker world: `ranks` ranks run
// `calls` LL calls back to back on one stream each, over modelled LL areas laid out by the
// header's ll_slot_offset, with the epochs its ll_next_epoch hands out and the pieces its
// piece_to / piece_at cut. Every interleaving of these steps is a path:
//   send     rank r stores one 8-byte half {data, flag} of line l of its piece for peer p into
//            p's area [parity][r] (each half is single-copy atomic, nothing more: the two halves
//            of a line land in either order)
// A slot holds the largest piece's lines whatever the call's piece: slots laid out by each
// call's own line count would move between calls and overlap lines a slow peer still reads
// (mutation slot-lines-per-call).
//   receive  rank r takes line l from peer p once the line is ready (ll_line_ready: both flags
//            carry this call's epoch); a blocked receive is simply not enabled. Copying ops put
//            it in the output at once; reducing ops hold it until every peer's line l is in,
//            then write the line's sum over all ranks in rank order (their own input included)
//   between  the application consumes the output of the call just ended, writes the next
//            call's input and calls: stream order, a call starts only after the previous ended
// A call ends when all its sends and receives are done. One rank may die at any point (it takes
// no step after); when no rank can take a step, any blocked rank may time out and fail (its
// error names the first peer whose line it still lacks).
//
// In place (all-reduce, output == input): a rank writes output line l only after it has sent
// line l to every peer, or a late send would carry the sum instead of the input. The header does
// not say so; the kernel must do it (the same thread sends a line, then sums it), and the
// mutation in-place-sum-before-send shows why.
//
// Two-shot (`two_shot = true`: every all-reduce call takes the LL two-shot of fast_path.hpp,
// issue 43): a call has two phases with their own epochs (ll_two_shot_epoch1 / _epoch2).
//   send      (phase 1) rank r stores half h of line j of part p (ll_two_shot_part) of its input
//             into p's area [e1 parity][r] line j
//   receive   (phase 1) rank r takes line j of its own part from peer p; once every peer's line
//             j is in, it writes their sum (rank order, its input included) into its output part
//   gather-send    (phase 2) rank r stores half h of its summed line j into p's area
//             [e2 parity][r] line j; enabled only once line j is summed
//   gather-receive (phase 2) rank r takes line j of peer p's part from [e2 parity][p] and
//             writes it into its output part p; the value must be the call's sum of that line
// One-shot calls (the other ops) and two-shot calls mix on one epoch counter. Every part must
// hold a line (pieces of at least `ranks` lines: 4 ranks need 32-byte pieces).
//
// Invariants (ll_invariants.hpp): ll-accepts-call-data (every value a receiver takes for call k
// is its sender's call-k data: not stale, not torn, not from a later call), ll-output-matches-spec,
// no-deadlock, dead-peer-is-error.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "verify/zerobuf/fast_values.hpp"
#include "verify/zerobuf/recorded_violations.hpp"

namespace railcheck::verify::zerobuf {

enum class LlMutation : std::uint8_t {
  None,
  SingleBuffer,          // one parity: every call writes slot [0]
  OneFlagPerLine,        // the receiver checks only the second half's flag
  GraphReplaysEpoch,     // the epoch is a kernel parameter captured once: every call reuses it
  InPlaceSumBeforeSend,  // in place, a line's sum may be written before the line is sent
  SlotLinesPerCall,      // slots laid out by the call's own line count, not the area's
  TimeoutSkips,          // a timed-out spin carries on as if its lines had come, no error
  TwoShotSameEpoch,      // the two-shot's phase 2 reuses phase 1's epoch (and so its slots)
};
std::string_view to_string(LlMutation m);
std::optional<LlMutation> parse_ll_mutation(std::string_view s);
std::string_view ll_mutation_names();

struct LlModel {
  std::string name = "zerobuf-ll";
  std::uint32_t ranks = 2;
  std::uint32_t calls = 3;
  std::vector<FastOp> ops = {FastOp::AllGather};  // call k runs ops[k % size]
  std::vector<std::uint32_t> piece_bytes = {12};  // per rank (CollCall's `bytes`) of call k: [k % size]
  std::uint32_t dead_ranks = 0;                   // 0 or 1
  bool in_place = false;                          // all-reduce output = input
  std::uint32_t first_epoch = 1;                  // the LL counter at the first call
  bool two_shot = false;                          // all-reduce calls take the LL two-shot
  LlMutation mutation = LlMutation::None;
};
std::string describe(const LlModel& m);

struct LlChoice {
  enum class Kind : std::uint8_t { Between, Send, Receive, Kill, Timeout, GatherSend, GatherReceive };
  Kind kind = Kind::Between;
  std::uint8_t rank = 0, peer = 0, line = 0, half = 0;
  bool operator==(const LlChoice&) const = default;
};
std::string to_string(const LlChoice& c);
std::optional<LlChoice> parse_ll_choice(std::string_view s);

class LlWorld {
 public:
  using ChoiceType = LlChoice;
  static constexpr std::uint32_t kMaxRanks = 4;
  static constexpr std::uint32_t kMaxPieceBytes = 32;  // 4 lines (a two-shot over 4 ranks)

  explicit LlWorld(const LlModel& m);
  std::vector<LlChoice> choices() const;
  void apply(const LlChoice& c);
  std::uint64_t fingerprint() const;
  std::string describe_choice(const LlChoice& c) const;

  struct Rank {
    FastPhase phase = FastPhase::Before;
    std::uint32_t call = 0;                        // the call running or next
    std::uint32_t epoch = 0;                       // the running call's epoch (two-shot: phase 1's)
    std::uint32_t epoch2 = 0;                      // two-shot: phase 2's epoch
    std::uint32_t next_epoch = 0;                  // the device counter
    std::uint32_t sent = 0;                        // bit (p x lines + l) x 2 + h: half h of line l sent to p
    std::uint32_t received = 0;                    // bit p x lines + l: line l taken from p
    std::uint32_t sent2 = 0, received2 = 0;        // two-shot phase 2, laid out as sent / received
    std::vector<std::uint32_t> input, output;      // words; in place, `input` is the output too
    std::vector<std::uint32_t> held;               // reducing ops: words taken from peer p, p x piece + i
    std::vector<railcheck::zerobuf::LlLine> area;  // this rank's LL area, written by the peers
    std::optional<std::uint32_t> waited_peer;      // Failed: the peer it timed out on
    bool skipped_wait = false;                     // TimeoutSkips: went past lines that never came
  };
  const LlModel& model() const { return m_; }
  const std::vector<Rank>& ranks() const { return ranks_; }
  std::uint32_t deaths() const { return deaths_; }
  // The first violation seen on this path under `invariant`'s name (sticky).
  std::optional<std::string> bad_access(std::string_view invariant) const { return bad_.find(invariant); }

 private:
  FastOp op_of(std::uint32_t call) const { return m_.ops[call % m_.ops.size()]; }
  bool in_place(std::uint32_t call) const { return m_.in_place && op_of(call) == FastOp::AllReduce; }
  bool two_shot(std::uint32_t call) const { return m_.two_shot && op_of(call) == FastOp::AllReduce; }
  // Two-shot: rank q's part of call `call`, in words (offset, count) and lines.
  std::uint32_t part_word(std::uint32_t call, std::uint32_t q) const;
  std::uint32_t part_words(std::uint32_t call, std::uint32_t q) const;
  std::uint32_t part_lines(std::uint32_t call, std::uint32_t q) const;
  // Lines rank r sends peer p in phase 1 (or in its one call), and takes from each peer.
  std::uint32_t lines_to(std::uint32_t r, std::uint32_t p) const;
  std::uint32_t lines_from(std::uint32_t r) const;
  std::uint32_t all_sent2(std::uint32_t r) const;
  std::uint32_t all_received2(std::uint32_t r) const;
  bool line_summed(std::uint32_t r, std::uint32_t line) const;
  std::uint32_t sum_token(std::uint32_t call, std::uint32_t word) const;
  void gather_send(std::uint32_t r, std::uint32_t p, std::uint32_t line, std::uint32_t half);
  void gather_receive(std::uint32_t r, std::uint32_t p, std::uint32_t line);
  std::uint32_t piece_bytes(std::uint32_t call) const { return m_.piece_bytes[call % m_.piece_bytes.size()]; }
  std::uint32_t piece_words(std::uint32_t call) const { return piece_bytes(call) / 4; }
  std::uint32_t lines_of(std::uint32_t call) const;
  std::uint32_t parity(std::uint32_t epoch) const;
  std::size_t line_index(std::uint32_t call, std::uint32_t owner_parity, std::uint32_t sender,
                         std::uint32_t line) const;
  std::uint32_t all_sent(std::uint32_t r) const;
  std::uint32_t all_received(std::uint32_t r) const;
  bool line_sent_to_all(std::uint32_t r, std::uint32_t line) const;
  bool can_receive(std::uint32_t r, std::uint32_t p, std::uint32_t line) const;
  bool completes_line(std::uint32_t r, std::uint32_t p, std::uint32_t line) const;
  std::vector<std::uint32_t>& out_of(std::uint32_t r);
  const std::vector<std::uint32_t>& out_of(std::uint32_t r) const;
  void between(std::uint32_t r);
  void send(std::uint32_t r, std::uint32_t p, std::uint32_t line, std::uint32_t half);
  void receive(std::uint32_t r, std::uint32_t p, std::uint32_t line);
  void end_call_if_done(std::uint32_t r);

  LlModel m_;
  std::uint32_t lines_ = 1;  // lines a slot holds: ll_lines of the largest piece (the area's size)
  std::vector<Rank> ranks_;
  std::uint32_t deaths_ = 0;
  RecordedViolations bad_;
};

}  // namespace railcheck::verify::zerobuf

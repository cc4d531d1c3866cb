#pragma once
// The direct fast path (engine/zerobuf/fast_path.hpp, "Direct") for one block of one rank, as the
// flat list of steps the direct world executes: the header's protocol written out with its own
// functions (barrier epochs, piece_to / piece_at, direct_part), so the world checks what the
// kernels run. Memory is in 16-byte units, one modelled word each; the block takes the units
// u with u % blocks == block (grid-stride), counted from the start of its piece (all-reduce:
// of the rank's own part).
//
//   start  Post {input offset, output offset, start epoch} to every peer's slot [block][me];
//          Wait every peer's slot [block][p] at or past the start epoch
//   data   all-gather / all-to-all: Copy my input (block t of it, for all-to-all) into every
//          rank t's output block [me]; reduce-scatter: Load block [me] of every rank's input in
//          rank order, Store the sum into my output; all-reduce: Load my part of every rank's
//          input in rank order, Store the sum into every rank's output (in place: into the very
//          units just loaded, which no other rank touches)
//   end    Post the end epoch to every peer; Wait every peer's end epoch
// Peers are visited from me + 1 upward, as the flag programs do.
#include <cstdint>
#include <string>
#include <vector>

#include "verify/zerobuf/fast_values.hpp"

namespace railcheck::verify::zerobuf {

enum class DirectStepKind : std::uint8_t {
  Post,   // into `peer`'s barrier slot [block][me]: `epoch`, and my offsets when `offsets`
  Wait,   // until my slot [block][peer] holds an epoch at or past `epoch`
  Copy,   // unit `src` of `peer`'s input -> unit `dst` of `to`'s output
  Load,   // unit `src` of `peer`'s input into the block's register (`first`: replaces, else adds)
  Store,  // the register -> unit `dst` of `to`'s output
};
enum class DirectPhase : std::uint8_t { Start, Data, End };

struct DirectStep {
  DirectStepKind kind = DirectStepKind::Post;
  DirectPhase phase = DirectPhase::Start;
  std::uint32_t peer = 0;  // Post / Wait: whose slot; Copy / Load: whose input
  std::uint32_t to = 0;    // Copy / Store: whose output
  std::uint64_t epoch = 0;
  bool offsets = false;  // Post: publishes the offsets with the epoch
  bool first = false;    // Load: the first addend (rank 0)
  std::uint32_t src = 0, dst = 0;
};

// Block `block` of `blocks` of rank `me` in call `call` (epochs direct_start_epoch(call),
// direct_end_epoch(call)); the per-rank piece is `units` 16-byte units.
std::vector<DirectStep> build_direct_program(FastOp op, std::uint32_t units, std::uint32_t me, std::uint32_t nranks,
                                             std::uint32_t block, std::uint32_t blocks, std::uint64_t call);

// "Post start epoch 3 + offsets to r1", for counterexamples.
std::string describe(const DirectStep& s);

}  // namespace railcheck::verify::zerobuf

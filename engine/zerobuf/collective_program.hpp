#pragma once
// The zero-buffer collectives (zbccl seed §4.3, §5.3, §6.3) as flag programs: for one rank, the
// ordered FlagSteps that move its data straight between its window and its peers' windows, with
// no staging buffer anywhere. Two patterns make every collective:
//
//   push (all-gather, all-to-all, MoE dispatch, all-reduce's second phase), epoch e:
//     Post Ready to every peer (where in my output that peer's part goes)   -- my output is free
//     Local copy of my own part
//     for each peer: Wait its Ready; Write my part into its output; Post Written to it
//     Wait Written from every peer                                           -- my output is whole
//   pull (reduce-scatter, MoE combine, all-reduce's first phase), epoch e:
//     Post Posted to every peer (where in my input that peer's part is)     -- my input holds data
//     Local copy of my own part
//     for each peer: Wait its Posted; Read (or sum) its part of its input; Post ReadDone to it
//     Wait ReadDone from every peer                                          -- nobody reads my input
//
// A rank may overwrite its input after a pull phase returns (every reader is done) and reuse its
// output as soon as a push phase returns. Peers are visited from rank+1 upward so that the ranks
// do not all start on the same peer. Offsets are in the rank's own window; a peer's buffers are
// found through the offsets its flags carry, so the ranks' allocations need not be symmetric.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/zerobuf/flag_step.hpp"

namespace railcheck::zerobuf {

enum class CollKind : std::uint8_t { AllGather, ReduceScatter, AllReduce, AllToAll, Dispatch, Combine };

std::string_view to_string(CollKind k);
std::optional<CollKind> parse_coll_kind(std::string_view s);
// Flag epochs one call of the kind uses (one per phase).
std::uint32_t phases(CollKind k);

// One rank's view of a call. Sizes are in bytes; reductions are f32 sums (4-byte elements).
//   AllGather      input: `bytes`; output: nranks x `bytes` (rank r's part at r x bytes)
//   ReduceScatter  input: nranks x `bytes`; output: `bytes` (this rank's part, summed)
//   AllReduce      input and output: `bytes` (may be the same offset: in place)
//   AllToAll       input and output: nranks x `bytes` (block for / from rank r at r x bytes)
//   Dispatch       push all-to-all-v: send_bytes[r] from input + send_displ[r] to rank r, which
//                  receives it at its output + its recv_displ[this rank]
//   Combine        pull all-to-all-v, the way back: rank r takes send_bytes[r] from this rank's
//                  input + send_displ[r] and puts it at its output + its recv_displ[this rank]
struct CollCall {
  CollKind kind = CollKind::AllGather;
  std::uint64_t input_offset = 0;
  std::uint64_t output_offset = 0;
  std::uint64_t bytes = 0;
  std::vector<std::uint64_t> send_bytes, send_displ, recv_bytes, recv_displ;  // Dispatch, Combine
};

// The part of an all-reduce buffer of `bytes` that rank `r` of `nranks` reduces: 4-byte aligned,
// the remainder spread over the first ranks. Some parts are empty when bytes < 4 x nranks.
struct Part {
  std::uint64_t offset = 0;
  std::uint64_t bytes = 0;
};
Part allreduce_part(std::uint64_t bytes, std::uint32_t r, std::uint32_t nranks);

// The steps of rank `rank` for `call`, whose phases use epochs first_epoch, first_epoch + 1.
// Errors: a size or count that does not fit the kind (says which and why).
Result<std::vector<FlagStep>> build_program(const CollCall& call, std::uint32_t rank, std::uint32_t nranks,
                                            std::uint64_t first_epoch);

// "Wait Ready from rank 2 (epoch 5)", for errors and counterexamples.
std::string describe(const FlagStep& s);
std::string_view to_string(FlagKind k);

}  // namespace railcheck::zerobuf

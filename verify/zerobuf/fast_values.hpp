#pragma once
// What the fast-path worlds (ll_world.hpp, direct_world.hpp) put in memory and what they expect
// to get out: every modelled word of an input holds a token naming its rank, its call and its
// place, so a word that shows up where it should not says whose data it is and how stale; a
// reduction's result is the tokens folded in rank order by an order-sensitive "sum", so a sum
// taken in another order (different bits in f32) is as visible as a wrong addend.
//
// The spec (expected_output) is written from the collectives' definitions, not from
// engine/zerobuf/fast_path.hpp's piece_to / piece_at, so that the worlds, which move data with
// the header's functions, are checked against something independent of them.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/zerobuf/fast_path.hpp"

namespace railcheck::verify::zerobuf {

using railcheck::zerobuf::FastOp;

// A rank of a fast-path world, between and inside its calls (the application writes the input
// and calls in Before, consumes the output in After).
enum class FastPhase : std::uint8_t { Before, InCall, After, Finished, Dead, Failed };

std::string_view to_string(FastOp op);
std::optional<FastOp> parse_fast_op(std::string_view s);
// "one of \"all-gather\", ...", for model-file errors.
std::string_view fast_op_names();

// Word `word` of rank `rank`'s input for call `call` (never 0: a zeroed word is "never written").
constexpr std::uint32_t input_token(std::uint32_t rank, std::uint32_t call, std::uint32_t word) {
  return ((call + 1) << 16) | (rank << 8) | (word + 1);
}
// "rank 1's call 2 word 0", or "a sum", or "nothing (never written)".
std::string describe_token(std::uint32_t v);
// The call a token belongs to; nullopt for 0 and for sums.
std::optional<std::uint32_t> token_call(std::uint32_t v);

// One step of a sum in rank order: acc is the sum of ranks 0 .. r-1 (0 before rank 0).
constexpr std::uint32_t add_in_rank_order(std::uint32_t acc, std::uint32_t v) { return acc * 0x01000193U + v; }

// Words (one per modelled element) of a rank's input and output for a call whose per-rank piece
// has `piece` words (CollCall's `bytes` in words).
std::uint32_t input_words(FastOp op, std::uint32_t piece, std::uint32_t nranks);
std::uint32_t output_words(FastOp op, std::uint32_t piece, std::uint32_t nranks);
// What rank `me`'s output must hold after call `call`, from the collectives' definitions.
std::vector<std::uint32_t> expected_output(FastOp op, std::uint32_t piece, std::uint32_t me, std::uint32_t nranks,
                                           std::uint32_t call);
// The first word where `got` differs from the spec, as one line; nullopt when it does not.
std::optional<std::string> output_mismatch(FastOp op, std::uint32_t piece, std::uint32_t me, std::uint32_t nranks,
                                           std::uint32_t call, const std::vector<std::uint32_t>& got);

}  // namespace railcheck::verify::zerobuf

#include "verify/zerobuf/fast_values.hpp"

#include <fmt/format.h>

#include <array>

namespace railcheck::verify::zerobuf {
namespace {

constexpr std::array<std::pair<FastOp, std::string_view>, 4> kOps = {{{FastOp::AllGather, "all-gather"},
                                                                      {FastOp::ReduceScatter, "reduce-scatter"},
                                                                      {FastOp::AllReduce, "all-reduce"},
                                                                      {FastOp::AllToAll, "all-to-all"}}};

// Tokens name ranks below 16 and words below 255: the worlds stay far inside that.
bool looks_like_token(std::uint32_t v) {
  return v != 0 && (v & 0xFFU) != 0 && ((v >> 8) & 0xFFU) < 16 && v < (64U << 16);
}

}  // namespace

std::string_view to_string(FastOp op) {
  for (const auto& [k, name] : kOps)
    if (k == op) return name;
  return "?";
}

std::optional<FastOp> parse_fast_op(std::string_view s) {
  for (const auto& [k, name] : kOps)
    if (name == s) return k;
  return std::nullopt;
}

std::string_view fast_op_names() { return "one of \"all-gather\", \"reduce-scatter\", \"all-reduce\", \"all-to-all\""; }

std::optional<std::uint32_t> token_call(std::uint32_t v) {
  if (!looks_like_token(v)) return std::nullopt;
  return (v >> 16) - 1;
}

std::string describe_token(std::uint32_t v) {
  if (v == 0) return "nothing (never written)";
  if (!looks_like_token(v)) return fmt::format("a sum ({:#x})", v);
  return fmt::format("rank {}'s call {} word {}", (v >> 8) & 0xFFU, (v >> 16) - 1, (v & 0xFFU) - 1);
}

std::uint32_t input_words(FastOp op, std::uint32_t piece, std::uint32_t nranks) {
  return (op == FastOp::ReduceScatter || op == FastOp::AllToAll) ? piece * nranks : piece;
}

std::uint32_t output_words(FastOp op, std::uint32_t piece, std::uint32_t nranks) {
  return (op == FastOp::AllGather || op == FastOp::AllToAll) ? piece * nranks : piece;
}

std::vector<std::uint32_t> expected_output(FastOp op, std::uint32_t piece, std::uint32_t me, std::uint32_t nranks,
                                           std::uint32_t call) {
  std::vector<std::uint32_t> out(output_words(op, piece, nranks), 0);
  for (std::uint32_t i = 0; i < piece; ++i) switch (op) {
      case FastOp::AllGather:  // block p of the output is rank p's input
        for (std::uint32_t p = 0; p < nranks; ++p) out[p * piece + i] = input_token(p, call, i);
        break;
      case FastOp::AllToAll:  // block p of the output is block `me` of rank p's input
        for (std::uint32_t p = 0; p < nranks; ++p) out[p * piece + i] = input_token(p, call, me * piece + i);
        break;
      case FastOp::ReduceScatter:  // the sum over ranks, in rank order, of block `me` of their inputs
        for (std::uint32_t p = 0; p < nranks; ++p)
          out[i] = add_in_rank_order(out[i], input_token(p, call, me * piece + i));
        break;
      case FastOp::AllReduce:  // the sum over ranks, in rank order, of their inputs
        for (std::uint32_t p = 0; p < nranks; ++p) out[i] = add_in_rank_order(out[i], input_token(p, call, i));
        break;
    }
  return out;
}

std::optional<std::string> output_mismatch(FastOp op, std::uint32_t piece, std::uint32_t me, std::uint32_t nranks,
                                           std::uint32_t call, const std::vector<std::uint32_t>& got) {
  const auto want = expected_output(op, piece, me, nranks, call);
  for (std::size_t i = 0; i < want.size(); ++i)
    if (i >= got.size() || got[i] != want[i])
      return fmt::format("rank {}'s {} output of call {}, word {}, holds {} where the spec says {}", me, to_string(op),
                         call, i, i < got.size() ? describe_token(got[i]) : "nothing", describe_token(want[i]));
  return std::nullopt;
}

}  // namespace railcheck::verify::zerobuf

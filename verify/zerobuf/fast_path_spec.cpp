#include "verify/zerobuf/fast_path_spec.hpp"

#include <fmt/format.h>

#include "verify/check_spec.hpp"

namespace railcheck::verify::zerobuf {
namespace {

std::vector<std::string> op_names(const std::vector<FastOp>& ops) {
  std::vector<std::string> out;
  for (const auto op : ops) out.emplace_back(to_string(op));
  return out;
}

}  // namespace

void read_ll(TomlTable t, LlModel& m) {
  t.allow_only({"ranks", "calls", "ops", "piece_bytes", "dead_ranks", "in_place", "first_epoch", "two_shot"});
  m.ranks = t.whole<std::uint32_t>("ranks", {2, LlWorld::kMaxRanks}).value_or(m.ranks);
  m.calls = t.whole<std::uint32_t>("calls", {1, 8}).value_or(m.calls);
  m.dead_ranks = t.whole<std::uint32_t>("dead_ranks", {0, 1}).value_or(m.dead_ranks);
  m.in_place = read_flag(t, "in_place").value_or(m.in_place);
  m.two_shot = read_flag(t, "two_shot").value_or(m.two_shot);
  m.first_epoch = t.whole<std::uint32_t>("first_epoch", {1, 0xFFFFFFFFU}).value_or(m.first_epoch);
  // One size for every call, or one per call in turn.
  const toml::node* pieces = t.raw() == nullptr ? nullptr : t.raw()->get("piece_bytes");
  std::vector<std::uint64_t> sizes;
  if (pieces != nullptr && pieces->is_array())
    sizes = t.whole_array("piece_bytes", {4, LlWorld::kMaxPieceBytes});
  else if (auto b = t.whole<std::uint32_t>("piece_bytes", {4, LlWorld::kMaxPieceBytes}))
    sizes = {*b};
  if (pieces != nullptr && pieces->is_array() && sizes.empty())
    t.fail("piece_bytes", "a non-empty array of sizes", "an empty array");
  for (const auto b : sizes)
    if (b % 4 != 0) {
      t.fail("piece_bytes", "multiples of 4 (the LL path takes 4-byte elements)", fmt::format("{}", b));
      return;
    }
  if (!sizes.empty()) m.piece_bytes.assign(sizes.begin(), sizes.end());
  read_op_list(t, m.ops, parse_fast_op, fast_op_names());
  // The two-shot cuts an all-reduce into one part per rank, each at least a line. (An op list
  // read_op_list refused is empty here, its error already said: nothing to check it against.)
  if (m.ops.empty() || m.piece_bytes.empty()) return;
  for (std::uint32_t c = 0; c < m.calls && m.two_shot; ++c) {
    const std::uint32_t b = m.piece_bytes[c % m.piece_bytes.size()];
    if (m.ops[c % m.ops.size()] == FastOp::AllReduce && !railcheck::zerobuf::ll_two_shot_ok(b, m.ranks)) {
      t.fail("piece_bytes",
             fmt::format("at least {} bytes for a two-shot all-reduce over {} ranks (a line per rank)", 8 * m.ranks,
                         m.ranks),
             fmt::format("{}", b));
      return;
    }
  }
}

void read_direct(TomlTable t, DirectModel& m) {
  t.allow_only({"ranks", "calls", "ops", "units", "blocks", "buffers", "dead_ranks", "in_place"});
  m.ranks = t.whole<std::uint32_t>("ranks", {2, DirectWorld::kMaxRanks}).value_or(m.ranks);
  m.calls = t.whole<std::uint32_t>("calls", {1, 8}).value_or(m.calls);
  m.units = t.whole<std::uint32_t>("units", {1, DirectWorld::kMaxUnits}).value_or(m.units);
  m.blocks = t.whole<std::uint32_t>("blocks", {1, DirectWorld::kMaxBlocks}).value_or(m.blocks);
  m.buffers = t.whole<std::uint32_t>("buffers", {1, DirectWorld::kMaxBuffers}).value_or(m.buffers);
  m.dead_ranks = t.whole<std::uint32_t>("dead_ranks", {0, 1}).value_or(m.dead_ranks);
  m.in_place = read_flag(t, "in_place").value_or(m.in_place);
  read_op_list(t, m.ops, parse_fast_op, fast_op_names());
}

nlohmann::json model_json(const LlModel& m) {
  return {{"name", m.name},
          {"ranks", m.ranks},
          {"calls", m.calls},
          {"ops", op_names(m.ops)},
          {"piece_bytes", m.piece_bytes},
          {"dead_ranks", m.dead_ranks},
          {"in_place", m.in_place},
          {"first_epoch", m.first_epoch},
          {"two_shot", m.two_shot},
          {"mutation", std::string(to_string(m.mutation))}};
}

nlohmann::json model_json(const DirectModel& m) {
  return {{"name", m.name},         {"ranks", m.ranks},
          {"calls", m.calls},       {"ops", op_names(m.ops)},
          {"units", m.units},       {"blocks", m.blocks},
          {"buffers", m.buffers},   {"dead_ranks", m.dead_ranks},
          {"in_place", m.in_place}, {"mutation", std::string(to_string(m.mutation))}};
}

}  // namespace railcheck::verify::zerobuf

// Reading NCCL 2.28.9's tuning tables off rank 0's log (nccl228_cost_table.hpp).
#include "engine/plan/nccl228_cost_table.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <string>
#include <vector>

#include "engine/core/ascii.hpp"
#include "engine/plan/nccl_info_lines.hpp"

namespace railcheck::plan {
namespace {

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && is_ascii_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_ascii_blank(s.back())) s.remove_suffix(1);
  return s;
}

// The '|'-separated fields after the row's label.
std::vector<std::string_view> fields(std::string_view body) {
  std::vector<std::string_view> out;
  std::size_t at = body.find('|');
  while (at != std::string_view::npos) {
    const std::size_t next = body.find('|', at + 1);
    const auto f =
        trimmed(body.substr(at + 1, next == std::string_view::npos ? std::string_view::npos : next - at - 1));
    if (!f.empty()) out.push_back(f);
    at = next;
  }
  return out;
}

std::optional<float> decimal(std::string_view s) {
  s = trimmed(s);
  float v = 0;
  const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// ncclFuncStr order; the rows are printed "%13s |".
std::optional<int> row_function(std::string_view label) {
  static constexpr std::array<std::string_view, kNumFunctions> kNames = {"Broadcast", "Reduce", "AllGather",
                                                                         "ReduceScatter", "AllReduce"};
  for (int f = 0; f < kNumFunctions; ++f)
    if (label == kNames[static_cast<std::size_t>(f)]) return f;
  return std::nullopt;
}

}  // namespace

int func_index(CollOp op) {
  switch (op) {
    case CollOp::Broadcast: return 0;
    case CollOp::Reduce: return 1;
    case CollOp::AllGather: return 2;
    case CollOp::ReduceScatter: return 3;
    case CollOp::AllReduce: return 4;
  }
  return 4;
}

CollOp func_op(int f) {
  constexpr std::array<CollOp, kNumFunctions> kFuncs = {CollOp::Broadcast, CollOp::Reduce, CollOp::AllGather,
                                                        CollOp::ReduceScatter, CollOp::AllReduce};
  return kFuncs.at(static_cast<std::size_t>(f));
}

Result<std::optional<CostTables>> parse_cost_tables(std::string_view text, std::string_view origin) {
  CostTables t;
  t.printed = true;
  std::vector<int> block;                       // algorithms of the block being read
  std::array<int, kNumAlgorithms> rows_seen{};  // function rows read per algorithm
  NcclInfoLines lines(text);
  while (const auto info = lines.next()) {
    const std::string_view body = *info;
    const std::size_t lineno = lines.lineno();
    const std::size_t bar = body.find('|');
    if (bar == std::string_view::npos) continue;
    const std::string_view label = trimmed(body.substr(0, bar));
    auto bad = [&](std::string_view what) {
      return Error{fmt::format("{}:{}: tuning table: {}", origin, lineno, what),
                   "expected NCCL 2.28's ncclTopoTuneModel table (src/graph/tuning.cc)"};
    };
    if (label == "Algorithm") {
      block.clear();
      for (auto name : fields(body)) {
        const auto a = algorithm_index(name);
        if (!a) return bad(fmt::format("unknown algorithm '{}'", name));
        block.push_back(*a);
      }
      continue;
    }
    const auto f = row_function(label);
    if (!f || block.empty()) continue;
    const auto cells = fields(body);
    if (cells.size() != block.size() * kNumProtocols)
      return bad(fmt::format("{} cells for {} algorithms", cells.size(), block.size()));
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const auto slash = cells[i].find('/');
      const auto lat = decimal(cells[i].substr(0, slash));
      const auto bw = slash == std::string_view::npos ? std::nullopt : decimal(cells[i].substr(slash + 1));
      if (!lat || !bw) return bad(fmt::format("cell '{}' is not latency/bandwidth", cells[i]));
      const auto a = static_cast<std::size_t>(block[i / kNumProtocols]);
      const auto p = i % kNumProtocols;
      t.latency[static_cast<std::size_t>(*f)][a][p] = *lat;
      t.bandwidth[static_cast<std::size_t>(*f)][a][p] = *bw;
    }
    bool complete = true;
    for (int a : block) ++rows_seen[static_cast<std::size_t>(a)];
    for (int n : rows_seen) complete = complete && n >= kNumFunctions;
    if (complete) return std::optional<CostTables>(t);
  }
  for (int n : rows_seen)
    if (n != 0) return Error{fmt::format("{}: the tuning table ends before every algorithm's rows", origin), ""};
  return std::optional<CostTables>();
}

}  // namespace railcheck::plan

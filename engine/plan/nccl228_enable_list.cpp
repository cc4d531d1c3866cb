// parseList, NCCL 2.28.9 src/graph/tuning.cc (nccl228_enable_list.hpp).
#include "engine/plan/nccl228_enable_list.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <functional>
#include <optional>
#include <vector>

#include "engine/plan/nccl228_cost_table.hpp"
#include "engine/plan/nccl_types.hpp"

namespace railcheck::plan {
namespace {

struct Piece {
  std::string_view text;
  std::size_t offset;  // where it starts in its parent
};

// strtok_r's tokens: the non-empty pieces between delimiters.
std::vector<Piece> tokens(std::string_view s, char delim) {
  std::vector<Piece> out;
  std::size_t i = 0;
  while (i < s.size()) {
    const std::size_t end = std::min(s.find(delim, i), s.size());
    if (end > i) out.push_back({s.substr(i, end - i), i});
    i = end + 1;
  }
  return out;
}

bool same_name(std::string_view a, std::string_view b) {  // strcasecmp(a, b) == 0
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

// parseList over one variable: `row(f)` is function f's row, `index` an element's column.
template <typename Row>
Result<bool> parse_list(std::string_view var, std::string_view text, std::string_view kinds,
                        const std::function<std::optional<int>(std::string_view)>& index,
                        const std::function<Row&(std::size_t)>& row) {
  auto error = [&](const std::string& what) {
    return Error{fmt::format("{}=\"{}\": {} (NCCL 2.28.9 fails init with ncclInvalidUsage: src/graph/tuning.cc "
                             "parseList)",
                             var, text, what),
                 fmt::format("functions are Broadcast, Reduce, AllGather, ReduceScatter, AllReduce; {}; e.g. "
                             "\"LL,Simple;allreduce:^LL\"",
                             kinds)};
  };
  for (const auto& section : tokens(text, ';')) {
    const auto parts = tokens(section.text, ':');
    if (parts.empty()) return error(fmt::format("section \"{}\" names nothing", section.text));  // NCCL crashes
    std::optional<std::string_view> prefix;
    std::string_view elems = parts[0].text;
    if (parts.size() >= 2) {
      prefix = parts[0].text;
      elems = parts[1].text;  // strtok_r's second token; anything after another ':' is never read
    } else if (section.offset != 0) {
      return error(fmt::format("section \"{}\" has no function, and only the first may lack one", section.text));
    }
    std::vector<std::size_t> funcs;
    for (int f = 0; f < kNumFunctions; ++f)  // the prefixes parseList is given: ncclFuncStr
      if (!prefix || same_name(*prefix, name(func_op(f)))) funcs.push_back(static_cast<std::size_t>(f));
    if (funcs.empty()) return error(fmt::format("unrecognized function \"{}\"", *prefix));
    const bool negate = !elems.empty() && elems.front() == '^';
    if (negate) elems.remove_prefix(1);
    std::vector<int> listed;
    for (const auto& e : tokens(elems, ',')) {
      const auto i = index(e.text);
      if (!i) return error(fmt::format("unrecognized element \"{}\"", e.text));
      listed.push_back(*i);
    }
    for (std::size_t f : funcs) {
      auto& r = row(f);
      std::fill(r.begin(), r.end(), static_cast<std::int8_t>(negate ? 1 : 0));
      for (int i : listed) r[static_cast<std::size_t>(i)] = static_cast<std::int8_t>(negate ? 0 : 1);
    }
  }
  return true;
}

}  // namespace

Result<bool> apply_nccl_proto(std::string_view text, AlgoProtoEnable& enable) {
  using Row = std::array<std::int8_t, kNumProtocols>;
  return parse_list<Row>("NCCL_PROTO", text, "protocols are LL, LL128, Simple", protocol_index,
                         [&](std::size_t f) -> Row& { return enable.proto[f]; });
}

Result<bool> apply_nccl_algo(std::string_view text, AlgoProtoEnable& enable) {
  using Row = std::array<std::int8_t, kNumAlgorithms>;
  return parse_list<Row>("NCCL_ALGO", text,
                         "algorithms are Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree, PAT", algorithm_index,
                         [&](std::size_t f) -> Row& { return enable.algo[f]; });
}

}  // namespace railcheck::plan

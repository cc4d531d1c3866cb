#pragma once
// The [ll] and [direct] tables of a zero-buffer model file (zerobuf_check.hpp), and the same
// fields as JSON for the traces their counterexamples leave (a trace's model goes back through
// these readers, so it is held to the same ranges).
//   [ll]      ranks = 2, calls = 3, ops = ["all-gather"], piece_bytes = 12, dead_ranks = 0,
//             in_place = false, first_epoch = 1
//   [direct]  ranks = 2, calls = 2, ops = ["all-reduce"], units = 2, blocks = 1, buffers = 2,
//             dead_ranks = 0, in_place = false
#include <nlohmann/json.hpp>
#include <optional>
#include <string_view>
#include <vector>

#include "models/toml_reader.hpp"
#include "verify/zerobuf/direct_world.hpp"
#include "verify/zerobuf/ll_world.hpp"

namespace railcheck::verify::zerobuf {

// `ops = [...]` read into `ops` by `parse` (name -> optional op); nothing when absent; an empty
// array or an unknown name is an error that says what `expected` names.
template <typename Op, typename Parse>
void read_op_list(TomlTable& t, std::vector<Op>& ops, Parse parse, std::string_view expected) {
  const toml::table* raw = t.raw();
  const toml::node* n = raw == nullptr ? nullptr : raw->get("ops");
  if (n == nullptr) return;
  const toml::array* arr = n->as_array();
  if (arr == nullptr || arr->empty()) {
    t.fail_at(*n, "ops", "a non-empty array of collective names", describe_value(*n));
    return;
  }
  ops.clear();
  for (const auto& item : *arr) {
    const auto* s = item.as_string();
    const auto op = s == nullptr ? std::nullopt : parse(s->get());
    if (!op) {
      t.fail_at(item, "ops", expected, describe_value(item));
      return;
    }
    ops.push_back(*op);
  }
}

void read_ll(TomlTable t, LlModel& m);
void read_direct(TomlTable t, DirectModel& m);
nlohmann::json model_json(const LlModel& m);
nlohmann::json model_json(const DirectModel& m);

}  // namespace railcheck::verify::zerobuf

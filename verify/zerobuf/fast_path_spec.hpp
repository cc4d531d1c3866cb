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

#include "models/toml_reader.hpp"
#include "verify/zerobuf/direct_world.hpp"
#include "verify/zerobuf/ll_world.hpp"

namespace railcheck::verify::zerobuf {

// A true / false key (TOML booleans, or 0 / 1).
std::optional<bool> read_flag(TomlTable& t, std::string_view key);

void read_ll(TomlTable t, LlModel& m);
void read_direct(TomlTable t, DirectModel& m);
nlohmann::json model_json(const LlModel& m);
nlohmann::json model_json(const DirectModel& m);

}  // namespace railcheck::verify::zerobuf

#pragma once
// A model-checking job: the world to build, how to search it, which invariants to hold.
// `railcheck check FILE` reads it from a model file ([world], [bounds], [search], [engine]) or
// derives it from a scenario file (its paths, replay policy and tunables, the standard bound).
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"
#include "models/toml_reader.hpp"
#include "verify/explorer.hpp"
#include "verify/failover_model.hpp"

namespace railcheck::verify {

struct CheckSpec {
  FailoverModel model;
  SearchLimits limits;
  std::vector<std::string> invariants;  // names; empty = all
};

// The world a model file names with a top-level `world = "plan-channels"` (a string; a failover
// model's [world] is a table): nothing for a failover model, a scenario, or text that is not TOML.
// `railcheck check` dispatches on it (cli/cmd_check_worlds.cpp) and so does fuzz_check_spec.
std::optional<std::string> model_world(std::string_view text);

Result<CheckSpec> load_check_spec_file(const std::string& path);
Result<CheckSpec> load_check_spec_string(std::string_view text, const std::string& name_for_errors);

// The parts every world's model file shares (docs/verify.md): the [search] table, and the
// `invariants` array checked against the world's invariant names.
void read_search_table(TomlTable t, SearchLimits& l);
std::optional<bool> read_flag(TomlTable& t, std::string_view key);  // true/false
std::vector<std::string> read_invariant_names(TomlTable& root, std::span<const std::string> known_names);

SearchMode parse_search_mode_or(std::string_view s, SearchMode fallback);
std::string_view to_string(SearchMode m);

}  // namespace railcheck::verify

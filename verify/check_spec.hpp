#pragma once
// A model-checking job: the world to build, how to search it, which invariants to hold.
// `railcheck check FILE` reads it from a model file ([world], [bounds], [search], [engine]) or
// derives it from a scenario file (its paths, replay policy and tunables, the standard bound).
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"
#include "verify/explorer.hpp"
#include "verify/failover_model.hpp"

namespace railcheck::verify {

struct CheckSpec {
  FailoverModel model;
  SearchLimits limits;
  std::vector<std::string> invariants;  // names; empty = all
};

Result<CheckSpec> load_check_spec_file(const std::string& path);
Result<CheckSpec> load_check_spec_string(std::string_view text, const std::string& name_for_errors);

SearchMode parse_search_mode_or(std::string_view s, SearchMode fallback);
std::string_view to_string(SearchMode m);

}  // namespace railcheck::verify

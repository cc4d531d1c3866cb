#pragma once
// The [engine] table shared by scenario files and model-checker files: every key of the
// engine's tunable table (engine/failover/ha_tunables.cpp) plus `replay_policy`, range-checked
// by set_tunable() and cross-checked by validate().
#include "engine/failover/ha_tunables.hpp"
#include "models/toml_reader.hpp"

namespace railcheck {

HaTunables read_engine_table(TomlTable t);

}  // namespace railcheck

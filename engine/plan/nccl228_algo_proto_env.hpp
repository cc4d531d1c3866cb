#pragma once
// Where a run's NCCL_ALGO and NCCL_PROTO come from, and how they reach the 2.28 tuner. NCCL reads
// them in src/graph/tuning.cc ncclTopoTuneModel and prints them only under NCCL_DEBUG_SUBSYS=ENV
// ("NCCL_PROTO set by environment to LL", every rank) and as zeros in rank 0's TUNING table, so an
// INIT+COLL log does not show them. Sources, per variable, first one that has it wins:
//
//   1. the user's option (`--nccl-env 'NCCL_PROTO=LL NCCL_ALGO=Tree'`)
//   2. the logs' ENV lines
//   3. a recording folder's env.txt ("# env ... NCCL_ALGO=Tree ..."; scripts/gpu/nccl_sched_groundtruth.sh)
//
// The settings go into Nccl228Params::enable (nccl228_enable_list.hpp's grammar), which the
// tables computed from the topology apply (nccl228_tune_model.cpp). A printed TUNING table already
// has them applied and stays what the tuner reads; where it shows a disabled pair with a bandwidth,
// the setting contradicts what NCCL used and the notes say so.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/plan/comm_shape.hpp"
#include "engine/plan/nccl_init_tuning.hpp"

namespace railcheck::plan {

struct EnvSetting {
  std::string value;
  std::string origin;  // "--nccl-env", "rank0.log:12", "scenarios/groundtruth/nvl2_ll/env.txt"
};

struct AlgoProtoSettings {
  std::optional<EnvSetting> algo;   // NCCL_ALGO
  std::optional<EnvSetting> proto;  // NCCL_PROTO
};

// "NCCL_PROTO=LL NCCL_ALGO=Tree": whitespace-separated assignments of these two variables only.
// Anything else, a repeated variable or a value NCCL would reject is an error naming it.
Result<AlgoProtoSettings> settings_from_option(std::string_view text, std::string_view origin);

// The logs' "NCCL_ALGO/NCCL_PROTO set by environment to ..." lines (each log's first). Logs that
// disagree are an error (the model has one communicator), resolved by the option.
Result<AlgoProtoSettings> settings_from_logs(const std::vector<NamedLog>& logs);

// env.txt's "# env " line: its NCCL_ALGO= and NCCL_PROTO= words.
AlgoProtoSettings settings_from_env_txt(std::string_view text, std::string_view origin);

struct AppliedSettings {
  std::vector<std::string> notes;      // what was taken, from where
  std::vector<std::string> conflicts;  // a printed TUNING table that contradicts a setting
};

// Parses the settings into shape.v228.enable. Bad text is an error naming the variable, the text
// and where it came from.
Result<AppliedSettings> apply_algo_proto_settings(const AlgoProtoSettings& s, CommShape& shape);

// The three sources in their order, per variable (the option, the logs, env.txt), applied.
Result<AppliedSettings> apply_algo_proto_env(const AlgoProtoSettings& option, const std::vector<NamedLog>& logs,
                                             const std::optional<NamedLog>& env_txt, CommShape& shape);

}  // namespace railcheck::plan

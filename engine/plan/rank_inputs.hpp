#pragma once
// Each rank modelled from its own inputs (issue 40). NCCL reads its environment and computes its
// communicator parameters per process; a rank started with another NCCL_PROTO, NCCL_NTHREADS or
// NCCL_BUFFSIZE schedules the same collective differently from its peers, and the job hangs or
// corrupts data. So every rank gets:
//
//   - its own settings (nccl_rank_env.hpp: the option, its log's ENV lines, env.txt);
//   - its own INIT facts (its "N coll channels" and "P2P Chunksize" lines: NCCL's result,
//     settings included);
//   - the TUNING table and thread rows NCCL printed (rank 0 only) only when its tuner settings
//     equal the printing rank's; else the tables are computed from the topology with its settings;
//   - the logged TUNING choices of another rank only under the same condition
//     (logged_choices.hpp).
//
// Where a rank's log shows no ENV lines, the notes say so and what that assumes.
#include <string>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/plan/nccl_rank_env.hpp"
#include "engine/plan/sched_trace.hpp"

namespace railcheck::plan {

struct RankLogText {
  std::string name;  // the file, for origins
  std::string text;  // this rank's lines only
};

// Settings given outside the logs, per rank or for every rank.
struct RankEnvSources {
  GivenEnv option;   // --nccl-env
  GivenEnv env_txt;  // a recording's env.txt
};

// Fills input.rank_shapes and input.rank_env from `logs` (by rank; an empty text = no log of its
// own) and `given`, starting from input.shape (the communicator as the logs show it, tables
// included); then shares TUNING choices between ranks whose tuner inputs are equal. Returns notes.
Result<std::vector<std::string>> model_each_rank(const std::vector<RankLogText>& logs, const RankEnvSources& given,
                                                 SchedInput& input);

// The same for inputs without logs (a trace, a scenario): every rank from input.shape and the given settings.
Result<std::vector<std::string>> model_each_rank(const RankEnvSources& given, SchedInput& input);

}  // namespace railcheck::plan

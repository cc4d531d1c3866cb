#pragma once
// The ranks' Flight Recorder calls replayed under the NCCL scheduling model (engine/plan): the
// second test of a hang (docs/triage.md, verdict 2). Calls that agree can still hang inside
// NCCL: plans that wait on each other (a send cycle larger than the connections' buffers, the
// coll/p2p mixing of the PassSm class).
//
// One process group is one communicator. Its calls become task groups as PyTorch launched them:
// each collective and each unbatched send or receive its own group, a batch (closed by a
// "coalesced" entry) one group, coalesced collectives one group. The communicator's shape
// (channels, p2p chunk) comes from the NCCL INFO logs when given, else the model's defaults,
// and the result says which.
#include <optional>
#include <string>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/plan/nccl_log_import.hpp"
#include "engine/plan/sched_replay.hpp"
#include "triage/fr_calls.hpp"

namespace railcheck::triage {

struct FrReplay {
  std::string pg;
  plan::SchedInput input;
  std::optional<plan::ReplayResult> result;  // absent: not replayed (why in `skipped`)
  std::string skipped;
  std::vector<std::string> notes;  // shape source, version choice, ops left out
};

// NCCL's version as the dumps name it ("2.28.9") -> the rules the model follows.
plan::NcclVersion model_version(const std::string& comm_lib_version, std::vector<std::string>& notes);

// The calls of process group `pg` as the scheduling model's input; an op the model cannot
// replay is an Error naming it.
Result<plan::SchedInput> sched_input_from_calls(const std::vector<FrDump>& dumps, const FrProcessGroup& pg);

// Replays every process group with a dump from each of its ranks. `logs` (NCCL INFO logs, one
// per rank or merged) give the communicator's shape when they hold one communicator of the
// group's size.
std::vector<FrReplay> replay_calls(const std::vector<FrDump>& dumps, const std::vector<plan::LogFile>& logs);

}  // namespace railcheck::triage

#pragma once
// One verdict for a hang from what a job already recorded: the ranks' Flight Recorder dumps and,
// when given, their NCCL INFO logs (docs/triage.md). The tests run in this order and the first
// that finds something is the verdict:
//   1. CallMismatch  the ranks' call sequences disagree (call_sequence_check.hpp);
//   2. NcclHang      the calls agree, but NCCL's plans wait on each other or put one collective
//                    on different channels on different ranks (fr_replay.hpp, the 2.28 model);
//   3. BelowNccl     the calls agree and NCCL's scheduling completes them, yet a rank waits in
//                    one or gave no dump: a dead rank, a network fault, a kernel that never ends;
//   NoProblem        every rank dumped, every call completed, nothing disagrees.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "engine/plan/nccl_log_import.hpp"
#include "triage/fr_calls.hpp"

namespace railcheck::triage {

struct Verdict {
  enum class Kind : std::uint8_t { NoProblem, CallMismatch, NcclHang, BelowNccl };
  Kind kind = Kind::NoProblem;
  std::string headline;
  std::vector<std::uint32_t> ranks;  // the ranks the verdict blames (empty for NoProblem)
  std::vector<std::string> details;  // what each rank did, where it waits
  std::vector<std::string> notes;    // what the analysis assumed
};

std::string_view name(Verdict::Kind k);

// `logs` may be empty. Ranks are the dumps' global ranks; a rank named by a process group but
// without a dump is one that died or never dumped.
Verdict triage(const std::vector<FrDump>& dumps, const std::vector<plan::LogFile>& logs);

// The verdict as the CLI prints it: the kind and headline first, then details and notes.
std::string render(const Verdict& v);

}  // namespace railcheck::triage

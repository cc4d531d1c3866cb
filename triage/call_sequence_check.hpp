#pragma once
// Do the ranks' call sequences agree? The first test of a hang (docs/triage.md, verdict 1):
// NCCL matches calls by position, so a rank that skipped a collective, issued another kind, or
// gave another size is a bug in the job whatever NCCL then does (hang, or a wrong result).
//
// Per process group: the collectives by sequence number (same kind, same shapes and dtypes on
// every rank that issued it; coalesced collectives compared as a whole), then, per ordered
// pair of ranks, the k-th send against the peer's k-th receive. A rank that has not reached a
// collective the others issued is a finding only if it is not blocked in an earlier call: a rank
// stuck in #2 never gets to #3, and that is the hang's effect, not its cause. Where dumps carry
// stack frames, the call sites say which call a rank skipped.
#include <cstdint>
#include <string>
#include <vector>

#include "triage/fr_calls.hpp"

namespace railcheck::triage {

struct SequenceFinding {
  enum class Kind : std::uint8_t { Mismatch, Missing, P2pMismatch, P2pMissing };
  Kind kind = Kind::Mismatch;
  std::string pg;
  std::int64_t seq = 0;              // collective sequence number, or the k-th transfer (p2p)
  std::vector<std::uint32_t> ranks;  // the ranks at fault (the minority, or those that lack it)
  std::string headline;              // one line: what disagrees
  std::vector<std::string> details;  // what each side issued, where
};

// The findings in order of occurrence (collectives by sequence number, then p2p pairs).
// `dumps` must hold one dump per rank (cli checks); ranks without a dump are not judged.
std::vector<SequenceFinding> check_call_sequences(const std::vector<FrDump>& dumps);

// "rank 3" or "ranks 0, 2, 3", for verdicts.
std::string rank_list(const std::vector<std::uint32_t>& ranks);

// The p2p entries that only mark the end of a batch ("coalesced" with a p2p entry of the same
// p2p sequence number before it): never a collective of their own.
bool is_p2p_batch_marker(const std::vector<FrEntry>& entries, std::size_t i);

}  // namespace railcheck::triage

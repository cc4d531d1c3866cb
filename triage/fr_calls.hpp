#pragma once
// The calls PyTorch's Flight Recorder saw on each rank, as triage/fr_dump_read.py hands them
// over (JSON, "format": "railcheck-fr-calls"). The dumps themselves are pickles, read by Python's
// own unpickler with every class refused (docs/triage.md); this side never parses a pickle.
//
// One FrDump per rank; its entries in record order (the order the rank issued the calls).
// Collectives carry the process group's collective sequence number (1, 2, ...; the same call
// has the same number on every rank of the group); sends and receives carry their peer's rank in
// the group, and a batch (batch_isend_irecv, a coalescing manager) is closed by a "coalesced"
// entry with the same p2p sequence number.
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"

namespace railcheck::triage {

struct CallSite {
  std::string file;
  int line = 0;
  std::string func;
  bool operator==(const CallSite&) const = default;
  std::string describe() const;  // "train.py:31 (step)"
};

using Shape = std::vector<std::int64_t>;

struct FrEntry {
  std::uint64_t record_id = 0;
  std::string pg;
  std::int64_t coll_seq = 0;
  std::int64_t p2p_seq = 0;
  std::int64_t op_id = 0;
  std::string op;  // "all_reduce", "_all_gather_base", "send", "recv", "coalesced", ...
  bool is_p2p = false;
  std::optional<std::uint32_t> peer;  // send/recv: the other side's rank in the group
  std::vector<Shape> in_sizes, out_sizes;
  std::vector<std::string> in_dtypes, out_dtypes;
  std::string state;  // "scheduled", "started", "completed" (as the watchdog last saw it)
  std::optional<CallSite> site;

  bool completed() const { return state == "completed"; }
  std::int64_t in_elements() const;   // of the first input tensor
  std::int64_t out_elements() const;  // of the first output tensor
  std::string describe() const;       // "all_reduce in [1048576] Float out [1048576]"
};

struct FrProcessGroup {
  std::string id;
  std::string desc;
  std::vector<std::uint32_t> ranks;  // global ranks, in group-rank order
};

struct FrDump {
  std::string source;
  std::uint32_t rank = 0;  // global rank, from the file name
  std::string dump_version;
  std::string comm_lib_version;  // NCCL's, e.g. "2.28.9"
  std::vector<FrProcessGroup> pgs;
  std::vector<FrEntry> entries;
  const FrProcessGroup* pg(std::string_view id) const;
};

// Parses the reader's output. Errors name the dump and the field.
Result<std::vector<FrDump>> parse_fr_calls(std::string_view json);

// Runs the reader (RAILCHECK_FR_READER, else the copy in this source tree) on `paths` with
// python3 and parses its output; the reader's own one-line error is passed on as the Error.
Result<std::vector<FrDump>> read_fr_dumps(const std::vector<std::string>& paths);

}  // namespace railcheck::triage

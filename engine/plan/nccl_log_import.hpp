#pragma once
// Importer for real NCCL logs (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=COLL). The lines it reads,
// as 2.18's enqueue.cc prints them (ncclEnqueueCheck -> INFO(NCCL_COLL, ...)):
//
//   host:pid:tid [dev] NCCL INFO AllReduce: opCount 3 sendbuff 0x.. recvbuff 0x.. count 1024
//       datatype 7 op 0 root 0 comm 0x55d1.. [nranks=8] stream 0x..
//   host:pid:tid [dev] NCCL INFO Send: opCount 3 ... count 4096 datatype 0 op 0 root 5 comm ...
//
// Send/Recv print the peer as `root`. datatype and op are ncclDataType_t / ncclRedOp_t codes.
// Consecutive operations with one opCount form one group, and on rank 0 a TUNING line (2.28:
// `AllReduce: 32768 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..1}`, printed when the
// launch is scheduled) also ends the group. NCCL 2.28 advances opCount only for launches with
// proxy ops (src/proxy.cc ncclProxyStart): where the INIT transport lines show P2P or SHM
// connections, or are missing, the notes say the log alone cannot tell every boundary. TUNING
// lines give their collective's algorithm, protocol and channel range (CollTask::logged_lo/hi);
// INIT lines give NCCL 2.28's scheduler parameters (nccl_init_tuning.hpp).
//
// Which rank a line belongs to: an init line ("comm 0x.. rank R nranks N ... Init COMPLETE")
// of the same process and comm names it; else, with one log per rank, the file's position in
// the list is the rank; else (a merged log without init lines) ranks are numbered by first
// appearance of each host:pid+comm, and the importer says so in `notes`.
//
// Lines of other subsystems are skipped. A line with ": opCount " that does not parse is an
// error naming file and line; an operation the model does not know (AllToAll, ...) is an
// error too, never skipped.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/plan/rank_inputs.hpp"
#include "engine/plan/sched_trace.hpp"

namespace railcheck::plan {

struct LogFile {
  std::string name;  // for messages
  std::string text;
};

struct ImportedLog {
  SchedInput input;
  std::vector<std::string> notes;
  // The log cannot tell every launch boundary (P2P or SHM connections, or no INIT transport
  // lines: opCount does not advance for those launches). A verdict that depends on the
  // boundaries is then one reading of the log, not a fact (sched_verdict.hpp).
  bool boundaries_uncertain = false;
};

// How operations become launches: as the log shows them (opCount, TUNING lines), or each
// operation its own launch (what PyTorch issues outside batches and coalescing managers).
enum class LaunchReading : std::uint8_t { AsLogged, EachOperation };

// Every rank is modelled from its own lines and `given` (rank_inputs.hpp); each rank's
// SchedInput::rank_ends says how its log ends.
Result<ImportedLog> import_nccl_logs(const std::vector<LogFile>& files, LaunchReading reading = LaunchReading::AsLogged,
                                     const RankEnvSources& given = {});

// The readings a verdict weighs (sched_verdict.hpp): the logs as they show launch boundaries
// and, only where those are uncertain, the same operations each its own launch.
struct LogReadings {
  ImportedLog as_logged;
  std::optional<SchedInput> each_operation;
};
Result<LogReadings> import_nccl_log_readings(const std::vector<LogFile>& files, const RankEnvSources& given = {});

// True when the text looks like an NCCL log rather than a JSON trace.
bool looks_like_nccl_log(std::string_view text);

}  // namespace railcheck::plan

#pragma once
// The scheduling trace format: JSON lines, one event per line, each naming its rank.
//
//   {"ev":"comm","nranks":8,"coll_channels":4,"p2p_channels":4,"p2p_channels_per_peer":2,
//    "work_fifo_depth":65536,"p2p_chunk_bytes":524288,"persistent":false,
//    "nccl":"2.18"}                          (optional, first; nccl: whose rules the trace follows)
//   {"rank":0,"ev":"group_start"}
//   {"rank":0,"ev":"coll","op":"AllReduce","count":1048576,"dtype":"bfloat16",
//    "redop":"sum","algo":"Ring","proto":"Simple","channels":2}   (redop..channels optional)
//   {"rank":0,"ev":"send","peer":3,"bytes":65536}
//   {"rank":0,"ev":"recv","peer":5,"bytes":65536}
//   {"rank":0,"ev":"group_end","p2p_done":false}                   (p2p_done optional)
//
// Lines may interleave ranks; blank lines and lines starting with '#' are skipped. Without a
// "comm" line the communicator has max(rank)+1 ranks and CommShape's defaults. Every problem
// is one Error "<file>:<line>: ...".
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/plan/comm_shape.hpp"
#include "engine/plan/nccl_rank_env.hpp"
#include "engine/plan/task.hpp"

namespace railcheck::plan {

// How one rank's log ends (NCCL prints "comm 0x.. rank R ... - Destroy COMPLETE" or "Abort COMPLETE"
// under INIT when its communicator goes away: src/init.cc commReclaim): a log with INIT lines and
// neither ends mid-run, its process killed or still stuck.
struct RankLogEnd {
  enum class End : std::uint8_t { Unknown, Destroyed, Aborted, MidRun };
  End end = End::Unknown;  // Unknown: no INIT lines to tell
  std::string file;
  std::uint32_t last_op_line = 0;  // the last COLL line of the rank, for the verdict
};

struct SchedInput {
  CommShape shape;
  std::vector<RankStream> ranks;
  std::string source;               // "trace", "nccl log" or "scenario" for reports
  std::optional<NcclVersion> nccl;  // the NCCL whose rules the input was written against, if it says
  // Per rank, where the input tells them apart (NCCL logs): each rank's own communicator
  // parameters (its INIT lines and settings), the settings it ran with and where they were read,
  // and how its log ends. Empty: every rank has `shape`, no settings known, ends unknown.
  std::vector<CommShape> rank_shapes;
  std::vector<RankEnv> rank_env;
  std::vector<RankLogEnd> rank_ends;
  // Pairs of ranks (lower first) whose INIT transport lines show a network connection ("via NET/");
  // empty where the logs show none.
  std::set<std::pair<std::uint32_t, std::uint32_t>> net_links;
};

Result<SchedInput> parse_sched_trace(std::string_view text, const std::string& file);

}  // namespace railcheck::plan

#pragma once
// What an NCCL 2.28 log's INIT lines say about the scheduler's inputs (NCCL_DEBUG_SUBSYS=INIT):
//
//   comm 0x.. rank 0 nRanks 2 nNodes 2 localRanks 1 localRank 0 MNNVL 0      (init.cc)
//   2 coll channels, 2 collnet channels, 0 nvls channels, 2 p2p channels, 2 p2p channels per peer
//   P2P Chunksize set to 131072                                               (init.cc)
//    Max NThreads |  512 |  640 | ...   three rows: 7 algorithms x LL/LL128/Simple (graph/tuning.cc)
//   threadThresholds 8/8/64 | 16/8/64 | 512 | 512                             (graph/tuning.cc)
//   Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM (or via SHM/..., via NET/...)     (transport/*.cc)
//   Algorithm | Tree | Ring ... and its latency/bandwidth rows (rank 0, TUNING; nccl228_cost_table.hpp)
//
// Each is optional; what a log holds is applied to a CommShape and named in notes.
#include <array>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/plan/comm_shape.hpp"

namespace railcheck::plan {

struct InitTuning {
  std::optional<std::uint32_t> nnodes;
  std::optional<std::uint32_t> coll_channels;
  std::optional<std::uint32_t> p2p_channels;
  std::optional<std::uint32_t> p2p_channels_per_peer;
  std::optional<std::uint32_t> nvls_channels;
  std::optional<std::uint32_t> local_ranks;
  std::optional<std::uint64_t> p2p_chunk_bytes;
  std::optional<AlgoProtoTable> max_threads;
  std::optional<std::array<int, 8>> thresholds;  // Tree LL/LL128/Simple, Ring LL/LL128/Simple, CollNet x2
  std::optional<CostTables> costs;
  // Transport lines ("Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM"): P2P or SHM between ranks of a
  // node (transport/p2p.cc, shm.cc print them at connection time; NET/ lines are other nodes).
  std::optional<Nccl228Params::IntraLink> intra_link;
};

// The first communicator's lines of one rank's log. A row that starts like one of the above but
// does not parse is an error naming the line.
Result<InitTuning> parse_init_tuning(std::string_view text, std::string_view origin);

// Applies what `t` holds; returns one note per value taken.
std::vector<std::string> apply_init_tuning(const InitTuning& t, CommShape& shape);

// The INIT parameters of a run's logs (one per rank, any order): the first log with channel or
// node lines gives the communicator; the tuning tables, which only rank 0 prints, come from
// whichever log has them. Returns the notes, one per value taken (prefixed by the file).
struct NamedLog {
  std::string_view name;
  std::string_view text;
};
Result<std::vector<std::string>> apply_init_logs(const std::vector<NamedLog>& logs, CommShape& shape);

}  // namespace railcheck::plan

#pragma once
// One rank of the bootstrap (seed nccl-bootstrap-walkthrough §3.3 bootstrapInit and
// bootstrapAllGather): check in with the root, learn the ring successor's address, connect to
// it, and run the ring all-gather of one fixed-size blob per rank in nranks-1 steps. At step s
// a rank sends its successor the blob of rank (me - s) mod n and receives from its predecessor
// the blob of rank (me - s - 1) mod n.
//
//   Idle --start--> CheckingIn --RingNeighbour--> Gathering --n-1 blocks in--> Done (RingDone
//                                                                              to the predecessor)
//                        |                            |
//                        +------ Abort received, link lost, deadline, abort() ----> Failed
//
// Abort propagation (seed §1.2): a failing rank sends an Abort on every link it holds except
// the one the abort came from; a rank that receives one fails and forwards it the same way,
// so an abort travels the ring in both directions and reaches every rank. Before the ring
// exists the root relays it (bootstrap_root.hpp).
//
// Sans-IO: the driver owns the root connection, the connection to the successor (made on
// ConnectNext) and the one accepted from the predecessor; it hands over decoded frames, lost
// connections and "now", and executes the RankActions in order.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

#include "engine/bootstrap/bootstrap_message.hpp"
#include "engine/core/result.hpp"
#include "engine/core/time.hpp"

namespace railcheck::bootstrap {

enum class RankLink : std::uint8_t { Root, Next, Prev };
const char* name(RankLink l);

struct RankConfig {
  std::uint64_t run_id = 0;
  std::uint32_t rank = 0;
  std::uint32_t nranks = 0;
  std::string ring_address;        // where this rank's driver accepts the predecessor (opaque text)
  std::vector<std::uint8_t> blob;  // this rank's contribution; every rank's has the same size
  Nanos deadline{};                // absolute: past it the rank aborts
};

// Send a frame on a link. For Next the driver connects first (ConnectNext) and may queue.
struct RankSend {
  RankLink link = RankLink::Root;
  Frame frame;
};
// Open the connection to the ring successor.
struct ConnectNext {
  std::uint32_t rank = 0;
  std::string address;
};
// Close the link once everything sent on it has been written.
struct RankClose {
  RankLink link = RankLink::Root;
};
// The rank is finished: blobs() holds every rank's blob, or `error` says why it failed.
struct RankFinished {
  std::optional<Error> error;
};
using RankAction = std::variant<RankSend, ConnectNext, RankClose, RankFinished>;
using RankActions = std::vector<RankAction>;

enum class RankState : std::uint8_t { Idle, CheckingIn, Gathering, Done, Failed };
const char* name(RankState s);

class BootstrapRank {
 public:
  // Checks rank < nranks <= kMaxRanks, the blob size and the address length.
  static Result<BootstrapRank> create(RankConfig cfg);

  // Sends the CheckIn to the root.
  void start(Nanos now, RankActions& out);
  void on_frame(RankLink from, const Frame& frame, Nanos now, RankActions& out);
  // The link closed or failed (`why` says how), or, for Next, could not be connected.
  void on_link_lost(RankLink link, const std::string& why, Nanos now, RankActions& out);
  // Call when `now` reaches deadline().
  void on_time(Nanos now, RankActions& out);
  // The user gives up on this rank; every other rank learns it.
  void abort(const std::string& why, Nanos now, RankActions& out);

  Nanos deadline() const { return cfg_.deadline; }
  RankState state() const { return state_; }
  bool finished() const { return state_ == RankState::Done || state_ == RankState::Failed; }
  // Every rank's blob, indexed by rank; complete once state() == Done.
  const std::vector<std::vector<std::uint8_t>>& blobs() const { return blobs_; }

 private:
  explicit BootstrapRank(RankConfig cfg);

  std::uint32_t prev_rank() const { return (cfg_.rank + cfg_.nranks - 1) % cfg_.nranks; }
  std::uint32_t next_rank() const { return (cfg_.rank + 1) % cfg_.nranks; }
  void on_ring_neighbour(const RingNeighbour& n, RankActions& out);
  void on_prev_frame(const Frame& frame, RankActions& out);
  void send_next(RingBlock block, RankActions& out);
  void finish_if_gathered(RankActions& out);
  // Fail with `abort` as the cause: forward it on every held link except `came_from`.
  void fail(const Abort& abort, std::optional<RankLink> came_from, RankActions& out);
  void fail_here(AbortReason reason, std::string text, RankActions& out);
  std::string waiting_for() const;
  std::string me() const;

  RankConfig cfg_;
  RankState state_ = RankState::Idle;
  bool root_open_ = false;
  bool next_known_ = false;
  bool next_open_ = false;
  bool prev_hello_ = false;
  bool prev_open_ = false;
  bool next_done_ = false;                // the successor said RingDone: its closing is normal
  std::uint32_t received_ = 0;            // ring blocks from the predecessor: steps 0..received_-1
  std::uint32_t sent_ = 0;                // ring blocks to the successor
  std::vector<RingBlock> held_for_next_;  // blocks to forward before the successor is known
  std::vector<std::vector<std::uint8_t>> blobs_;
};

}  // namespace railcheck::bootstrap

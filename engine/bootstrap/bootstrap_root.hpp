#pragma once
// The bootstrap root (seed nccl-bootstrap-walkthrough §2.4 bootstrapRoot): collects one
// CheckIn per rank, then tells each rank r the ring address of rank (r+1) mod nranks.
//
// Unlike NCCL's root, which logs a duplicate check-in or a rank-count mismatch and simply
// stops (leaving every rank blocked), this root answers: every check-in connection it holds,
// and every one that arrives later, gets an Abort that says what was wrong, until it has
// answered nranks check-ins or its deadline passes. A rank whose check-in connection drops,
// or that sends an Abort, makes the root abort all the others.
//
//   Collecting --all nranks checked in--> Done (RingNeighbour to each, links closed)
//       |  duplicate, mismatch, out of range, lost link, rank abort, deadline
//       v
//   Rejecting --nranks check-ins answered, or deadline--> Failed
//
// Sans-IO: the driver numbers each accepted connection (CheckInLink), hands over decoded
// frames, lost connections and "now", and executes the RootActions in order.
#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "engine/bootstrap/bootstrap_message.hpp"
#include "engine/core/result.hpp"
#include "engine/core/time.hpp"

namespace railcheck::bootstrap {

using CheckInLink = std::uint32_t;  // the driver's number for one accepted connection

struct RootConfig {
  std::uint64_t run_id = 0;
  std::uint32_t nranks = 0;
  Nanos deadline{};  // absolute: past it, the root aborts whoever has checked in
};

struct RootSend {
  CheckInLink link = 0;
  Frame frame;
};
// Close the link once everything sent on it has been written.
struct RootClose {
  CheckInLink link = 0;
};
// The root has nothing left to do; `error` says why the run failed, if it did.
struct RootFinished {
  std::optional<Error> error;
};
using RootAction = std::variant<RootSend, RootClose, RootFinished>;
using RootActions = std::vector<RootAction>;

enum class RootState : std::uint8_t { Collecting, Rejecting, Done, Failed };
const char* name(RootState s);

class BootstrapRoot {
 public:
  // Checks nranks against kMaxRanks.
  static Result<BootstrapRoot> create(const RootConfig& cfg);

  void on_frame(CheckInLink link, const Frame& frame, Nanos now, RootActions& out);
  // The connection closed or failed (`why` says how) before the root closed it.
  void on_link_lost(CheckInLink link, const std::string& why, Nanos now, RootActions& out);
  // Call when `now` reaches deadline().
  void on_time(Nanos now, RootActions& out);

  Nanos deadline() const { return cfg_.deadline; }
  RootState state() const { return state_; }
  bool finished() const { return state_ == RootState::Done || state_ == RootState::Failed; }

 private:
  explicit BootstrapRoot(const RootConfig& cfg);

  struct Entry {
    CheckInLink link = 0;
    CheckIn check_in;
  };

  void on_check_in(CheckInLink link, const CheckIn& c, RootActions& out);
  void distribute(RootActions& out);
  // Enter Rejecting: answer every held link with `abort`, close them all.
  void reject(Abort abort, RootActions& out);
  // Answer one link with the stored abort and close it.
  void answer(CheckInLink link, RootActions& out);
  void finish_if_answered(RootActions& out);
  void fail(RootActions& out);
  std::string missing_ranks() const;

  RootConfig cfg_;
  RootState state_ = RootState::Collecting;
  std::vector<std::optional<Entry>> by_rank_;  // index: rank
  std::uint32_t checked_in_ = 0;
  std::uint32_t first_blob_size_ = 0;  // every rank must gather blobs of the first check-in's size
  std::uint32_t first_blob_rank_ = 0;
  std::uint32_t answered_ = 0;  // check-in connections told to abort
  std::optional<Abort> abort_;  // set once Rejecting
};

}  // namespace railcheck::bootstrap

// The bootstrap root's transitions (bootstrap_root.hpp).
#include "engine/bootstrap/bootstrap_root.hpp"

#include <fmt/format.h>

#include "engine/core/engine_assert.hpp"

namespace railcheck::bootstrap {

const char* name(RootState s) {
  switch (s) {
    case RootState::Collecting: return "collecting";
    case RootState::Rejecting: return "rejecting";
    case RootState::Done: return "done";
    case RootState::Failed: return "failed";
  }
  return "unknown";
}

Result<BootstrapRoot> BootstrapRoot::create(const RootConfig& cfg) {
  if (cfg.nranks == 0 || cfg.nranks > kMaxRanks) {
    return Error{fmt::format("bootstrap root: nranks {} out of range 1..{}", cfg.nranks, kMaxRanks),
                 "pass the number of ranks in the run"};
  }
  return BootstrapRoot(cfg);
}

BootstrapRoot::BootstrapRoot(const RootConfig& cfg) : cfg_(cfg), by_rank_(cfg.nranks) {}

// Actions are built in place (emplace_back with the alternative named): gcc 12 at -O2 took the
// temporary variant that push_back moves from for one read before it is written, and printed 18
// -Wmaybe-uninitialized warnings for this file.

void BootstrapRoot::on_frame(CheckInLink link, const Frame& frame, Nanos /*now*/, RootActions& out) {
  if (finished()) return;
  if (frame.run_id != cfg_.run_id) {
    // A rank of another run (or a misconfigured one): tell it, in its own run id so that it
    // reads the answer, but do not let it spoil this run.
    out.emplace_back(
        std::in_place_type<RootSend>,
        RootSend{link, Frame{frame.run_id, Abort{kFromRoot, AbortReason::WrongRun,
                                                 fmt::format("run id 0x{:016x} is not this root's run 0x{:016x}",
                                                             frame.run_id, cfg_.run_id)}}});
    out.emplace_back(std::in_place_type<RootClose>, RootClose{link});
    return;
  }
  if (const auto* c = std::get_if<CheckIn>(&frame.message)) {
    on_check_in(link, *c, out);
    return;
  }
  if (state_ == RootState::Rejecting) return;  // already aborting; nothing a rank says changes that
  if (const auto* a = std::get_if<Abort>(&frame.message)) {
    reject(*a, out);  // relay the rank's own abort, cause and text unchanged
    return;
  }
  reject(Abort{kFromRoot, AbortReason::ProtocolError,
               fmt::format("root got {} on a check-in connection, expected CheckIn", message_name(frame.message))},
         out);
}

void BootstrapRoot::on_check_in(CheckInLink link, const CheckIn& c, RootActions& out) {
  if (state_ == RootState::Rejecting) {
    answer(link, out);
    finish_if_answered(out);
    return;
  }
  const std::string who = fmt::format("rank {} ({})", c.rank, c.ring_address);
  if (c.nranks != cfg_.nranks) {
    reject(Abort{kFromRoot, AbortReason::RankCountMismatch,
                 fmt::format("{} says nranks={}, the root was started with nranks={}", who, c.nranks, cfg_.nranks)},
           out);
  } else if (c.rank >= cfg_.nranks) {
    reject(Abort{kFromRoot, AbortReason::RankOutOfRange,
                 fmt::format("{} is out of range for nranks={}", who, cfg_.nranks)},
           out);
  } else if (by_rank_[c.rank]) {
    reject(Abort{kFromRoot, AbortReason::DuplicateRank,
                 fmt::format("rank {} checked in twice (first from {}, again from {})", c.rank,
                             by_rank_[c.rank]->check_in.ring_address, c.ring_address)},
           out);
  } else if (checked_in_ > 0 && c.blob_size != first_blob_size_) {
    reject(Abort{kFromRoot, AbortReason::BlobSizeMismatch,
                 fmt::format("{} gathers {}-byte blobs, rank {} gathers {}-byte blobs", who, c.blob_size,
                             first_blob_rank_, first_blob_size_)},
           out);
  } else {
    if (checked_in_ == 0) {
      first_blob_size_ = c.blob_size;
      first_blob_rank_ = c.rank;
    }
    by_rank_[c.rank] = Entry{link, c};
    ++checked_in_;
    if (checked_in_ == cfg_.nranks) distribute(out);
    return;
  }
  // The offending check-in is not stored, so reject() did not answer it.
  answer(link, out);
  finish_if_answered(out);
}

void BootstrapRoot::distribute(RootActions& out) {
  for (std::uint32_t r = 0; r < cfg_.nranks; ++r) {
    const std::uint32_t next = (r + 1) % cfg_.nranks;
    out.emplace_back(
        std::in_place_type<RootSend>,
        RootSend{by_rank_[r]->link,
                 Frame{cfg_.run_id, RingNeighbour{next, cfg_.nranks, by_rank_[next]->check_in.ring_address}}});
    out.emplace_back(std::in_place_type<RootClose>, RootClose{by_rank_[r]->link});
  }
  state_ = RootState::Done;
  out.emplace_back(std::in_place_type<RootFinished>, RootFinished{});
}

void BootstrapRoot::reject(Abort abort, RootActions& out) {
  RAILCHECK_ASSERT(state_ == RootState::Collecting, "the root rejects a run only while it collects check-ins");
  abort_ = std::move(abort);
  state_ = RootState::Rejecting;
  for (const auto& e : by_rank_) {
    if (e) answer(e->link, out);
  }
  finish_if_answered(out);
}

void BootstrapRoot::answer(CheckInLink link, RootActions& out) {
  out.emplace_back(std::in_place_type<RootSend>, RootSend{link, Frame{cfg_.run_id, *abort_}});
  out.emplace_back(std::in_place_type<RootClose>, RootClose{link});
  ++answered_;
}

void BootstrapRoot::finish_if_answered(RootActions& out) {
  // nranks processes are expected to check in; once that many have been told, nobody is left
  // waiting on this root.
  if (answered_ >= cfg_.nranks) fail(out);
}

void BootstrapRoot::fail(RootActions& out) {
  state_ = RootState::Failed;
  const Abort& a = *abort_;
  out.emplace_back(std::in_place_type<RootFinished>,
                   RootFinished{Error{fmt::format("bootstrap root aborted the run ({}): {}", name(a.reason), a.text),
                                      "see the first error of the rank named in the message"}});
}

void BootstrapRoot::on_link_lost(CheckInLink link, const std::string& why, Nanos /*now*/, RootActions& out) {
  if (state_ != RootState::Collecting) return;
  for (std::uint32_t r = 0; r < cfg_.nranks; ++r) {
    if (by_rank_[r] && by_rank_[r]->link == link) {
      const std::string address = by_rank_[r]->check_in.ring_address;
      by_rank_[r].reset();  // nothing can be sent on it any more
      --checked_in_;
      reject(Abort{kFromRoot, AbortReason::PeerLost,
                   fmt::format("rank {} ({}) lost its check-in connection before the ring was formed: {}", r, address,
                               why)},
             out);
      ++answered_;  // the lost rank counts as answered: it will not read anything more
      finish_if_answered(out);
      return;
    }
  }
  // A connection that never sent a CheckIn: nothing to undo.
}

void BootstrapRoot::on_time(Nanos now, RootActions& out) {
  if (finished() || now < cfg_.deadline) return;
  if (state_ == RootState::Collecting) {
    reject(Abort{kFromRoot, AbortReason::Timeout,
                 fmt::format("root deadline passed with {} of {} ranks checked in (missing: {})", checked_in_,
                             cfg_.nranks, missing_ranks())},
           out);
  }
  if (!finished()) fail(out);
}

std::string BootstrapRoot::missing_ranks() const {
  std::string s;
  int listed = 0;
  for (std::uint32_t r = 0; r < cfg_.nranks; ++r) {
    if (by_rank_[r]) continue;
    if (listed == 8) return s + ", ...";
    s += (listed++ == 0 ? "" : ", ") + std::to_string(r);
  }
  return s;
}

}  // namespace railcheck::bootstrap

// One bootstrap rank's transitions (bootstrap_rank.hpp).
#include "engine/bootstrap/bootstrap_rank.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "engine/core/engine_assert.hpp"

namespace railcheck::bootstrap {

const char* name(RankLink l) {
  switch (l) {
    case RankLink::Root: return "root";
    case RankLink::Next: return "next";
    case RankLink::Prev: return "prev";
  }
  return "unknown";
}

const char* name(RankState s) {
  switch (s) {
    case RankState::Idle: return "idle";
    case RankState::CheckingIn: return "checking in";
    case RankState::Gathering: return "gathering";
    case RankState::Done: return "done";
    case RankState::Failed: return "failed";
  }
  return "unknown";
}

namespace {

// What a user can do about each cause, for the error every rank reports.
const char* hint(AbortReason r) {
  switch (r) {
    case AbortReason::Requested: return "see the aborting rank's own error";
    case AbortReason::DuplicateRank:
    case AbortReason::RankOutOfRange: return "give every process a distinct rank in 0..nranks-1";
    case AbortReason::RankCountMismatch: return "start every rank with the same nranks";
    case AbortReason::BlobSizeMismatch: return "every rank must contribute a blob of the same size";
    case AbortReason::WrongRun: return "start every rank with the same root address and run id";
    case AbortReason::Timeout:
      return "check that every rank started and can reach the root address, or raise the timeout";
    case AbortReason::PeerLost: return "a rank exited or its connection failed; see that rank's own error";
    case AbortReason::ProtocolError: return "run the same railcheck build on every rank";
    case AbortReason::NotAuthenticated:
      return "give every rank of the job the same key (RAILCHECK_JOB_KEY_FILE or RAILCHECK_JOB_KEY; docs/security.md)";
  }
  return "";
}

}  // namespace

Result<BootstrapRank> BootstrapRank::create(RankConfig cfg) {
  if (cfg.nranks == 0 || cfg.nranks > kMaxRanks) {
    return Error{fmt::format("bootstrap: nranks {} out of range 1..{}", cfg.nranks, kMaxRanks),
                 "pass the number of ranks in the run"};
  }
  if (cfg.rank >= cfg.nranks) {
    return Error{fmt::format("bootstrap: rank {} out of range for nranks={}", cfg.rank, cfg.nranks),
                 "ranks are numbered 0..nranks-1"};
  }
  if (cfg.blob.size() > kMaxBlobSize) {
    return Error{fmt::format("bootstrap: blob of {} bytes, at most {} allowed", cfg.blob.size(), kMaxBlobSize),
                 "gather a handle or an address, not bulk data"};
  }
  const auto& a = cfg.ring_address;
  if (a.size() > kMaxAddressSize || !std::all_of(a.begin(), a.end(), [](char c) { return c >= 0x20 && c <= 0x7e; })) {
    return Error{
        fmt::format("bootstrap: ring address \"{}\" is not printable text of at most {} bytes", a, kMaxAddressSize),
        ""};
  }
  return BootstrapRank(std::move(cfg));
}

BootstrapRank::BootstrapRank(RankConfig cfg) : cfg_(std::move(cfg)), blobs_(cfg_.nranks) {
  blobs_[cfg_.rank] = cfg_.blob;
}

std::string BootstrapRank::me() const { return fmt::format("rank {} of {}", cfg_.rank, cfg_.nranks); }

void BootstrapRank::start(Nanos /*now*/, RankActions& out) {
  if (state_ != RankState::Idle) return;
  state_ = RankState::CheckingIn;
  root_open_ = true;
  out.push_back(RankSend{
      RankLink::Root, Frame{cfg_.run_id, CheckIn{cfg_.rank, cfg_.nranks, static_cast<std::uint32_t>(cfg_.blob.size()),
                                                 cfg_.ring_address}}});
}

void BootstrapRank::on_frame(RankLink from, const Frame& frame, Nanos /*now*/, RankActions& out) {
  if (finished()) return;
  if (frame.run_id != cfg_.run_id) {
    fail_here(
        AbortReason::WrongRun,
        fmt::format("{} link sent run id 0x{:016x}, this run is 0x{:016x}", name(from), frame.run_id, cfg_.run_id),
        out);
    return;
  }
  if (const auto* a = std::get_if<Abort>(&frame.message)) {
    fail(*a, from, out);
    return;
  }
  if (from == RankLink::Prev) {
    on_prev_frame(frame, out);
    return;
  }
  if (from == RankLink::Next && std::holds_alternative<RingDone>(frame.message) && sent_ + 1 == cfg_.nranks) {
    next_done_ = true;
    return;
  }
  const auto* n = std::get_if<RingNeighbour>(&frame.message);
  if (from == RankLink::Root && n != nullptr && state_ == RankState::CheckingIn) {
    on_ring_neighbour(*n, out);
    return;
  }
  fail_here(AbortReason::ProtocolError,
            fmt::format("unexpected {} on the {} link while {}", message_name(frame.message), name(from), name(state_)),
            out);
}

void BootstrapRank::on_ring_neighbour(const RingNeighbour& n, RankActions& out) {
  RAILCHECK_ASSERT(state_ == RankState::CheckingIn, "the root's answer is read only while checking in");
  if (n.next_rank != next_rank() || n.nranks != cfg_.nranks) {
    fail_here(AbortReason::ProtocolError,
              fmt::format("the root named rank {} of {} as ring successor, expected rank {} of {}", n.next_rank,
                          n.nranks, next_rank(), cfg_.nranks),
              out);
    return;
  }
  state_ = RankState::Gathering;
  root_open_ = false;  // the root closes it after this answer
  out.push_back(RankClose{RankLink::Root});
  if (cfg_.nranks > 1) {
    next_known_ = true;
    next_open_ = true;
    out.push_back(ConnectNext{n.next_rank, n.next_address});
    out.push_back(RankSend{RankLink::Next, Frame{cfg_.run_id, RingHello{cfg_.rank, n.next_rank}}});
    send_next(RingBlock{0, cfg_.rank, cfg_.blob}, out);
    for (auto& b : std::exchange(held_for_next_, {})) send_next(std::move(b), out);
  }
  finish_if_gathered(out);
}

void BootstrapRank::on_prev_frame(const Frame& frame, RankActions& out) {
  // The predecessor may connect before the root's answer reaches this rank.
  prev_open_ = true;
  if (!prev_hello_) {
    const auto* h = std::get_if<RingHello>(&frame.message);
    if (h == nullptr || h->from_rank != prev_rank() || h->to_rank != cfg_.rank) {
      fail_here(AbortReason::ProtocolError,
                h == nullptr ? fmt::format("the ring predecessor's first message is {}, expected RingHello",
                                           message_name(frame.message))
                             : fmt::format("the ring predecessor says it is rank {} sending to rank {}, expected rank "
                                           "{} sending to rank {}",
                                           h->from_rank, h->to_rank, prev_rank(), cfg_.rank),
                out);
      return;
    }
    prev_hello_ = true;
    return;
  }
  const auto* b = std::get_if<RingBlock>(&frame.message);
  const std::uint32_t n = cfg_.nranks;
  if (b == nullptr) {
    fail_here(AbortReason::ProtocolError,
              fmt::format("unexpected {} from the ring predecessor, expected RingBlock", message_name(frame.message)),
              out);
    return;
  }
  // Step s carries the blob of rank (me - s - 1) mod n; TCP keeps the steps in order.
  const std::uint32_t want_origin = (cfg_.rank + 2 * n - received_ - 1) % n;
  if (received_ + 1 >= n || b->step != received_ || b->origin_rank != want_origin ||
      b->blob.size() != cfg_.blob.size()) {
    fail_here(
        AbortReason::ProtocolError,
        fmt::format("ring block step {} origin {} of {} bytes from rank {}, expected step {} origin {} of {} bytes",
                    b->step, b->origin_rank, b->blob.size(), prev_rank(), received_, want_origin, cfg_.blob.size()),
        out);
    return;
  }
  blobs_[b->origin_rank] = b->blob;
  ++received_;
  if (b->step + 1 < n - 1) send_next(RingBlock{b->step + 1, b->origin_rank, b->blob}, out);
  finish_if_gathered(out);
}

void BootstrapRank::send_next(RingBlock block, RankActions& out) {
  if (!next_known_) {
    held_for_next_.push_back(std::move(block));
    return;
  }
  ++sent_;
  out.push_back(RankSend{RankLink::Next, Frame{cfg_.run_id, std::move(block)}});
}

void BootstrapRank::finish_if_gathered(RankActions& out) {
  if (state_ != RankState::Gathering || received_ + 1 < cfg_.nranks) return;
  // Done: the other n - 1 blobs arrived, and this rank sent its own and forwarded n - 2 others.
  RAILCHECK_ASSERT(received_ + 1 == cfg_.nranks && sent_ == cfg_.nranks - 1 && held_for_next_.empty(),
                   "a rank finishes the all-gather with every blob received and every block passed on");
  state_ = RankState::Done;
  if (prev_open_) out.push_back(RankSend{RankLink::Prev, Frame{cfg_.run_id, RingDone{cfg_.rank}}});
  if (next_open_) out.push_back(RankClose{RankLink::Next});
  if (prev_open_) out.push_back(RankClose{RankLink::Prev});
  next_open_ = prev_open_ = false;
  out.push_back(RankFinished{});
}

void BootstrapRank::fail(const Abort& abort, std::optional<RankLink> came_from, RankActions& out) {
  state_ = RankState::Failed;
  const std::pair<RankLink, bool*> links[] = {
      {RankLink::Root, &root_open_}, {RankLink::Next, &next_open_}, {RankLink::Prev, &prev_open_}};
  for (const auto& [link, open] : links) {
    if (*open && came_from != link) out.push_back(RankSend{link, Frame{cfg_.run_id, abort}});
  }
  for (const auto& [link, open] : links) {
    if (*open) out.push_back(RankClose{link});
    *open = false;
  }
  std::string what;
  if (abort.from_rank == cfg_.rank) {
    what = fmt::format("bootstrap {} failed ({}): {}", me(), name(abort.reason), abort.text);
  } else if (abort.from_rank == kFromRoot) {
    what = fmt::format("bootstrap {}: the root aborted the run ({}): {}", me(), name(abort.reason), abort.text);
  } else {
    what = fmt::format("bootstrap {}: rank {} aborted the run ({}): {}", me(), abort.from_rank, name(abort.reason),
                       abort.text);
  }
  out.push_back(RankFinished{Error{std::move(what), hint(abort.reason)}});
}

void BootstrapRank::fail_here(AbortReason reason, std::string text, RankActions& out) {
  fail(Abort{cfg_.rank, reason, std::move(text)}, std::nullopt, out);
}

void BootstrapRank::on_link_lost(RankLink link, const std::string& why, Nanos /*now*/, RankActions& out) {
  if (finished()) return;
  switch (link) {
    case RankLink::Root:
      root_open_ = false;
      // After the root's answer the root closes its end: expected.
      if (state_ == RankState::CheckingIn) {
        fail_here(AbortReason::PeerLost, fmt::format("lost the connection to the root before it answered: {}", why),
                  out);
      }
      return;
    case RankLink::Next:
      next_open_ = false;
      // A successor that holds every blob may finish and close first; it says so (RingDone).
      if (!next_done_) {
        fail_here(AbortReason::PeerLost,
                  fmt::format("lost the connection to rank {} (ring successor): {}", next_rank(), why), out);
      }
      return;
    case RankLink::Prev:
      prev_open_ = false;
      fail_here(AbortReason::PeerLost,
                fmt::format("lost the connection from rank {} (ring predecessor): {}", prev_rank(), why), out);
      return;
  }
}

void BootstrapRank::on_time(Nanos now, RankActions& out) {
  if (finished() || now < cfg_.deadline) return;
  fail_here(AbortReason::Timeout, fmt::format("deadline passed while {}", waiting_for()), out);
}

void BootstrapRank::abort(const std::string& why, Nanos /*now*/, RankActions& out) {
  if (finished()) return;
  fail_here(AbortReason::Requested, why, out);
}

std::string BootstrapRank::waiting_for() const {
  switch (state_) {
    case RankState::Idle: return "not yet started";
    case RankState::CheckingIn: return "waiting for the root to answer the check-in";
    case RankState::Gathering:
      if (!prev_hello_) return fmt::format("waiting for rank {} (ring predecessor) to connect", prev_rank());
      return fmt::format("waiting for ring block {} of {} from rank {}", received_ + 1, cfg_.nranks - 1, prev_rank());
    case RankState::Done:
    case RankState::Failed: break;
  }
  return name(state_);
}

}  // namespace railcheck::bootstrap

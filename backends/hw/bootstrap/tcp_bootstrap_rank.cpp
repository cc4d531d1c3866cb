// This rank's links (tcp_bootstrap_driver.hpp): the check-in connection to the root, the
// connection to its ring successor, and the one from its ring predecessor, which with a key is
// a candidate among any that connect until its first frame proves who it is.
#include <fmt/format.h>
#include <poll.h>

#include <cerrno>

#include "backends/hw/bootstrap/tcp_bootstrap_driver.hpp"

namespace railcheck::hw {

using bootstrap::RankLink;

FrameConnection* TcpBootstrap::link(RankLink l) {
  switch (l) {
    case RankLink::Root: return &to_root_;
    case RankLink::Next: return &to_next_;
    case RankLink::Prev: return &from_prev_;
  }
  return nullptr;
}

void TcpBootstrap::connect_root(Nanos now) {
  root_retry_at_.reset();
  auto pc = start_connect(root_address_);
  to_root_.peer = "root " + root_address_.to_string();
  to_root_.remote = root_address_.to_string();
  to_root_.out_done = 0;  // nothing reached the root on a connection that never opened
  if (!pc) {
    rank_lost(RankLink::Root, pc.error().what);
    return;
  }
  to_root_.fd = std::move(pc->fd);
  to_root_.connecting = true;
  if (pc->failed_errno == ECONNREFUSED && now < rank_->deadline()) {
    to_root_.fd.reset();
    root_retry_at_ = now + kRootRetry;
  } else if (pc->failed_errno != 0) {
    to_root_.fd.reset();
    rank_lost(RankLink::Root, socket_error("connect", root_address_.to_string(), pc->failed_errno).what);
  }
}

void TcpBootstrap::rank_lost(RankLink l, const std::string& why) {
  link(l)->fd.reset();
  bootstrap::RankActions actions;
  rank_->on_link_lost(l, why, now_, actions);
  apply(actions);
}

void TcpBootstrap::apply(bootstrap::RankActions& actions) {
  for (auto& action : actions) {
    if (auto* s = std::get_if<bootstrap::RankSend>(&action)) {
      FrameConnection* c = link(s->link);
      const std::uint32_t to = s->link == RankLink::Root   ? bootstrap::kFromRoot
                               : s->link == RankLink::Next ? (cfg_.rank + 1) % cfg_.nranks
                                                           : (cfg_.rank + cfg_.nranks - 1) % cfg_.nranks;
      if (s->link == RankLink::Root && !c->open() && !root_retry_at_ && c->out.empty()) {
        c->out = seal_frame(rank_auth_ ? &*rank_auth_ : nullptr, to, s->frame);
        connect_root(now_);
        continue;
      }
      const auto bytes = seal_frame(rank_auth_ ? &*rank_auth_ : nullptr, to, s->frame);
      c->out.insert(c->out.end(), bytes.begin(), bytes.end());
    } else if (auto* n = std::get_if<bootstrap::ConnectNext>(&action)) {
      to_next_.peer = fmt::format("rank {} (ring successor) at {}", n->rank, n->address);
      to_next_.remote = n->address;
      auto at = parse_socket_address(n->address);
      if (!at) {
        rank_lost(RankLink::Next, at.error().what);
        continue;
      }
      auto pc = start_connect(at.value());
      if (!pc) {
        rank_lost(RankLink::Next, pc.error().what);
        continue;
      }
      to_next_.fd = std::move(pc->fd);
      to_next_.connecting = true;
      if (pc->failed_errno != 0) rank_lost(RankLink::Next, socket_error("connect", n->address, pc->failed_errno).what);
    } else if (auto* cl = std::get_if<bootstrap::RankClose>(&action)) {
      FrameConnection* c = link(cl->link);
      c->close_when_flushed = true;
      close_if_done(*c);
    } else if (auto* f = std::get_if<bootstrap::RankFinished>(&action)) {
      result_error_ = f->error;
    }
  }
}

void TcpBootstrap::accept_prev() {
  while (auto accepted = accept_connection(ring_listener_, fmt::format("ring predecessor of rank {} on {}", cfg_.rank,
                                                                         ring_listener_.bound.to_string()))) {
    FrameConnection c = std::move(*accepted);
    // Without a key, only the ring predecessor is told this address: the first connection is
    // taken as it, anything after it is not part of the protocol and is closed unread. With a
    // key anyone may connect, so each connection is a candidate until its first frame proves
    // it is the predecessor (service_prev_candidate).
    if (prev_accepted_) continue;
    if (!rank_auth_) {
      prev_accepted_ = true;
      from_prev_ = std::move(c);
    } else if (prev_candidates_.size() < kMaxPrevCandidates) {
      prev_candidates_.push_back(std::move(c));
    }
  }
}

void TcpBootstrap::service_prev_candidate(std::size_t i, short revents) {
  FrameConnection& c = prev_candidates_[i];
  ConnectionNews news = service_connection(c, revents, &*rank_auth_);
  const std::uint32_t prev = (cfg_.rank + cfg_.nranks - 1) % cfg_.nranks;
  for (std::size_t k = 0; k < news.frames.size(); ++k) {
    IncomingFrame& in = news.frames[k];
    if (in.refusal || in.sender != prev) {
      note_refusal(c, in.refusal ? *in.refusal
                                 : bootstrap::FrameRefusal{bootstrap::RefusalReason::Impersonation,
                                                           fmt::format("rank {} is not this rank's ring predecessor "
                                                                       "(rank {})",
                                                                       in.sender, prev),
                                                           cfg_.run_id, std::nullopt});
      c.fd.reset();  // not the predecessor: nothing it sends matters
      return;
    }
    // The predecessor: it becomes the Prev link, the other candidates are closed, and this
    // frame and the ones after it go to the engine.
    c.authenticated = true;
    prev_accepted_ = true;
    from_prev_ = std::move(c);
    prev_candidates_.clear();
    bootstrap::RankActions actions;
    for (; k < news.frames.size(); ++k) {
      if (news.frames[k].frame) {
        rank_->on_frame(RankLink::Prev, *news.frames[k].frame, now_, actions);
      } else {
        note_refusal(from_prev_, *news.frames[k].refusal);
      }
    }
    apply(actions);
    if (news.lost && from_prev_.open()) rank_lost(RankLink::Prev, *news.lost);
    return;
  }
  if (news.lost) c.fd.reset();  // a candidate that left before proving anything
}

void TcpBootstrap::service_rank_link(RankLink l, short revents) {
  FrameConnection& c = *link(l);
  if (!c.open()) return;
  ConnectionNews news = service_connection(c, revents, rank_auth_ ? &*rank_auth_ : nullptr);
  if (news.connect_errno != 0) {
    c.fd.reset();
    // The root may not be listening yet: keep trying until the deadline.
    if (l == RankLink::Root && news.connect_errno == ECONNREFUSED && now_ < rank_->deadline()) {
      root_retry_at_ = now_ + kRootRetry;
    } else {
      rank_lost(l, socket_error("connect", c.peer, news.connect_errno).what);
    }
    return;
  }
  bootstrap::RankActions actions;
  for (auto& in : news.frames) {
    if (in.frame) {
      rank_->on_frame(l, *in.frame, now_, actions);
    } else if (l == RankLink::Root && in.refusal->unauthenticated &&
               bootstrap::is_join_refusal(*in.refusal->unauthenticated) &&
               rank_->state() == bootstrap::RankState::CheckingIn) {
      // The root could not authenticate our check-in: our join fails, with its reason.
      rank_->on_frame(l, *in.refusal->unauthenticated, now_, actions);
    } else {
      note_refusal(c, *in.refusal);
    }
  }
  apply(actions);
  if (news.lost && c.open()) rank_lost(l, *news.lost);
  close_if_done(c);
}

}  // namespace railcheck::hw

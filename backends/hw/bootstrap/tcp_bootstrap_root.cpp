// The root's side (tcp_bootstrap_driver.hpp), on the process that hosts it: the check-in
// connections, where a connection that has not yet delivered an authentic frame is a stranger
// until it does; its refused frame is logged once and it is closed, and the run is not told.
#include <fmt/format.h>

#include "backends/hw/bootstrap/tcp_bootstrap_driver.hpp"

namespace railcheck::hw {

using bootstrap::CheckInLink;

void TcpBootstrap::apply(bootstrap::RootActions& actions) {
  for (auto& action : actions) {
    if (auto* s = std::get_if<bootstrap::RootSend>(&action)) {
      auto it = check_ins_.find(s->link);
      if (it == check_ins_.end()) continue;  // already gone: the root's news cannot reach it
      // The root answers only links whose rank it has authenticated (with a key, every other
      // frame was refused before the engine saw it).
      const auto rank = check_in_rank_.find(s->link);
      const auto bytes = seal_frame(root_auth_ && rank != check_in_rank_.end() ? &*root_auth_ : nullptr,
                                    rank != check_in_rank_.end() ? rank->second : 0, s->frame);
      it->second.out.insert(it->second.out.end(), bytes.begin(), bytes.end());
    } else if (auto* c = std::get_if<bootstrap::RootClose>(&action)) {
      auto it = check_ins_.find(c->link);
      if (it == check_ins_.end()) continue;
      it->second.close_when_flushed = true;
      close_if_done(it->second);
    }
    // RootFinished: the root's verdict reaches this process's own rank as a frame, like
    // every other rank's, so it needs no separate path.
  }
}

void TcpBootstrap::accept_check_ins() {
  while (auto c = accept_connection(root_listener_->listener(), fmt::format("check-in connection {} to root {}",
                                                                           next_check_in_, root_address_.to_string())))
    check_ins_.emplace(next_check_in_++, std::move(*c));
}

void TcpBootstrap::service_check_in(CheckInLink id, short revents) {
  auto it = check_ins_.find(id);
  if (it == check_ins_.end() || !it->second.open()) return;
  FrameConnection& c = it->second;
  ConnectionNews news = service_connection(c, revents, root_auth_ ? &*root_auth_ : nullptr);
  bootstrap::RootActions actions;
  for (auto& in : news.frames) {
    if (!c.open() || c.close_when_flushed) break;
    if (in.refusal) {
      note_refusal(c, *in.refusal);
      if (c.authenticated) continue;  // a rank's own link: drop the frame, keep the link
      // Nothing authentic came on this connection yet: a stranger, another job, or a rank
      // with a wrong key. It hears why (if that says anything about its key), then the root
      // stops reading it; the run is not told.
      if (auto answer = bootstrap::join_refusal(*in.refusal)) {
        const auto bytes = bootstrap::encode_frame(*answer);
        c.out.insert(c.out.end(), bytes.begin(), bytes.end());
      }
      c.in.clear();
      c.close_when_flushed = true;
      break;
    }
    if (root_auth_) {
      c.authenticated = true;
      check_in_rank_.emplace(id, in.sender);
    }
    root_->on_frame(id, *in.frame, now_, actions);
  }
  if (news.lost) {
    c.fd.reset();
    root_->on_link_lost(id, *news.lost, now_, actions);
  }
  apply(actions);
  close_if_done(c);
}

}  // namespace railcheck::hw

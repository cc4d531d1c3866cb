// run_bootstrap(): the engine's BootstrapRank (and, on the rank that hosts it, BootstrapRoot)
// driven by one poll(2) loop over non-blocking TCP sockets. This file only moves bytes and
// time: which frame goes where, when to fail and whom to tell is decided in engine/bootstrap.
#include "backends/hw/bootstrap/tcp_bootstrap.hpp"

#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <deque>
#include <map>
#include <optional>
#include <random>

#include "engine/bootstrap/bootstrap_codec.hpp"
#include "engine/bootstrap/bootstrap_rank.hpp"
#include "engine/bootstrap/bootstrap_root.hpp"
#include "engine/bootstrap/frame_auth.hpp"

namespace railcheck::hw {

using bootstrap::BootstrapRank;
using bootstrap::BootstrapRoot;
using bootstrap::CheckInLink;
using bootstrap::FrameAuth;
using bootstrap::RankLink;

Result<RootListener> RootListener::open(const std::string& address) {
  auto at = parse_socket_address(address);
  if (!at) return at.error();
  auto l = listen_on(at.value());
  if (!l) return Error{"bootstrap root: " + l.error().what, l.error().hint};
  return RootListener(std::move(l).value());
}

namespace {

// How long a rank waits before connecting to the root again when nobody listens there yet.
constexpr Nanos kRootRetry = ms(20);
// How long a finished process keeps flushing what it still has to send (the root's last
// answers, an abort) before it closes everything.
constexpr Nanos kFlushGrace = sec(1);
constexpr std::size_t kReadChunk = 64 * 1024;
// Connections to a ring listener that have not yet proved to be the predecessor (with a key):
// beyond this many, more are closed unread.
constexpr std::size_t kMaxPrevCandidates = 16;

Nanos clock_now() { return std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now().time_since_epoch()); }

// One TCP connection: bytes to write, bytes read but not yet a whole frame.
struct Connection {
  Fd fd;
  std::string peer;    // for errors: "root 127.0.0.1:29500"
  std::string remote;  // the other end's address, for refusal logs
  bool authenticated = false;  // it has delivered an authentic frame
  std::uint64_t refused = 0;
  bool connecting = false;
  std::vector<std::uint8_t> in;
  std::vector<std::uint8_t> out;
  std::size_t out_done = 0;
  bool close_when_flushed = false;

  bool pending() const { return out_done < out.size(); }
  bool open() const { return fd.valid(); }
};

// One frame read from a connection: authentic (or, without a key, decoded), or refused.
struct Incoming {
  std::optional<bootstrap::Frame> frame;
  std::uint32_t sender = 0;  // with a key: who sealed it
  std::optional<bootstrap::FrameRefusal> refusal;
};

// What a connection's poll round produced.
struct ConnectionNews {
  std::vector<Incoming> frames;
  std::optional<std::string> lost;  // closed or failed, and how
  int connect_errno = 0;            // the connect failed with this errno
};

class TcpBootstrap {
 public:
  TcpBootstrap(const BootstrapConfig& cfg, RootListener* root) : cfg_(cfg), root_listener_(root) {}

  BootstrapResult run(std::span<const std::uint8_t> my_blob);

 private:
  std::string me() const { return fmt::format("bootstrap rank {} of {}", cfg_.rank, cfg_.nranks); }
  Error local_error(const Error& e) const { return Error{me() + ": " + e.what, e.hint}; }

  std::optional<Error> set_up(std::span<const std::uint8_t> my_blob);
  bool finished(Nanos now);
  int poll_timeout_ms(Nanos now) const;
  void poll_round();

  void apply(bootstrap::RankActions& actions);
  void apply(bootstrap::RootActions& actions);
  Connection* link(RankLink l);
  void connect_root(Nanos now);
  void rank_lost(RankLink l, const std::string& why);
  // A local failure (a socket call, the abort flag): this rank aborts and tells the others.
  void abort_here(const std::string& why);

  void accept_check_ins();
  void accept_prev();
  void service_prev_candidate(std::size_t i, short revents);
  // `opener`: the identity whose key checks this connection's frames; nullptr without a key.
  ConnectionNews service(Connection& c, short revents, FrameAuth* opener);
  std::vector<std::uint8_t> seal(FrameAuth* sealer, std::uint32_t to, const bootstrap::Frame& f);
  // Logs a refused frame (the first per connection) and counts it.
  void note_refusal(Connection& c, const bootstrap::FrameRefusal& r);
  void log(const std::string& line) const;
  void flush(Connection& c, ConnectionNews& news);
  void close_if_done(Connection& c);

  BootstrapConfig cfg_;
  RootListener* root_listener_;
  std::optional<RootListener> own_root_listener_;
  SocketAddress root_address_;
  Listener ring_listener_;
  std::optional<BootstrapRank> rank_;
  std::optional<BootstrapRoot> root_;
  std::optional<FrameAuth> rank_auth_, root_auth_;  // set with a key
  // This call's identity for replay detection (frame_auth.hpp): a fresh draw per run_bootstrap(),
  // so ranks that are threads of one process are told apart too.
  std::uint64_t incarnation_ = (std::uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  std::map<CheckInLink, std::uint32_t> check_in_rank_;  // who sealed a check-in link's frames
  std::vector<Connection> prev_candidates_;
  std::uint64_t refused_ = 0;
  Nanos now_{};

  Connection to_root_, to_next_, from_prev_;
  bool prev_accepted_ = false;
  std::optional<Nanos> root_retry_at_;
  std::map<CheckInLink, Connection> check_ins_;
  CheckInLink next_check_in_ = 0;

  std::optional<Nanos> flush_until_;
  std::optional<Error> result_error_;
};

std::optional<Error> TcpBootstrap::set_up(std::span<const std::uint8_t> my_blob) {
  if (!cfg_.key && !cfg_.allow_unauthenticated) {
    return Error{"no job key: the bootstrap authenticates every frame (issue 46)",
                 "give every rank the job's key (RAILCHECK_JOB_KEY_FILE; docs/security.md), or run unauthenticated "
                 "with RAILCHECK_JOB_AUTH=off"};
  }
  if (!cfg_.key) {
    log(me() + ": WARNING: running without a job key (authentication off): any process that can reach the root "
               "or a ring port can join or corrupt this run (docs/security.md)");
  } else {
    rank_auth_.emplace(*cfg_.key, cfg_.run_id, cfg_.rank, incarnation_);
  }
  auto root_at = parse_socket_address(cfg_.root_address);
  if (!root_at) return root_at.error();
  root_address_ = root_at.value();
  if (root_listener_ == nullptr && cfg_.rank == 0 && cfg_.rank0_hosts_root) {
    if (root_address_.port == 0 && cfg_.nranks > 1) {
      return Error{fmt::format("root address {} has port 0, but the other ranks cannot learn the picked port",
                               cfg_.root_address),
                   "open a RootListener before starting the ranks and pass it to rank 0, or use a fixed port"};
    }
    auto l = RootListener::open(cfg_.root_address);
    if (!l) return l.error();
    own_root_listener_.emplace(std::move(l).value());
    root_listener_ = &*own_root_listener_;
  }
  if (root_listener_ != nullptr) {
    // Connect to where the root really listens (port 0 was replaced by the kernel's pick).
    root_address_ = root_listener_->listener().bound;
    // The root gives up a little before the ranks do, so each rank hears which ranks were
    // missing instead of only its own timeout.
    auto root = BootstrapRoot::create(bootstrap::RootConfig{cfg_.run_id, cfg_.nranks, now_ + cfg_.timeout * 9 / 10});
    if (!root) return root.error();
    root_.emplace(std::move(root).value());
    if (cfg_.key) root_auth_.emplace(*cfg_.key, cfg_.run_id, bootstrap::kFromRoot, incarnation_);
  }
  auto ring_host = parse_socket_address(cfg_.ring_host + ":0");
  if (!ring_host) return ring_host.error();
  auto ring = listen_on(ring_host.value());
  if (!ring) return ring.error();
  ring_listener_ = std::move(ring).value();

  auto rank = BootstrapRank::create(bootstrap::RankConfig{cfg_.run_id,
                                                          cfg_.rank,
                                                          cfg_.nranks,
                                                          ring_listener_.bound.to_string(),
                                                          {my_blob.begin(), my_blob.end()},
                                                          now_ + cfg_.timeout});
  if (!rank) return rank.error();
  rank_.emplace(std::move(rank).value());
  return std::nullopt;
}

BootstrapResult TcpBootstrap::run(std::span<const std::uint8_t> my_blob) {
  now_ = clock_now();
  if (auto e = set_up(my_blob)) return local_error(*e);
  bootstrap::RankActions actions;
  rank_->start(now_, actions);
  apply(actions);
  while (!finished(now_)) poll_round();
  if (result_error_) return *result_error_;
  return BootstrapBlobs{rank_->blobs(), refused_};
}

bool TcpBootstrap::finished(Nanos now) {
  if (!rank_->finished() || (root_ && !root_->finished())) return false;
  if (!flush_until_) flush_until_ = now + kFlushGrace;
  // Only what can still be written counts: a connection that never opened has nobody to tell.
  const auto flushing = [](const Connection& c) { return c.open() && c.pending(); };
  bool pending = flushing(to_root_) || flushing(to_next_) || flushing(from_prev_);
  for (const auto& [id, c] : check_ins_) pending = pending || flushing(c);
  return !pending || now >= *flush_until_;
}

int TcpBootstrap::poll_timeout_ms(Nanos now) const {
  Nanos wake = rank_->finished() ? now + ms(50) : rank_->deadline();
  if (root_ && !root_->finished()) wake = std::min(wake, root_->deadline());
  if (root_retry_at_) wake = std::min(wake, *root_retry_at_);
  if (flush_until_) wake = std::min(wake, *flush_until_);
  if (cfg_.abort_flag != nullptr) wake = std::min(wake, now + kAbortPollInterval);
  const auto wait = std::chrono::ceil<std::chrono::milliseconds>(wake - now).count();
  return static_cast<int>(std::clamp<std::int64_t>(wait, 0, 1000));
}

Connection* TcpBootstrap::link(RankLink l) {
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

void TcpBootstrap::abort_here(const std::string& why) {
  bootstrap::RankActions actions;
  rank_->abort(why, now_, actions);
  apply(actions);
}

void TcpBootstrap::apply(bootstrap::RankActions& actions) {
  for (auto& action : actions) {
    if (auto* s = std::get_if<bootstrap::RankSend>(&action)) {
      Connection* c = link(s->link);
      const std::uint32_t to = s->link == RankLink::Root   ? bootstrap::kFromRoot
                               : s->link == RankLink::Next ? (cfg_.rank + 1) % cfg_.nranks
                                                           : (cfg_.rank + cfg_.nranks - 1) % cfg_.nranks;
      if (s->link == RankLink::Root && !c->open() && !root_retry_at_ && c->out.empty()) {
        c->out = seal(rank_auth_ ? &*rank_auth_ : nullptr, to, s->frame);
        connect_root(now_);
        continue;
      }
      const auto bytes = seal(rank_auth_ ? &*rank_auth_ : nullptr, to, s->frame);
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
      Connection* c = link(cl->link);
      c->close_when_flushed = true;
      close_if_done(*c);
    } else if (auto* f = std::get_if<bootstrap::RankFinished>(&action)) {
      result_error_ = f->error;
    }
  }
}

void TcpBootstrap::apply(bootstrap::RootActions& actions) {
  for (auto& action : actions) {
    if (auto* s = std::get_if<bootstrap::RootSend>(&action)) {
      auto it = check_ins_.find(s->link);
      if (it == check_ins_.end()) continue;  // already gone: the root's news cannot reach it
      // The root answers only links whose rank it has authenticated (with a key, every other
      // frame was refused before the engine saw it).
      const auto rank = check_in_rank_.find(s->link);
      const auto bytes = seal(root_auth_ && rank != check_in_rank_.end() ? &*root_auth_ : nullptr,
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

void TcpBootstrap::close_if_done(Connection& c) {
  if (c.close_when_flushed && !c.pending() && !c.connecting) c.fd.reset();
}

void TcpBootstrap::accept_check_ins() {
  for (;;) {
    auto fd = accept_one(root_listener_->listener());
    if (!fd) {
      abort_here(fd.error().what);
      return;
    }
    if (!fd.value()) return;
    Connection c;
    c.fd = std::move(*fd.value());
    c.peer = fmt::format("check-in connection {} to root {}", next_check_in_, root_address_.to_string());
    c.remote = peer_address(c.fd);
    check_ins_.emplace(next_check_in_++, std::move(c));
  }
}

void TcpBootstrap::accept_prev() {
  for (;;) {
    auto fd = accept_one(ring_listener_);
    if (!fd) {
      abort_here(fd.error().what);
      return;
    }
    if (!fd.value()) return;
    Connection c;
    c.fd = std::move(*fd.value());
    c.remote = peer_address(c.fd);
    c.peer = fmt::format("ring predecessor of rank {} on {}", cfg_.rank, ring_listener_.bound.to_string());
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
  Connection& c = prev_candidates_[i];
  ConnectionNews news = service(c, revents, &*rank_auth_);
  const std::uint32_t prev = (cfg_.rank + cfg_.nranks - 1) % cfg_.nranks;
  for (std::size_t k = 0; k < news.frames.size(); ++k) {
    Incoming& in = news.frames[k];
    if (in.refusal || in.sender != prev) {
      note_refusal(c, in.refusal ? *in.refusal
                                 : bootstrap::FrameRefusal{bootstrap::RefusalReason::Impersonation,
                                                           fmt::format("rank {} is not this rank's ring predecessor "
                                                                       "(rank {})", in.sender, prev),
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

std::vector<std::uint8_t> TcpBootstrap::seal(FrameAuth* sealer, std::uint32_t to, const bootstrap::Frame& f) {
  return sealer != nullptr ? sealer->seal(to, f) : bootstrap::encode_frame(f);
}

void TcpBootstrap::log(const std::string& line) const {
  if (cfg_.log) {
    cfg_.log(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

void TcpBootstrap::note_refusal(Connection& c, const bootstrap::FrameRefusal& r) {
  ++refused_;
  if (c.refused++ != 0) return;
  // Once per connection: a flood of forgeries must not become a flood of log lines. The detail
  // names key ids and counters, never key material.
  log(fmt::format("{}: refused a bootstrap frame from {} ({}): {}: {}; dropped, the run goes on{}", me(),
                  c.remote.empty() ? "unknown peer" : c.remote, c.peer, bootstrap::name(r.reason), r.detail,
                  " (further refusals on this connection are counted, not logged)"));
}

void TcpBootstrap::flush(Connection& c, ConnectionNews& news) {
  while (c.pending()) {
    auto r = send_some(c.fd, std::span(c.out).subspan(c.out_done), c.peer);
    if (!r) {
      news.lost = r.error().what;
      return;
    }
    if (r->would_block) return;
    c.out_done += r->done;
  }
  c.out.clear();
  c.out_done = 0;
}

ConnectionNews TcpBootstrap::service(Connection& c, short revents, FrameAuth* opener) {
  ConnectionNews news;
  if (c.connecting) {
    if ((revents & (POLLOUT | POLLERR | POLLHUP)) == 0) return news;
    c.connecting = false;
    if (const int err = connect_errno(c.fd); err != 0) {
      news.connect_errno = err;
      return news;
    }
  }
  if (revents & (POLLIN | POLLHUP | POLLERR)) {
    std::uint8_t chunk[kReadChunk];
    for (;;) {
      auto r = recv_some(c.fd, chunk, c.peer);
      if (!r) {
        news.lost = r.error().what;
        break;
      }
      c.in.insert(c.in.end(), chunk, chunk + r->done);
      if (r->eof) news.lost = "connection closed by " + c.peer;
      if (r->eof || r->would_block) break;
    }
    // Frames that arrived before a close still count: decode them first.
    std::size_t used = 0;
    for (;;) {
      const auto rest = std::span<const std::uint8_t>(c.in).subspan(used);
      if (opener != nullptr) {
        auto o = opener->open(rest);
        if (!o) {
          news.lost = fmt::format("bad frame from {}: {}", c.peer, o.error().message());
          break;
        }
        if (!o.value()) break;
        news.frames.push_back(Incoming{std::move(o.value()->frame), o.value()->sender, std::move(o.value()->refusal)});
        used += o.value()->consumed;
        continue;
      }
      auto d = bootstrap::decode_frame(rest);
      if (!d) {
        news.lost = fmt::format("bad frame from {}: {}", c.peer, d.error().message());
        break;
      }
      if (!d.value()) break;
      news.frames.push_back(Incoming{std::move(d.value()->frame), 0, std::nullopt});
      used += d.value()->consumed;
    }
    c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(used));
  }
  if (!news.lost && c.open()) flush(c, news);
  return news;
}

void TcpBootstrap::poll_round() {
  // Index of each pollfd: -3 root listener, -2 ring listener, -1/-4/-5 rank links, >=0 check-ins.
  enum : long { kRootListen = -3, kRingListen = -2, kRoot = -1, kNext = -4, kPrev = -5, kPrevCandidate = -100 };
  std::vector<pollfd> fds;
  std::vector<long> who;
  const auto add = [&](const Connection& c, long id) {
    if (!c.open()) return;
    short events = POLLIN;
    if (c.connecting || c.pending()) events |= POLLOUT;
    fds.push_back(pollfd{c.fd.get(), events, 0});
    who.push_back(id);
  };
  if (root_ && !root_->finished()) {
    fds.push_back(pollfd{root_listener_->listener().fd.get(), POLLIN, 0});
    who.push_back(kRootListen);
  }
  if (!prev_accepted_ && !rank_->finished()) {
    fds.push_back(pollfd{ring_listener_.fd.get(), POLLIN, 0});
    who.push_back(kRingListen);
  }
  for (std::size_t i = 0; i < prev_candidates_.size(); ++i) add(prev_candidates_[i], kPrevCandidate - static_cast<long>(i));
  add(to_root_, kRoot);
  add(to_next_, kNext);
  add(from_prev_, kPrev);
  for (const auto& [id, c] : check_ins_) add(c, static_cast<long>(id));

  const int n = ::poll(fds.data(), fds.size(), poll_timeout_ms(now_));
  now_ = clock_now();
  if (n < 0 && errno != EINTR) {
    abort_here(socket_error("poll", me(), errno).what);
    return;
  }
  for (std::size_t i = 0; n > 0 && i < fds.size(); ++i) {
    const short rev = fds[i].revents;
    if (rev == 0) continue;
    const long id = who[i];
    if (id == kRootListen) {
      accept_check_ins();
    } else if (id == kRingListen) {
      accept_prev();
    } else if (id <= kPrevCandidate) {
      const auto k = static_cast<std::size_t>(kPrevCandidate - id);
      if (k < prev_candidates_.size() && prev_candidates_[k].open()) service_prev_candidate(k, rev);
    } else if (id >= 0) {
      auto it = check_ins_.find(static_cast<CheckInLink>(id));
      if (it == check_ins_.end() || !it->second.open()) continue;
      Connection& c = it->second;
      ConnectionNews news = service(c, rev, root_auth_ ? &*root_auth_ : nullptr);
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
          check_in_rank_.emplace(it->first, in.sender);
        }
        root_->on_frame(it->first, *in.frame, now_, actions);
      }
      if (news.lost) {
        it->second.fd.reset();
        root_->on_link_lost(it->first, *news.lost, now_, actions);
      }
      apply(actions);
      close_if_done(it->second);
    } else {
      const RankLink l = id == kRoot ? RankLink::Root : id == kNext ? RankLink::Next : RankLink::Prev;
      Connection& c = *link(l);
      if (!c.open()) continue;
      ConnectionNews news = service(c, rev, rank_auth_ ? &*rank_auth_ : nullptr);
      if (news.connect_errno != 0) {
        c.fd.reset();
        // The root may not be listening yet: keep trying until the deadline.
        if (l == RankLink::Root && news.connect_errno == ECONNREFUSED && now_ < rank_->deadline()) {
          root_retry_at_ = now_ + kRootRetry;
        } else {
          rank_lost(l, socket_error("connect", c.peer, news.connect_errno).what);
        }
        continue;
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
  }
  // Drop closed check-in connections and candidates.
  std::erase_if(check_ins_, [](const auto& kv) { return !kv.second.open(); });
  std::erase_if(prev_candidates_, [](const Connection& c) { return !c.open(); });

  if (cfg_.abort_flag != nullptr && cfg_.abort_flag->load() && !rank_->finished()) {
    abort_here("the abort flag was set");
  }
  if (root_retry_at_ && now_ >= *root_retry_at_ && !rank_->finished()) connect_root(now_);
  if (root_) {
    bootstrap::RootActions actions;
    root_->on_time(now_, actions);
    apply(actions);
  }
  bootstrap::RankActions actions;
  rank_->on_time(now_, actions);
  apply(actions);
}

}  // namespace

BootstrapResult run_bootstrap(const BootstrapConfig& cfg, std::span<const std::uint8_t> my_blob, RootListener* root) {
  TcpBootstrap driver(cfg, root);
  return driver.run(my_blob);
}

}  // namespace railcheck::hw

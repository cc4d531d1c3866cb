// run_bootstrap() (tcp_bootstrap.hpp): the driver's set-up, its poll(2) loop and deadlines, and
// refusal logging. The rank's links are in tcp_bootstrap_rank.cpp, the root's check-ins in
// tcp_bootstrap_root.cpp, one connection's frame I/O in frame_connection.cpp
// (tcp_bootstrap_driver.hpp has the map). This code only moves bytes and time: which frame goes
// where, when to fail and whom to tell is decided in engine/bootstrap.
#include "backends/hw/bootstrap/tcp_bootstrap.hpp"

#include <fmt/format.h>
#include <poll.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>

#include "backends/hw/bootstrap/tcp_bootstrap_driver.hpp"

namespace railcheck::hw {

using bootstrap::BootstrapRank;
using bootstrap::BootstrapRoot;
using bootstrap::CheckInLink;
using bootstrap::RankLink;

Result<RootListener> RootListener::open(const std::string& address) {
  auto at = parse_socket_address(address);
  if (!at) return at.error();
  auto l = listen_on(at.value());
  if (!l) return Error{"bootstrap root: " + l.error().what, l.error().hint};
  return RootListener(std::move(l).value());
}

namespace {

Nanos clock_now() { return std::chrono::duration_cast<Nanos>(std::chrono::steady_clock::now().time_since_epoch()); }

}  // namespace

std::string TcpBootstrap::me() const { return fmt::format("bootstrap rank {} of {}", cfg_.rank, cfg_.nranks); }

std::optional<Error> TcpBootstrap::set_up(std::span<const std::uint8_t> my_blob) {
  if (!cfg_.key && !cfg_.allow_unauthenticated) {
    return Error{"no job key: the bootstrap authenticates every frame (issue 46)",
                 "give every rank the job's key (RAILCHECK_JOB_KEY_FILE; docs/security.md), or run unauthenticated "
                 "with RAILCHECK_JOB_AUTH=off"};
  }
  if (!cfg_.key) {
    log(me() +
        ": WARNING: running without a job key (authentication off): any process that can reach the root "
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
  const auto flushing = [](const FrameConnection& c) { return c.open() && c.pending(); };
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

void TcpBootstrap::abort_here(const std::string& why) {
  bootstrap::RankActions actions;
  rank_->abort(why, now_, actions);
  apply(actions);
}

std::optional<FrameConnection> TcpBootstrap::accept_connection(const Listener& l, std::string peer) {
  auto fd = accept_one(l);
  if (!fd) {
    abort_here(fd.error().what);
    return std::nullopt;
  }
  if (!fd.value()) return std::nullopt;
  FrameConnection c;
  c.fd = std::move(*fd.value());
  c.remote = peer_address(c.fd);
  c.peer = std::move(peer);
  return c;
}

void TcpBootstrap::log(const std::string& line) const {
  if (cfg_.log) {
    cfg_.log(line);
  } else {
    std::fprintf(stderr, "%s\n", line.c_str());
  }
}

void TcpBootstrap::note_refusal(FrameConnection& c, const bootstrap::FrameRefusal& r) {
  ++refused_;
  if (c.refused++ != 0) return;
  // Once per connection: a flood of forgeries must not become a flood of log lines. The detail
  // names key ids and counters, never key material.
  log(fmt::format("{}: refused a bootstrap frame from {} ({}): {}: {}; dropped, the run goes on{}", me(),
                  c.remote.empty() ? "unknown peer" : c.remote, c.peer, bootstrap::name(r.reason), r.detail,
                  " (further refusals on this connection are counted, not logged)"));
}

void TcpBootstrap::poll_round() {
  // Index of each pollfd: -3 root listener, -2 ring listener, -1/-4/-5 rank links, >=0 check-ins.
  enum : long { kRootListen = -3, kRingListen = -2, kRoot = -1, kNext = -4, kPrev = -5, kPrevCandidate = -100 };
  std::vector<pollfd> fds;
  std::vector<long> who;
  const auto add = [&](const FrameConnection& c, long id) {
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
  for (std::size_t i = 0; i < prev_candidates_.size(); ++i)
    add(prev_candidates_[i], kPrevCandidate - static_cast<long>(i));
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
      service_check_in(static_cast<CheckInLink>(id), rev);
    } else {
      service_rank_link(id == kRoot ? RankLink::Root : id == kNext ? RankLink::Next : RankLink::Prev, rev);
    }
  }
  // Drop closed check-in connections and candidates.
  std::erase_if(check_ins_, [](const auto& kv) { return !kv.second.open(); });
  std::erase_if(prev_candidates_, [](const FrameConnection& c) { return !c.open(); });

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

BootstrapResult run_bootstrap(const BootstrapConfig& cfg, std::span<const std::uint8_t> my_blob, RootListener* root) {
  TcpBootstrap driver(cfg, root);
  return driver.run(my_blob);
}

}  // namespace railcheck::hw

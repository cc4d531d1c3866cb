#pragma once
// run_bootstrap()'s driver (tcp_bootstrap.hpp), internal to backends/hw/bootstrap: the engine's
// BootstrapRank (and, on the process that hosts it, BootstrapRoot) over one poll(2) loop of
// non-blocking TCP sockets. It only moves bytes and time: which frame goes where, when to fail
// and whom to tell is decided in engine/bootstrap. Where each part lives:
//   tcp_bootstrap.cpp       set-up, the poll loop, deadlines, refusal logging;
//   tcp_bootstrap_rank.cpp  this rank's links: to the root, to its ring successor, and from its
//                           ring predecessor (which, with a key, must prove who it is first);
//   tcp_bootstrap_root.cpp  the root's check-in connections;
//   frame_connection.*      one connection's frame I/O.
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "backends/hw/bootstrap/frame_connection.hpp"
#include "backends/hw/bootstrap/tcp_bootstrap.hpp"
#include "engine/bootstrap/bootstrap_rank.hpp"
#include "engine/bootstrap/bootstrap_root.hpp"
#include "engine/bootstrap/frame_auth.hpp"

namespace railcheck::hw {

// How long a rank waits before connecting to the root again when nobody listens there yet.
inline constexpr Nanos kRootRetry = ms(20);
// How long a finished process keeps flushing what it still has to send (the root's last
// answers, an abort) before it closes everything.
inline constexpr Nanos kFlushGrace = sec(1);
// Connections to a ring listener that have not yet proved to be the predecessor (with a key):
// beyond this many, more are closed unread.
inline constexpr std::size_t kMaxPrevCandidates = 16;

class TcpBootstrap {
 public:
  TcpBootstrap(const BootstrapConfig& cfg, RootListener* root) : cfg_(cfg), root_listener_(root) {}

  BootstrapResult run(std::span<const std::uint8_t> my_blob);

 private:
  std::string me() const;
  Error local_error(const Error& e) const { return Error{me() + ": " + e.what, e.hint}; }

  // tcp_bootstrap.cpp
  std::optional<Error> set_up(std::span<const std::uint8_t> my_blob);
  bool finished(Nanos now);
  int poll_timeout_ms(Nanos now) const;
  void poll_round();
  // A local failure (a socket call, the abort flag): this rank aborts and tells the others.
  void abort_here(const std::string& why);
  // The next connection waiting on `l`, named `peer`, its remote address filled in; nothing when
  // none is waiting, or when accept failed (then this rank has aborted, as abort_here).
  std::optional<FrameConnection> accept_connection(const Listener& l, std::string peer);
  // Logs a refused frame (the first per connection) and counts it.
  void note_refusal(FrameConnection& c, const bootstrap::FrameRefusal& r);
  void log(const std::string& line) const;

  // tcp_bootstrap_rank.cpp
  void apply(bootstrap::RankActions& actions);
  FrameConnection* link(bootstrap::RankLink l);
  void connect_root(Nanos now);
  void rank_lost(bootstrap::RankLink l, const std::string& why);
  void accept_prev();
  void service_prev_candidate(std::size_t i, short revents);
  void service_rank_link(bootstrap::RankLink l, short revents);

  // tcp_bootstrap_root.cpp
  void apply(bootstrap::RootActions& actions);
  void accept_check_ins();
  void service_check_in(bootstrap::CheckInLink id, short revents);

  BootstrapConfig cfg_;
  RootListener* root_listener_;
  std::optional<RootListener> own_root_listener_;
  SocketAddress root_address_;
  Listener ring_listener_;
  std::optional<bootstrap::BootstrapRank> rank_;
  std::optional<bootstrap::BootstrapRoot> root_;
  std::optional<bootstrap::FrameAuth> rank_auth_, root_auth_;  // set with a key
  // This call's identity for replay detection (frame_auth.hpp): a fresh draw per run_bootstrap(),
  // so ranks that are threads of one process are told apart too.
  std::uint64_t incarnation_ = (std::uint64_t{std::random_device{}()} << 32) | std::random_device{}();
  std::map<bootstrap::CheckInLink, std::uint32_t> check_in_rank_;  // who sealed a check-in link's frames
  std::vector<FrameConnection> prev_candidates_;
  std::uint64_t refused_ = 0;
  Nanos now_{};

  FrameConnection to_root_, to_next_, from_prev_;
  bool prev_accepted_ = false;
  std::optional<Nanos> root_retry_at_;
  std::map<bootstrap::CheckInLink, FrameConnection> check_ins_;
  bootstrap::CheckInLink next_check_in_ = 0;

  std::optional<Nanos> flush_until_;
  std::optional<Error> result_error_;
};

}  // namespace railcheck::hw

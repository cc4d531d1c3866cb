#pragma once
// An in-memory world for the bootstrap's state machines: one root, any number of processes
// (each a BootstrapRank), and connections that are FIFO queues of encoded frames. Every
// nondeterministic choice (which process starts next, which connection delivers next) comes
// from the seed, so a failing seed replays exactly. Frames go through the codec on the way.
// With use_auth() every frame is sealed by its sender's FrameAuth and opened by its receiver's
// (frame_auth.hpp), refused frames are dropped and counted, and a test can play an attacker
// that injects, replays or alters frames on any connection (inject(), sent()).
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/bootstrap/bootstrap_codec.hpp"
#include "engine/bootstrap/frame_auth.hpp"
#include "engine/bootstrap/bootstrap_rank.hpp"
#include "engine/bootstrap/bootstrap_root.hpp"
#include "engine/core/rng.hpp"

namespace railcheck::bootstrap::testing {

// One direction of a connection: frames in flight, then the sender's close.
struct Pipe {
  std::deque<std::vector<std::uint8_t>> bytes;
  bool closed = false;    // the sender closed; the receiver sees it after the last frame
  bool reported = false;  // the receiver has been told
};

// An endpoint a pipe delivers to.
struct Endpoint {
  enum class Kind { Root, Rank } kind = Kind::Root;
  std::size_t process = 0;  // for Rank
  RankLink link = RankLink::Root;
  CheckInLink check_in = 0;  // for Root
};

struct Channel {
  Endpoint to;
  Pipe pipe;
};

struct ProcessSpec {
  std::uint32_t rank = 0;
  std::uint32_t nranks = 0;
  std::uint64_t run_id = 0x5eed;
  std::vector<std::uint8_t> blob;
  bool starts = true;  // false: the process never runs (a rank that was never launched)
  std::optional<auth::JobKey> key;  // with use_auth(): this process's own key (default: the root's)
};

// A frame one party refused, and who refused it.
struct Refused {
  bool by_root = false;
  std::size_t process = 0;
  RefusalReason reason = RefusalReason::BadMac;
};

struct ProcessOutcome {
  bool finished = false;
  std::optional<Error> error;
  std::vector<std::vector<std::uint8_t>> blobs;
};

class BootstrapWorld {
 public:
  BootstrapWorld(std::uint64_t seed, std::uint32_t root_nranks, std::vector<ProcessSpec> specs,
                 Nanos rank_timeout = sec(10), Nanos root_timeout = sec(5))
      : rng_(seed), specs_(std::move(specs)) {
    auto root = BootstrapRoot::create(RootConfig{0x5eed, root_nranks, root_timeout});
    root_.emplace(std::move(root).value());
    for (std::size_t p = 0; p < specs_.size(); ++p) {
      const auto& s = specs_[p];
      auto r = BootstrapRank::create(RankConfig{s.run_id, s.rank, s.nranks, address(p), s.blob, rank_timeout});
      ranks_.push_back(std::move(r).value());
      outcomes_.emplace_back();
      links_.emplace_back();
      if (s.starts) unstarted_.push_back(p);
    }
  }

  // Every process and the root seal and open their frames with a job key: the root's `key`,
  // and each process its ProcessSpec::key or else the same key.
  void use_auth(const auth::JobKey& key) {
    root_auth_.emplace(key, 0x5eed, kFromRoot, 0x100);
    for (std::size_t p = 0; p < specs_.size(); ++p) {
      const auto& s = specs_[p];
      rank_auth_.emplace_back(s.key ? *s.key : key, s.run_id, s.rank, 0x200 + p);  // one incarnation per process
    }
  }

  // The attacker's view: every connection's id, every frame sent so far (channel, bytes), and a
  // way to put bytes on a connection as if its sender had written them.
  std::vector<int> channel_ids() const {
    std::vector<int> ids;
    for (const auto& [id, ch] : channels_) {
      if (!ch.pipe.closed) ids.push_back(id);
    }
    return ids;
  }
  const std::vector<std::pair<int, std::vector<std::uint8_t>>>& sent() const { return sent_; }
  void inject(int channel, std::vector<std::uint8_t> bytes) { channels_.at(channel).pipe.bytes.push_back(std::move(bytes)); }
  // The attacker's own connection to the root (it reads nothing back); returns its channel.
  int connect_to_root() {
    const auto link = static_cast<CheckInLink>(kAttackerLinks + attacker_links_++);
    return open_channel(Endpoint{Endpoint::Kind::Root, 0, RankLink::Root, link}, kRootOwner);
  }
  // Channels into processes only (a rank's root, ring and back links), for in-stream injection.
  std::vector<int> channels_into_ranks() const {
    std::vector<int> ids;
    for (const auto& [id, ch] : channels_) {
      if (!ch.pipe.closed && ch.to.kind == Endpoint::Kind::Rank) ids.push_back(id);
    }
    return ids;
  }
  const std::vector<Refused>& refused() const { return refused_; }

  // Hook run after each step: lets a test abort or crash a process at a chosen moment.
  std::function<void(BootstrapWorld&)> after_step;

  // Runs until nothing can happen; then advances time to the next deadline, until every
  // started process and the root are finished.
  void run() {
    for (int guard = 0; guard < 1'000'000; ++guard) {
      if (step()) {
        if (after_step) after_step(*this);
        continue;
      }
      if (everyone_finished()) return;
      timed_out_ = true;
      now_ = std::max(now_, next_deadline());
      RootActions ra;
      root_->on_time(now_, ra);
      apply_root(ra);
      for (std::size_t p = 0; p < ranks_.size(); ++p) {
        if (!started(p) || crashed_.count(p)) continue;
        RankActions a;
        ranks_[p].on_time(now_, a);
        apply_rank(p, a);
      }
    }
  }

  void abort(std::size_t p, const std::string& why) {
    RankActions a;
    ranks_[p].abort(why, now_, a);
    apply_rank(p, a);
  }
  // The process dies: every connection it holds closes, it never acts again.
  void crash(std::size_t p) {
    crashed_.insert(p);
    close_all(p);
  }

  const BootstrapRank& rank(std::size_t p) const { return ranks_[p]; }
  const ProcessOutcome& outcome(std::size_t p) const { return outcomes_[p]; }
  const BootstrapRoot& root() const { return *root_; }
  const std::optional<Error>& root_error() const { return root_error_; }
  // True when some machine had to wait for its deadline.
  bool timed_out() const { return timed_out_; }
  std::size_t processes() const { return ranks_.size(); }

 private:
  static std::string address(std::size_t p) { return fmt::format("proc{}:ring", p); }
  bool started(std::size_t p) const { return started_.count(p) != 0; }

  bool everyone_finished() const {
    if (!root_->finished()) return false;
    for (std::size_t p = 0; p < ranks_.size(); ++p) {
      if (started(p) && !crashed_.count(p) && !ranks_[p].finished()) return false;
    }
    return true;
  }
  Nanos next_deadline() const {
    Nanos d = root_->finished() ? Nanos::max() : root_->deadline();
    for (std::size_t p = 0; p < ranks_.size(); ++p) {
      if (started(p) && !crashed_.count(p) && !ranks_[p].finished()) d = std::min(d, ranks_[p].deadline());
    }
    return d == Nanos::max() ? now_ : d;
  }

  // One random thing happens: a process starts, or one connection delivers its next frame or
  // its close. Returns false when nothing can happen.
  bool step() {
    std::vector<int> ready;  // -1 - k: start unstarted_[k]; otherwise a channel id
    for (std::size_t k = 0; k < unstarted_.size(); ++k) ready.push_back(-1 - static_cast<int>(k));
    for (const auto& [id, ch] : channels_) {
      if (!ch.pipe.bytes.empty() || (ch.pipe.closed && !ch.pipe.reported)) ready.push_back(id);
    }
    if (ready.empty()) return false;
    now_ += us(1);
    const int pick = ready[rng_.below(ready.size())];
    if (pick < 0) {
      const std::size_t k = static_cast<std::size_t>(-1 - pick);
      const std::size_t p = unstarted_[k];
      unstarted_.erase(unstarted_.begin() + static_cast<std::ptrdiff_t>(k));
      started_.insert(p);
      RankActions a;
      ranks_[p].start(now_, a);
      apply_rank(p, a);
      return true;
    }
    deliver(pick);
    return true;
  }

  void deliver(int id) {
    Channel& ch = channels_[id];
    if (ch.pipe.bytes.empty()) {
      ch.pipe.reported = true;
      lost(ch.to, "connection closed by peer");
      return;
    }
    const auto bytes = std::move(ch.pipe.bytes.front());
    ch.pipe.bytes.pop_front();
    const bool to_root = ch.to.kind == Endpoint::Kind::Root;
    std::optional<Frame> opened;
    if (root_auth_) {
      if (!to_root && crashed_.count(ch.to.process)) return;
      FrameAuth& me = to_root ? *root_auth_ : rank_auth_[ch.to.process];
      auto o = me.open(bytes);
      REQUIRE(o.ok());
      REQUIRE(o.value().has_value());
      REQUIRE(o.value()->consumed == bytes.size());
      if (o.value()->refusal) {
        const FrameRefusal& r = *o.value()->refusal;
        const bool join_refused = !to_root && ch.to.link == RankLink::Root && r.unauthenticated &&
                                  is_join_refusal(*r.unauthenticated) &&
                                  ranks_[ch.to.process].state() == RankState::CheckingIn;
        if (!join_refused) refused_.push_back(Refused{to_root, ch.to.process, r.reason});
        // The drivers' rule (tcp_bootstrap.cpp): the root answers a refused join; a rank takes
        // only that answer, on its root link while checking in.
        if (to_root && !authenticated_links_.count(ch.to.check_in)) {
          if (auto back = root_links_.find(ch.to.check_in); back != root_links_.end()) {
            if (auto answer = join_refusal(r)) push(back->second, encode_frame(*answer));
            channels_[back->second].pipe.closed = true;
          }
          ch.pipe.bytes.clear();  // the root closed the connection: the rest is never read
          ch.pipe.closed = true;
          return;
        }
        if (join_refused) {
          opened = *r.unauthenticated;
        } else {
          return;
        }
      } else {
        opened = std::move(o.value()->frame);
        if (to_root) authenticated_links_.insert(ch.to.check_in);
      }
    } else {
      auto decoded = decode_frame(bytes);
      REQUIRE(decoded.ok());
      REQUIRE(decoded.value().has_value());
      opened = std::move(decoded.value()->frame);
    }
    const Frame& f = *opened;
    if (to_root) {
      RootActions a;
      root_->on_frame(ch.to.check_in, f, now_, a);
      apply_root(a);
    } else if (!crashed_.count(ch.to.process)) {
      RankActions a;
      ranks_[ch.to.process].on_frame(ch.to.link, f, now_, a);
      apply_rank(ch.to.process, a);
    }
  }

  void lost(const Endpoint& to, const std::string& why) {
    if (to.kind == Endpoint::Kind::Root) {
      RootActions a;
      root_->on_link_lost(to.check_in, why, now_, a);
      apply_root(a);
    } else if (!crashed_.count(to.process)) {
      RankActions a;
      ranks_[to.process].on_link_lost(to.link, why, now_, a);
      apply_rank(to.process, a);
    }
  }

  // A process that exits (finished or dead) closes everything it holds, including
  // connections its peers opened to it that it never read from; a connect to it is refused.
  void close_all(std::size_t p) {
    for (auto& [id, ch] : channels_) {
      if (owner_[id] == p) ch.pipe.closed = true;
    }
  }

  int open_channel(Endpoint to, std::size_t owner) {
    const int id = next_channel_++;
    channels_[id] = Channel{to, {}};
    owner_[id] = owner;
    return id;
  }

  // The per-process ends of its connections: which channel carries what it sends on a link.
  struct ProcessLinks {
    std::optional<int> to_root, from_root, to_next, from_prev_reverse;
  };

  void apply_rank(std::size_t p, RankActions& actions) {
    for (auto& action : actions) {
      if (crashed_.count(p)) return;
      auto& l = links_[p];
      if (auto* s = std::get_if<RankSend>(&action)) {
        std::optional<int>* via = nullptr;
        if (s->link == RankLink::Root) {
          if (!l.to_root) {  // connect to the root: one channel each way
            const auto link = static_cast<CheckInLink>(p);
            l.to_root = open_channel(Endpoint{Endpoint::Kind::Root, 0, RankLink::Root, link}, p);
            l.from_root = open_channel(Endpoint{Endpoint::Kind::Rank, p, RankLink::Root, 0}, kRootOwner);
            root_links_[link] = *l.from_root;
          }
          via = &l.to_root;
        } else if (s->link == RankLink::Next) {
          via = &l.to_next;
        } else {
          via = &l.from_prev_reverse;
        }
        if (*via && !channels_[**via].pipe.closed) {
          const auto& spec = specs_[p];
          const std::uint32_t to = s->link == RankLink::Root   ? kFromRoot
                                   : s->link == RankLink::Next ? (spec.rank + 1) % spec.nranks
                                                               : (spec.rank + spec.nranks - 1) % spec.nranks;
          push(**via, root_auth_ ? rank_auth_[p].seal(to, s->frame) : encode_frame(s->frame));
        }
      } else if (auto* c = std::get_if<ConnectNext>(&action)) {
        const std::size_t q = std::stoul(c->address.substr(4));  // "proc<q>:ring"
        l.to_next = open_channel(Endpoint{Endpoint::Kind::Rank, q, RankLink::Prev, 0}, p);
        // The successor's sends on its Prev link travel back on this connection.
        const int back = open_channel(Endpoint{Endpoint::Kind::Rank, p, RankLink::Next, 0}, q);
        if (!links_[q].from_prev_reverse) links_[q].from_prev_reverse = back;
        if (crashed_.count(q) || ranks_[q].finished()) {
          channels_[*l.to_next].pipe.closed = true;  // the listener is gone: refused
          channels_[back].pipe.closed = true;
        }
      } else if (auto* cl = std::get_if<RankClose>(&action)) {
        const std::optional<int> chans[] = {cl->link == RankLink::Root   ? l.to_root
                                            : cl->link == RankLink::Next ? l.to_next
                                                                         : l.from_prev_reverse};
        for (const auto& ch : chans) {
          if (ch) channels_[*ch].pipe.closed = true;
        }
      } else if (auto* f = std::get_if<RankFinished>(&action)) {
        outcomes_[p].finished = true;
        outcomes_[p].error = f->error;
        if (!f->error) outcomes_[p].blobs = ranks_[p].blobs();
        close_all(p);  // the process exits, as run_bootstrap() returns
      }
    }
  }

  void apply_root(RootActions& actions) {
    for (auto& action : actions) {
      if (auto* s = std::get_if<RootSend>(&action)) {
        const int id = root_links_.at(s->link);
        if (channels_[id].pipe.closed) continue;
        // Check-in link k is process k's (apply_rank numbers them so).
        const bool sealed = root_auth_ && s->frame.run_id == 0x5eed;
        push(id, sealed ? root_auth_->seal(specs_[s->link].rank, s->frame) : encode_frame(s->frame));
      } else if (auto* c = std::get_if<RootClose>(&action)) {
        channels_[root_links_.at(c->link)].pipe.closed = true;
      } else if (auto* f = std::get_if<RootFinished>(&action)) {
        root_error_ = f->error;
      }
    }
  }

  static constexpr std::size_t kRootOwner = ~std::size_t{0};

  void push(int channel, std::vector<std::uint8_t> bytes) {
    sent_.emplace_back(channel, bytes);
    channels_[channel].pipe.bytes.push_back(std::move(bytes));
  }

  static constexpr CheckInLink kAttackerLinks = 1U << 20;
  std::uint32_t attacker_links_ = 0;
  std::optional<FrameAuth> root_auth_;
  std::vector<FrameAuth> rank_auth_;
  std::set<CheckInLink> authenticated_links_;
  std::vector<std::pair<int, std::vector<std::uint8_t>>> sent_;
  std::vector<Refused> refused_;

  SeededRng rng_;
  Nanos now_{0};
  std::vector<ProcessSpec> specs_;
  std::optional<BootstrapRoot> root_;
  std::optional<Error> root_error_;
  std::vector<BootstrapRank> ranks_;
  std::vector<ProcessOutcome> outcomes_;
  std::vector<ProcessLinks> links_;
  std::vector<std::size_t> unstarted_;
  std::set<std::size_t> started_;
  std::set<std::size_t> crashed_;
  std::map<int, Channel> channels_;
  std::map<int, std::size_t> owner_;
  std::map<CheckInLink, int> root_links_;
  int next_channel_ = 0;
  bool timed_out_ = false;
};

}  // namespace railcheck::bootstrap::testing

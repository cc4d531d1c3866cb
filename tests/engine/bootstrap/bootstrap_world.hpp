#pragma once
// An in-memory world for the bootstrap's state machines: one root, any number of processes
// (each a BootstrapRank), and connections that are FIFO queues of encoded frames. Every
// nondeterministic choice (which process starts next, which connection delivers next) comes
// from the seed, so a failing seed replays exactly. Frames go through the codec on the way.
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
    auto decoded = decode_frame(bytes);
    REQUIRE(decoded.ok());
    REQUIRE(decoded.value().has_value());
    const Frame& f = decoded.value()->frame;
    if (ch.to.kind == Endpoint::Kind::Root) {
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
        if (*via && !channels_[**via].pipe.closed) channels_[**via].pipe.bytes.push_back(encode_frame(s->frame));
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
        auto& pipe = channels_[root_links_.at(s->link)].pipe;
        if (!pipe.closed) pipe.bytes.push_back(encode_frame(s->frame));
      } else if (auto* c = std::get_if<RootClose>(&action)) {
        channels_[root_links_.at(c->link)].pipe.closed = true;
      } else if (auto* f = std::get_if<RootFinished>(&action)) {
        root_error_ = f->error;
      }
    }
  }

  static constexpr std::size_t kRootOwner = ~std::size_t{0};

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

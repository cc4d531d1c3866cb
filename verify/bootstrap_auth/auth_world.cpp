// The authenticated bootstrap with an attacker, as a checker world (auth_world.hpp).
#include "verify/bootstrap_auth/auth_world.hpp"

#include <fmt/format.h>

#include "engine/bootstrap/bootstrap_codec.hpp"
#include "engine/core/engine_assert.hpp"
#include "engine/core/state_hash.hpp"

namespace railcheck::bootstrap {

namespace {

constexpr std::uint64_t kRun = 0x46;
constexpr std::uint64_t kOtherRun = 0x47;
constexpr Nanos kNever = sec(1'000'000);  // no deadline passes: a stuck run is an end state
constexpr CheckInLink kAttackerLink = 1000;

const auth::JobKey& job_key() {
  static const auth::JobKey k = auth::JobKey::from_bytes(std::vector<std::uint8_t>(32, 0x46)).value();
  return k;
}
const auth::JobKey& other_key() {
  static const auth::JobKey k = auth::JobKey::from_bytes(std::vector<std::uint8_t>(32, 0x99)).value();
  return k;
}

std::uint64_t hash_bytes(const std::vector<std::uint8_t>& b) {
  StateHasher h;
  h.add(static_cast<std::uint64_t>(b.size()));
  for (std::uint8_t x : b) h.add(static_cast<std::uint64_t>(x));
  return h.value();
}

}  // namespace

std::string to_string(const AuthStep& s) {
  const std::string where = s.channel < 0 ? std::string("its own connection to the root")
                                          : fmt::format("connection {}", s.channel);
  switch (s.kind) {
    case AuthStep::Kind::Deliver: return fmt::format("deliver the next frame (or close) of connection {}", s.channel);
    case AuthStep::Kind::Replay: return fmt::format("attacker replays frame #{} on {}", s.frame, where);
    case AuthStep::Kind::Alter:
      return fmt::format("attacker alters a {} byte of frame #{} on {}", s.alter_tag ? "tag" : "payload", s.frame,
                         where);
    case AuthStep::Kind::Forge: return fmt::format("attacker forges a frame under another key on {}", where);
    case AuthStep::Kind::OtherJob: return fmt::format("attacker sends another job's frame on {}", where);
  }
  return "?";
}

AuthWorld::AuthWorld(const AuthWorldConfig& cfg) : cfg_(cfg), attacks_left_(cfg.attacks) {
  RAILCHECK_ASSERT(cfg.ranks >= 1 && cfg.ranks <= 4, "a small world: 1..4 ranks");
  history_.assign(cfg.ranks + 1, 0);
  root_.emplace(BootstrapRoot::create(RootConfig{kRun, cfg.ranks, kNever}).value());
  if (cfg.authenticated) root_auth_.emplace(job_key(), kRun, kFromRoot, 0x100);
  for (std::uint32_t r = 0; r < cfg.ranks; ++r) {
    blobs_.push_back(std::vector<std::uint8_t>(4, static_cast<std::uint8_t>(0x10 + r)));
    ranks_.push_back(BootstrapRank::create(RankConfig{kRun, r, cfg.ranks, fmt::format("r{}", r), blobs_[r], kNever}).value());
    rank_auth_.emplace_back();
    if (cfg.authenticated) rank_auth_.back().emplace(job_key(), kRun, r, 0x200 + r);
  }
  for (std::uint32_t r = 0; r < cfg.ranks; ++r) {
    RankActions a;
    ranks_[r].start(Nanos{0}, a);
    apply_rank(r, a);
  }
}

int AuthWorld::open_channel(bool to_root, std::uint32_t process, RankLink link) {
  const int id = next_channel_++;
  Channel c;
  c.to_root = to_root;
  c.process = process;
  c.link = link;
  channels_.emplace(id, std::move(c));
  return id;
}

void AuthWorld::push(int channel, std::vector<std::uint8_t> bytes, bool from_attacker) {
  Channel& c = channels_.at(channel);
  if (c.closed) return;
  if (!from_attacker) seen_.emplace_back(channel, bytes);
  c.queue.push_back(Entry{std::move(bytes), from_attacker});
}

std::vector<std::uint8_t> AuthWorld::seal_or_encode(std::optional<FrameAuth>& auth, std::uint32_t to, const Frame& f) {
  return auth ? auth->seal(to, f) : encode_frame(f);
}

void AuthWorld::record(std::uint32_t process, std::uint64_t what) {
  StateHasher h;
  h.add(history_[process]);
  h.add(what);
  history_[process] = h.value();
}

bool AuthWorld::receiver_finished(const Channel& c) const {
  return c.to_root ? root_->finished() : ranks_[c.process].finished();
}

std::vector<AuthStep> AuthWorld::choices() const {
  std::vector<AuthStep> out;
  for (const auto& [id, c] : channels_) {
    // A finished process reads nothing more (its engine ignores every input): what is still in
    // flight to it cannot change anything, so it is no branch (and no part of the fingerprint).
    if (receiver_finished(c)) continue;
    if (!c.queue.empty() || (c.closed && !c.reported)) out.push_back(AuthStep{AuthStep::Kind::Deliver, id});
  }
  if (attacks_left_ == 0 || out.empty()) return out;  // the attacker acts while the run is live
  for (std::uint32_t i = 0; i < seen_.size(); ++i) {
    const int ch = seen_[i].first;
    if (channels_.at(ch).closed) continue;
    out.push_back(AuthStep{AuthStep::Kind::Replay, ch, i});
    out.push_back(AuthStep{AuthStep::Kind::Alter, ch, i, true});
    out.push_back(AuthStep{AuthStep::Kind::Alter, ch, i, false});
  }
  std::vector<int> targets = {-1};
  for (const auto& [id, c] : channels_) {
    if (!c.closed && !c.to_root) targets.push_back(id);
  }
  for (int t : targets) {
    out.push_back(AuthStep{AuthStep::Kind::Forge, t});
    out.push_back(AuthStep{AuthStep::Kind::OtherJob, t});
  }
  return out;
}

void AuthWorld::apply(const AuthStep& s) {
  if (s.kind == AuthStep::Kind::Deliver) {
    deliver(s.channel);
    return;
  }
  --attacks_left_;
  int target = s.channel;
  if (target < 0) target = open_channel(true, kAttackerLink, RankLink::Root);  // nobody reads its answers
  const Channel& c = channels_.at(target);
  // Who the forged frame claims to be, and what it says: what would hurt the receiver most if
  // it were believed (a wrong blob, a wrong successor, a stranger's check-in).
  const std::uint32_t n = cfg_.ranks;
  std::uint32_t sender = 0;
  Message m;
  if (c.to_root) {
    sender = n - 1;
    m = CheckIn{n - 1, n, 4, "evil"};
  } else if (c.link == RankLink::Prev) {
    sender = (c.process + n - 1) % n;
    m = RingBlock{0, sender, {0xee, 0xee, 0xee, 0xee}};
  } else if (c.link == RankLink::Root) {
    sender = kFromRoot;
    m = RingNeighbour{(c.process + 1) % n, n, "evil"};
  } else {
    sender = (c.process + 1) % n;
    m = RingDone{sender};
  }
  const std::uint32_t to = c.to_root ? kFromRoot : c.process;
  std::vector<std::uint8_t> bytes;
  switch (s.kind) {
    case AuthStep::Kind::Replay: bytes = seen_[s.frame].second; break;
    case AuthStep::Kind::Alter: {
      bytes = seen_[s.frame].second;
      const std::size_t payload_len = bytes.size() - frame_wire::kHeaderSize -
                                      (cfg_.authenticated ? auth_wire::kTrailerSize : 0);
      const std::size_t at = s.alter_tag && cfg_.authenticated ? bytes.size() - 1
                             : payload_len > 0                 ? frame_wire::kHeaderSize
                                                               : frame_wire::kRunIdOffset;
      bytes[at] ^= 0x01;
      break;
    }
    case AuthStep::Kind::Forge: {
      if (cfg_.authenticated) {
        FrameAuth forger(other_key(), kRun, sender, 0x300);
        bytes = forger.seal(to, Frame{kRun, m});
      } else {
        bytes = encode_frame(Frame{kRun, m});
      }
      break;
    }
    case AuthStep::Kind::OtherJob: {
      if (cfg_.authenticated) {
        FrameAuth other(job_key(), kOtherRun, sender, 0x400);
        bytes = other.seal(to, Frame{kOtherRun, m});
      } else {
        bytes = encode_frame(Frame{kOtherRun, m});
      }
      break;
    }
    case AuthStep::Kind::Deliver: break;
  }
  push(target, std::move(bytes), true);
}

void AuthWorld::deliver(int id) {
  Channel& c = channels_.at(id);
  const bool to_root = c.to_root;
  const std::uint32_t p = c.process;
  const RankLink link = c.link;
  if (c.queue.empty()) {
    c.reported = true;
    record(to_root ? cfg_.ranks : p, 0xC105ED0000ULL + static_cast<std::uint64_t>(id));
    if (to_root) {
      RootActions a;
      root_->on_link_lost(p, "closed", Nanos{0}, a);
      apply_root(a);
    } else {
      RankActions a;
      ranks_[p].on_link_lost(link, "closed", Nanos{0}, a);
      apply_rank(p, a);
    }
    return;
  }
  const Entry e = std::move(c.queue.front());
  c.queue.pop_front();
  std::optional<Frame> frame;
  if (cfg_.authenticated) {
    FrameAuth& me = to_root ? *root_auth_ : *rank_auth_[p];
    auto o = me.open(e.bytes);
    if (!o || !o.value()) {
      ++refused_;  // not modelled to happen (framing is never damaged); counted, not taken
      return;
    }
    if (o.value()->refusal) {
      const FrameRefusal& r = *o.value()->refusal;
      const bool join_refused = !to_root && link == RankLink::Root && r.unauthenticated &&
                                is_join_refusal(*r.unauthenticated) && ranks_[p].state() == RankState::CheckingIn;
      if (!join_refused) {
        ++refused_;
        if (to_root && !authenticated_links_.count(p)) {  // the driver's rule: answer, then close
          if (auto reply = root_reply_.find(p); reply != root_reply_.end()) {
            if (auto answer = join_refusal(r)) push(reply->second, encode_frame(*answer), false);
            channels_.at(reply->second).closed = true;
          }
          c.queue.clear();
          c.closed = true;
        }
        return;
      }
      frame = *r.unauthenticated;
    } else {
      frame = std::move(o.value()->frame);
      if (to_root) authenticated_links_.insert(p);
    }
  } else {
    auto d = decode_frame(e.bytes);
    if (!d || !d.value()) {
      ++refused_;
      return;
    }
    frame = std::move(d.value()->frame);
  }
  if (e.from_attacker) ++taken_;
  record(to_root ? cfg_.ranks : p, hash_bytes(e.bytes) ^ static_cast<std::uint64_t>(id));
  if (to_root) {
    RootActions a;
    root_->on_frame(p, *frame, Nanos{0}, a);
    apply_root(a);
  } else {
    RankActions a;
    ranks_[p].on_frame(link, *frame, Nanos{0}, a);
    apply_rank(p, a);
  }
}

void AuthWorld::apply_rank(std::uint32_t r, RankActions& actions) {
  const std::uint32_t n = cfg_.ranks;
  for (auto& action : actions) {
    if (auto* s = std::get_if<RankSend>(&action)) {
      int ch = -1;
      std::uint32_t to = kFromRoot;
      if (s->link == RankLink::Root) {
        if (!to_root_.count(r)) {
          to_root_[r] = open_channel(true, r, RankLink::Root);
          from_root_[r] = open_channel(false, r, RankLink::Root);
          root_reply_[r] = from_root_[r];
        }
        ch = to_root_[r];
      } else if (s->link == RankLink::Next) {
        if (!to_next_.count(r)) continue;
        ch = to_next_[r];
        to = (r + 1) % n;
      } else {
        if (!back_to_prev_.count(r)) continue;
        ch = back_to_prev_[r];
        to = (r + n - 1) % n;
      }
      push(ch, seal_or_encode(rank_auth_[r], to, s->frame), false);
    } else if (auto* cn = std::get_if<ConnectNext>(&action)) {
      if (cn->address.size() < 2 || cn->address[0] != 'r') {  // "evil": nobody listens there
        RankActions a;
        ranks_[r].on_link_lost(RankLink::Next, "connect refused", Nanos{0}, a);
        apply_rank(r, a);
        continue;
      }
      const auto q = static_cast<std::uint32_t>(std::stoul(cn->address.substr(1)));
      to_next_[r] = open_channel(false, q, RankLink::Prev);
      back_to_prev_[q] = open_channel(false, r, RankLink::Next);
    } else if (auto* cl = std::get_if<RankClose>(&action)) {
      const std::map<std::uint32_t, int>& m = cl->link == RankLink::Root   ? to_root_
                                              : cl->link == RankLink::Next ? to_next_
                                                                           : back_to_prev_;
      if (auto it = m.find(r); it != m.end()) channels_.at(it->second).closed = true;
    } else if (std::holds_alternative<RankFinished>(action)) {
      for (const auto* m : {&to_root_, &to_next_, &back_to_prev_}) {
        if (auto it = m->find(r); it != m->end()) channels_.at(it->second).closed = true;
      }
    }
  }
}

void AuthWorld::apply_root(RootActions& actions) {
  for (auto& action : actions) {
    if (auto* s = std::get_if<RootSend>(&action)) {
      auto it = root_reply_.find(s->link);
      if (it == root_reply_.end()) continue;  // the attacker's own link: it reads nothing
      const bool sealed = root_auth_ && s->frame.run_id == kRun;
      push(it->second, sealed ? root_auth_->seal(s->link, s->frame) : encode_frame(s->frame), false);
    } else if (auto* c = std::get_if<RootClose>(&action)) {
      if (auto it = root_reply_.find(c->link); it != root_reply_.end()) channels_.at(it->second).closed = true;
    }
  }
}

std::uint64_t AuthWorld::fingerprint() const {
  StateHasher h;
  for (std::uint64_t v : history_) h.add(v);
  for (const auto& [id, c] : channels_) {
    if (receiver_finished(c)) continue;
    h.add(static_cast<std::uint64_t>(id));
    h.add(c.closed);
    h.add(c.reported);
    h.add(static_cast<std::uint64_t>(c.queue.size()));
    for (const auto& e : c.queue) {
      h.add(hash_bytes(e.bytes));
      h.add(e.from_attacker);
    }
  }
  h.add(static_cast<std::uint64_t>(attacks_left_));
  h.add(static_cast<std::uint64_t>(taken_));
  return h.value();
}

std::vector<verify::Invariant<AuthWorld>> auth_world_invariants() {
  using Inv = verify::Invariant<AuthWorld>;
  return {
      Inv{"blobs-correct", "a rank that finished holds every rank's true blob",
          [](const AuthWorld& w, bool) -> std::optional<std::string> {
            for (std::uint32_t r = 0; r < w.ranks(); ++r) {
              if (w.rank(r).state() != RankState::Done) continue;
              for (std::uint32_t o = 0; o < w.ranks(); ++o) {
                if (w.rank(r).blobs()[o] != w.true_blob(o))
                  return fmt::format("rank {} finished with a wrong blob for rank {}", r, o);
              }
            }
            return std::nullopt;
          }},
      Inv{"no-attacker-frame-taken", "no frame the attacker injected, replayed or altered is ever taken",
          [](const AuthWorld& w, bool) -> std::optional<std::string> {
            if (w.attacker_frames_taken() == 0) return std::nullopt;
            return fmt::format("{} attacker frame(s) taken", w.attacker_frames_taken());
          }},
      Inv{"run-completes", "at an end state the root and every rank have finished, and every rank is Done",
          [](const AuthWorld& w, bool at_end) -> std::optional<std::string> {
            if (!at_end) return std::nullopt;
            if (!w.root().finished()) return std::string("the root never finished");
            for (std::uint32_t r = 0; r < w.ranks(); ++r) {
              if (w.rank(r).state() != RankState::Done)
                return fmt::format("rank {} ended {}, not Done", r, name(w.rank(r).state()));
            }
            return std::nullopt;
          }},
  };
}

}  // namespace railcheck::bootstrap

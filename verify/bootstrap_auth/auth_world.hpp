#pragma once
// The authenticated bootstrap with an attacker, for verify/explorer.hpp (issue 46). A root and
// `ranks` ranks run engine/bootstrap over connections that are FIFO queues of sealed frames
// (frame_auth.hpp); every choice is a branch:
//   deliver  the next frame (or the close) of one connection;
//   attack   while the attacker has budget left, one of
//              replay   a copy of a frame it saw, behind the original on the same connection;
//              alter    a copy of a frame it saw with one tag byte or one payload byte flipped,
//                       on the same connection;
//              forge    a frame of its own under another key, into any connection to a rank or
//                       on a connection of its own to the root;
//              other    a frame of another job that reuses the key (another run id), likewise.
// What is not modelled, because the threat model does not protect it (docs/security.md): a
// replay raced ahead of its original on a connection of the attacker's own (the copy is taken
// and the join times out: a denial of service), and damage to a frame's framing (the stream is
// closed, as a cut connection). With `authenticated` false the same world runs wire v1 (no key),
// where the attacker's forgeries are plain frames: the checker must then find a violation.
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "engine/bootstrap/bootstrap_rank.hpp"
#include "engine/bootstrap/bootstrap_root.hpp"
#include "engine/bootstrap/frame_auth.hpp"
#include "verify/invariant.hpp"

namespace railcheck::bootstrap {

struct AuthWorldConfig {
  std::uint32_t ranks = 2;        // 1..4
  std::uint32_t attacks = 1;      // the attacker's budget of injected frames
  bool authenticated = true;      // false: wire v1, no key (the checker must find the attack)
};

struct AuthStep {
  enum class Kind : std::uint8_t { Deliver, Replay, Alter, Forge, OtherJob };
  Kind kind = Kind::Deliver;
  int channel = 0;            // Deliver, and the target of every attack (-1: the attacker's own link to the root)
  std::uint32_t frame = 0;    // Replay/Alter: which frame the attacker saw (index into what was sent)
  bool alter_tag = false;     // Alter: a tag byte, else a payload byte
  bool operator==(const AuthStep&) const = default;
};
std::string to_string(const AuthStep& s);

class AuthWorld {
 public:
  using ChoiceType = AuthStep;
  explicit AuthWorld(const AuthWorldConfig& cfg);

  std::vector<AuthStep> choices() const;
  void apply(const AuthStep& s);
  std::uint64_t fingerprint() const;

  // What the invariants read.
  std::uint32_t ranks() const { return cfg_.ranks; }
  const BootstrapRank& rank(std::uint32_t r) const { return ranks_[r]; }
  const BootstrapRoot& root() const { return *root_; }
  const std::vector<std::uint8_t>& true_blob(std::uint32_t r) const { return blobs_[r]; }
  std::uint32_t attacker_frames_taken() const { return taken_; }
  std::uint32_t refused() const { return refused_; }

 private:
  struct Entry {
    std::vector<std::uint8_t> bytes;
    bool from_attacker = false;
  };
  struct Channel {
    bool to_root = false;
    std::uint32_t process = 0;  // the rank it delivers to (to_root: the sender's check-in link)
    RankLink link = RankLink::Root;
    std::deque<Entry> queue;
    bool closed = false;
    bool reported = false;
  };

  bool receiver_finished(const Channel& c) const;
  int open_channel(bool to_root, std::uint32_t process, RankLink link);
  void push(int channel, std::vector<std::uint8_t> bytes, bool from_attacker);
  std::vector<std::uint8_t> seal_or_encode(std::optional<FrameAuth>& auth, std::uint32_t to, const Frame& f);
  void deliver(int channel);
  void apply_rank(std::uint32_t r, RankActions& actions);
  void apply_root(RootActions& actions);
  void record(std::uint32_t process, std::uint64_t what);

  AuthWorldConfig cfg_;
  std::vector<BootstrapRank> ranks_;
  std::optional<BootstrapRoot> root_;
  std::vector<std::optional<FrameAuth>> rank_auth_;
  std::optional<FrameAuth> root_auth_;
  std::vector<std::vector<std::uint8_t>> blobs_;
  std::map<int, Channel> channels_;
  int next_channel_ = 0;
  std::map<std::uint32_t, int> to_root_, from_root_, to_next_, back_to_prev_;  // by rank
  std::map<CheckInLink, int> root_reply_;                                     // check-in link -> channel
  std::set<CheckInLink> authenticated_links_;
  std::vector<std::pair<int, std::vector<std::uint8_t>>> seen_;  // every honest frame sent: channel, bytes
  std::uint32_t attacks_left_ = 0;
  std::uint32_t taken_ = 0;    // frames from the attacker that a process accepted
  std::uint32_t refused_ = 0;
  std::vector<std::uint64_t> history_;  // per process (ranks, then the root): a hash of its inputs
};

// blobs-correct, no-attacker-frame-taken, run-completes.
std::vector<verify::Invariant<AuthWorld>> auth_world_invariants();

}  // namespace railcheck::bootstrap

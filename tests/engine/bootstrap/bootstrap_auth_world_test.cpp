// The bootstrap with a job key (frame_auth.hpp), root and ranks driven together in memory
// (bootstrap_world.hpp): the right key joins; a wrong key fails only its own join; and an
// attacker that injects, replays and alters frames on every connection, or opens its own to the
// root with another job's frames, has each of them refused while the run finishes as if it were
// not there. Each seeded case prints its seed when it fails.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "tests/engine/bootstrap/bootstrap_world.hpp"

namespace railcheck::bootstrap {
namespace {

using Catch::Matchers::Contains;
using testing::BootstrapWorld;
using testing::ProcessSpec;

#ifdef RAILCHECK_SANITIZE
constexpr std::uint64_t kAuthSeeds = 10;
#else
constexpr std::uint64_t kAuthSeeds = 60;
#endif

auth::JobKey key_of(std::uint8_t fill) { return auth::JobKey::from_bytes(std::vector<std::uint8_t>(32, fill)).value(); }

std::vector<ProcessSpec> ranks(std::uint32_t n, std::uint64_t seed) {
  std::vector<ProcessSpec> specs;
  for (std::uint32_t r = 0; r < n; ++r) {
    specs.push_back(ProcessSpec{r, n, 0x5eed, std::vector<std::uint8_t>(16, static_cast<std::uint8_t>(seed * 31 + r))});
  }
  return specs;
}

// Processes 0..n-1 (the real ranks) finished with every blob, before any deadline.
void require_run_undisturbed(const BootstrapWorld& w, std::uint32_t n) {
  CHECK_FALSE(w.timed_out());
  CHECK_FALSE(w.root_error());
  for (std::size_t p = 0; p < n; ++p) {
    CAPTURE(p);
    REQUIRE(w.outcome(p).finished);
    if (w.outcome(p).error) FAIL(w.outcome(p).error->message());
    REQUIRE(w.outcome(p).blobs.size() == n);
    for (std::uint32_t r = 0; r < n; ++r) CHECK(w.outcome(p).blobs[r] == w.outcome(r).blobs[r]);
  }
}

TEST_CASE("with the right key every rank joins and nothing is refused", "[bootstrap][auth]") {
  for (std::uint32_t n : {1U, 2U, 3U, 8U}) {
    for (std::uint64_t seed = 1; seed <= kAuthSeeds; ++seed) {
      CAPTURE(n, seed);
      BootstrapWorld w(seed, n, ranks(n, seed));
      w.use_auth(key_of(1));
      w.run();
      require_run_undisturbed(w, n);
      CHECK(w.refused().empty());
    }
  }
}

TEST_CASE("a process with a wrong key fails its own join, and the run goes on", "[bootstrap][auth]") {
  for (std::uint64_t seed = 1; seed <= kAuthSeeds; ++seed) {
    CAPTURE(seed);
    auto specs = ranks(4, seed);
    ProcessSpec stranger{2, 4, 0x5eed, std::vector<std::uint8_t>(16, 0xee)};
    stranger.key = key_of(2);
    specs.push_back(stranger);
    BootstrapWorld w(seed, 4, specs);
    w.use_auth(key_of(1));
    w.run();
    // The stranger may check in before or after the real rank 2: either way it is refused.
    require_run_undisturbed(w, 4);
    REQUIRE(w.outcome(4).error);
    CHECK_THAT(w.outcome(4).error->message(), Contains("not authenticated") && Contains("wrong key"));
    REQUIRE(w.refused().size() == 1);
    CHECK(w.refused()[0].by_root);
    CHECK(w.refused()[0].reason == RefusalReason::WrongKey);
  }
}

TEST_CASE("a process of another job that reuses the key is refused as another run", "[bootstrap][auth]") {
  auto specs = ranks(3, 7);
  specs.push_back(ProcessSpec{1, 3, 0xbad, std::vector<std::uint8_t>(16, 1)});
  BootstrapWorld w(7, 3, specs);
  w.use_auth(key_of(1));
  w.run();
  require_run_undisturbed(w, 3);
  REQUIRE(w.outcome(3).error);
  CHECK_THAT(w.outcome(3).error->message(), Contains("wrong run id") && Contains("other run"));
}

// What the attacker does to one frame it has seen.
enum class Attack { Replay, Alter, Forge, OtherJob };

// After every step, with probability 1/3, the attacker takes a frame sent so far and puts a
// replayed, altered or forged copy of it (or another job's frame) on a connection into a rank, or
// on a connection of its own to the root. A replay goes behind its original on the same
// connection: one raced ahead of its original on another connection would be taken in its place
// and the original refused, which makes the join time out (a denial of service, like cutting the
// connection, docs/security.md) but changes nothing any rank receives. Every choice is from `seed`.
void attack(BootstrapWorld& w, SeededRng& rng, std::uint64_t& injected) {
  if (w.sent().empty() || rng.below(3) != 0) return;
  const auto& [channel, original] = w.sent()[rng.below(w.sent().size())];
  auto bytes = original;
  if (bytes.size() < frame_wire::kHeaderSize + auth_wire::kTrailerSize) return;  // a v1 join refusal
  static const auth::JobKey other_key = key_of(9);
  static const auth::JobKey same_key = key_of(1);
  switch (static_cast<Attack>(rng.below(4))) {
    case Attack::Replay: {
      const auto open = w.channel_ids();
      if (std::find(open.begin(), open.end(), channel) == open.end()) return;
      w.inject(channel, std::move(bytes));
      ++injected;
      return;
    }
    case Attack::Alter: {
      // Any byte but the framing fields (those break the stream, like cutting it: out of scope).
      std::size_t i = 0;
      do {
        i = rng.below(bytes.size());
      } while (i < frame_wire::kRunIdOffset || (i >= frame_wire::kLengthOffset && i < frame_wire::kHeaderSize));
      bytes[i] ^= static_cast<std::uint8_t>(1 + rng.below(255));
      break;
    }
    case Attack::Forge: {
      FrameAuth forger(other_key, 0x5eed, static_cast<std::uint32_t>(rng.below(4)), 0xa77ac);
      bytes = forger.seal(static_cast<std::uint32_t>(rng.below(4)), Frame{0x5eed, RingDone{forger.me()}});
      break;
    }
    case Attack::OtherJob: {
      FrameAuth other(same_key, 0xbad, 0, 0xa77ac);
      bytes = other.seal(1, Frame{0xbad, RingHello{0, 1}});
      break;
    }
  }
  const auto into = w.channels_into_ranks();
  const bool own_connection = into.empty() || rng.below(4) == 0;
  w.inject(own_connection ? w.connect_to_root() : into[rng.below(into.size())], std::move(bytes));
  ++injected;
}

TEST_CASE("injected, replayed, altered and other-job frames are each refused, the run undisturbed",
          "[bootstrap][auth]") {
  for (std::uint32_t n : {2U, 3U, 5U}) {
    for (std::uint64_t seed = 1; seed <= kAuthSeeds; ++seed) {
      CAPTURE(n, seed);
      BootstrapWorld w(seed, n, ranks(n, seed));
      w.use_auth(key_of(1));
      SeededRng rng(seed ^ 0xa77ac);
      std::uint64_t injected = 0;
      w.after_step = [&](BootstrapWorld& world) { attack(world, rng, injected); };
      w.run();
      require_run_undisturbed(w, n);
      // Every injected frame that was read was refused (some land after their receiver left).
      CHECK(w.refused().size() <= injected);
      if (n >= 3) CHECK(!w.refused().empty());
    }
  }
}

}  // namespace
}  // namespace railcheck::bootstrap

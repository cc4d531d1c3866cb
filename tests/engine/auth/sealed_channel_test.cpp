// One authenticated connection's control messages (engine/auth/sealed_channel.hpp) and the
// anti-replay window under it (replay_window.hpp).
#include <catch2/catch.hpp>
#include <cstdint>
#include <set>
#include <vector>

#include "engine/auth/replay_window.hpp"
#include "engine/auth/sealed_channel.hpp"
#include "engine/core/rng.hpp"

namespace railcheck::auth {
namespace {

JobKey key_of(std::uint8_t fill) { return JobKey::from_bytes(std::vector<std::uint8_t>(32, fill)).value(); }

const std::vector<std::uint8_t> kHandle = {0x52, 0x43, 0x48, 0x41, 1, 2, 3};

TEST_CASE("a sealed control message opens at the peer, once, and nowhere else", "[auth]") {
  SealedChannel connector(key_of(1), "railcheck control v1", kHandle, 0, 1);
  SealedChannel listener(key_of(1), "railcheck control v1", kHandle, 1, 0);
  std::vector<std::uint8_t> msg = {1, 2, 3, 4, 5};
  connector.seal(msg);
  REQUIRE(msg.size() == 5 + kSealTrailerBytes);
  const Unsealed u = listener.open(msg);
  REQUIRE(u.ok);
  CHECK(std::vector<std::uint8_t>(u.message.begin(), u.message.end()) == std::vector<std::uint8_t>{1, 2, 3, 4, 5});
  const Unsealed again = listener.open(msg);
  CHECK_FALSE(again.ok);
  CHECK(again.refusal == SealRefusal::Replayed);
  // Reflected back at its sender: the receiver is in the MAC.
  CHECK(connector.open(msg).refusal == SealRefusal::BadMac);
  // Carried to another connection (another handle) or another job's key.
  SealedChannel other_conn(key_of(1), "railcheck control v1", {9, 9, 9}, 1, 0);
  CHECK(other_conn.open(msg).refusal == SealRefusal::BadMac);
  SealedChannel other_job(key_of(2), "railcheck control v1", kHandle, 1, 0);
  CHECK(other_job.open(msg).refusal == SealRefusal::WrongKey);
  CHECK(listener.open(std::vector<std::uint8_t>(10, 0)).refusal == SealRefusal::TooShort);
}

TEST_CASE("every altered byte of a sealed control message is refused", "[auth]") {
  SealedChannel connector(key_of(1), "railcheck control v1", kHandle, 0, 1);
  std::vector<std::uint8_t> msg(24, 0x33);
  connector.seal(msg);
  for (std::size_t i = 0; i < msg.size(); ++i) {
    CAPTURE(i);
    SealedChannel listener(key_of(1), "railcheck control v1", kHandle, 1, 0);
    auto altered = msg;
    altered[i] ^= 0x80;
    const Unsealed u = listener.open(altered);
    REQUIRE_FALSE(u.ok);
    const bool key_id_byte = i >= 24 && i < 28;
    CHECK(u.refusal == (key_id_byte ? SealRefusal::WrongKey : SealRefusal::BadMac));
  }
}

TEST_CASE("the replay window takes each number once, in any order within its width", "[auth]") {
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    CAPTURE(seed);
    SeededRng rng(seed);
    ReplayWindow w;
    std::set<std::uint64_t> taken;
    for (int i = 0; i < 2000; ++i) {
      // Mostly new numbers, some reordered a little, some old ones again.
      const std::uint64_t top = w.highest();
      const std::uint64_t seq = rng.below(3) == 0 && top > 0 ? top - rng.below(std::min<std::uint64_t>(top, 100))
                                                              : top + 1 + rng.below(3);
      const bool fresh = taken.count(seq) == 0 && seq != 0 && seq + ReplayWindow::kWidth > top;
      CHECK(w.take(seq) == fresh);
      if (fresh) taken.insert(seq);
    }
  }
}

}  // namespace
}  // namespace railcheck::auth

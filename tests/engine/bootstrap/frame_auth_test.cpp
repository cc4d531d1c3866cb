// Authenticated bootstrap frames (engine/bootstrap/frame_auth.hpp): what verifies and what is
// refused, byte by byte.
#include <catch2/catch.hpp>
#include <cstdint>
#include <vector>

#include "engine/bootstrap/bootstrap_codec.hpp"
#include "engine/bootstrap/frame_auth.hpp"

namespace railcheck::bootstrap {
namespace {

constexpr std::uint64_t kRun = 0x5eed;

auth::JobKey job_key_of(std::uint8_t fill) { return auth::JobKey::from_bytes(std::vector<std::uint8_t>(32, fill)).value(); }

Frame block_frame() { return Frame{kRun, RingBlock{1, 2, {9, 8, 7, 6, 5}}}; }

// Opens `bytes` as `receiver`; the whole input must be one frame.
OpenedFrame open_all(FrameAuth& receiver, const std::vector<std::uint8_t>& bytes) {
  auto o = receiver.open(bytes);
  REQUIRE(o.ok());
  REQUIRE(o.value().has_value());
  REQUIRE(o.value()->consumed == bytes.size());
  return *o.value();
}

RefusalReason refused_as(FrameAuth& receiver, const std::vector<std::uint8_t>& bytes) {
  const OpenedFrame o = open_all(receiver, bytes);
  REQUIRE_FALSE(o.frame);
  REQUIRE(o.refusal);
  return o.refusal->reason;
}

TEST_CASE("a sealed frame opens at its receiver with its sender, and only once", "[bootstrap][auth]") {
  FrameAuth rank3(job_key_of(1), kRun, 3, 0x1c);
  FrameAuth rank4(job_key_of(1), kRun, 4, 0x1c);
  const auto bytes = rank3.seal(4, block_frame());
  CHECK(bytes.size() == encode_frame(block_frame()).size() + auth_wire::kTrailerSize);
  const OpenedFrame o = open_all(rank4, bytes);
  REQUIRE(o.frame);
  CHECK(*o.frame == block_frame());
  CHECK(o.sender == 3);
  CHECK(refused_as(rank4, bytes) == RefusalReason::Replayed);
  // The next frame from the same sender is fresh.
  const OpenedFrame next = open_all(rank4, rank3.seal(4, block_frame()));
  CHECK(next.frame);
}

TEST_CASE("every altered byte of a sealed frame is refused, none is believed", "[bootstrap][auth]") {
  FrameAuth rank3(job_key_of(1), kRun, 3, 0x1c);
  const auto bytes = rank3.seal(4, block_frame());
  const std::size_t frame_len = bytes.size() - auth_wire::kTrailerSize;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    // The header's framing fields (magic, version, type, reserved, length) are judged as
    // framing: a stream that loses them is unusable, which is an Error, not a refusal.
    if (i < frame_wire::kRunIdOffset || (i >= frame_wire::kLengthOffset && i < frame_wire::kHeaderSize)) continue;
    CAPTURE(i);
    auto altered = bytes;
    altered[i] ^= 0x01;
    FrameAuth rank4(job_key_of(1), kRun, 4, 0x1c);
    const RefusalReason why = refused_as(rank4, altered);
    const bool key_id_byte = i >= frame_len + auth_wire::kKeyIdOffset && i < frame_len + auth_wire::kIncarnationOffset;
    CHECK(why == (key_id_byte ? RefusalReason::WrongKey : RefusalReason::BadMac));
  }
}

TEST_CASE("a frame for another receiver, of another key, or of another run is refused", "[bootstrap][auth]") {
  FrameAuth rank3(job_key_of(1), kRun, 3, 0x1c);
  FrameAuth rank5(job_key_of(1), kRun, 5, 0x1c);
  CHECK(refused_as(rank5, rank3.seal(4, block_frame())) == RefusalReason::BadMac);  // redirected

  FrameAuth stranger(job_key_of(2), kRun, 3, 0x1c);
  FrameAuth rank4(job_key_of(1), kRun, 4, 0x1c);
  const OpenedFrame wrong_key = open_all(rank4, stranger.seal(4, block_frame()));
  REQUIRE(wrong_key.refusal);
  CHECK(wrong_key.refusal->reason == RefusalReason::WrongKey);
  CHECK(wrong_key.refusal->detail.find("rank 3") != std::string::npos);

  FrameAuth other_job(job_key_of(1), 0xbad, 3, 0x1c);
  CHECK(refused_as(rank4, other_job.seal(4, Frame{0xbad, RingDone{3}})) == RefusalReason::OtherRun);
}

TEST_CASE("an unauthenticated v1 frame is refused but kept, and only the root's refusal is a join refusal",
          "[bootstrap][auth]") {
  FrameAuth rank4(job_key_of(1), kRun, 4, 0x1c);
  const OpenedFrame o = open_all(rank4, encode_frame(block_frame()));
  REQUIRE(o.refusal);
  CHECK(o.refusal->reason == RefusalReason::Unauthenticated);
  REQUIRE(o.refusal->unauthenticated);
  CHECK_FALSE(is_join_refusal(*o.refusal->unauthenticated));

  FrameRefusal wrong_key{RefusalReason::WrongKey, "keyed with key id 01020304, ours is 05060708", 0x77, {}};
  const auto answer = join_refusal(wrong_key);
  REQUIRE(answer);
  CHECK(answer->run_id == 0x77);  // in the refused rank's run id, so that it reads it
  CHECK(is_join_refusal(*answer));
  CHECK(std::get<Abort>(answer->message).reason == AbortReason::NotAuthenticated);
  // An altered or replayed frame says nothing about its sender's key: no answer to it.
  CHECK_FALSE(join_refusal(FrameRefusal{RefusalReason::BadMac, "x", kRun, {}}));
  CHECK_FALSE(join_refusal(FrameRefusal{RefusalReason::Replayed, "x", kRun, {}}));
  CHECK_FALSE(is_join_refusal(Frame{kRun, Abort{2, AbortReason::NotAuthenticated, "from a rank"}}));
}

TEST_CASE("a rank with the key that names another rank as the sender is refused", "[bootstrap][auth]") {
  FrameAuth rank3(job_key_of(1), kRun, 3, 0x1c);
  FrameAuth root(job_key_of(1), kRun, kFromRoot, 0x1c);
  CHECK(refused_as(root, rank3.seal(kFromRoot, Frame{kRun, CheckIn{2, 8, 5, "10.0.0.2:1"}})) ==
        RefusalReason::Impersonation);
  // An Abort names who aborted, not who forwards it: a forwarded one is fine.
  const OpenedFrame o = open_all(root, rank3.seal(kFromRoot, Frame{kRun, Abort{6, AbortReason::Timeout, "x"}}));
  CHECK(o.frame);
}

TEST_CASE("a partial sealed frame waits for more bytes, and a broken header is an error", "[bootstrap][auth]") {
  FrameAuth rank3(job_key_of(1), kRun, 3, 0x1c);
  FrameAuth rank4(job_key_of(1), kRun, 4, 0x1c);
  auto bytes = rank3.seal(4, block_frame());
  for (std::size_t n : {std::size_t{0}, std::size_t{19}, std::size_t{20}, bytes.size() - 1}) {
    CAPTURE(n);
    auto o = rank4.open(std::span(bytes).first(n));
    REQUIRE(o.ok());
    CHECK_FALSE(o.value().has_value());
  }
  bytes[0] ^= 0xff;
  CHECK_FALSE(rank4.open(bytes).ok());
}

}  // namespace
}  // namespace railcheck::bootstrap

// Authenticated bootstrap frames (wire v2, layout in frame_auth.hpp).
#include "engine/bootstrap/frame_auth.hpp"

#include <fmt/format.h>

#include <array>

#include "engine/auth/little_endian.hpp"

#include "engine/bootstrap/bootstrap_codec.hpp"
#include "engine/core/engine_assert.hpp"

namespace railcheck::bootstrap {

using auth_wire::kIncarnationOffset;
using auth_wire::kKeyIdOffset;
using auth_wire::kSenderOffset;
using auth_wire::kSeqOffset;
using auth_wire::kTagOffset;
using auth_wire::kTrailerSize;

namespace {

using Bytes = std::span<const std::uint8_t>;

using auth::get_le;
using auth::put_le;

std::array<std::uint8_t, 4> le32(std::uint32_t v) {
  std::array<std::uint8_t, 4> b{};
  put_le(b.data(), v, 4);
  return b;
}

constexpr char kDomain[] = "railcheck bootstrap v2";

std::string who(std::uint32_t id) { return id == kFromRoot ? std::string("the root") : fmt::format("rank {}", id); }

// A v2 frame's bytes as the v1 frame they wrap (version byte 1), for the v1 payload decoder.
Result<Frame> decode_wrapped(Bytes frame_bytes) {
  std::vector<std::uint8_t> v1(frame_bytes.begin(), frame_bytes.end());
  v1[frame_wire::kVersionOffset] = frame_wire::kVersion;
  auto d = decode_frame(v1);
  if (!d) return d.error();
  if (!d.value() || d.value()->consumed != v1.size()) {
    return Error{"bootstrap frame: v2 frame's length disagrees with its payload", ""};
  }
  return std::move(d.value()->frame);
}

}  // namespace

const char* name(RefusalReason r) {
  switch (r) {
    case RefusalReason::Unauthenticated: return "unauthenticated (no MAC)";
    case RefusalReason::WrongKey: return "wrong key";
    case RefusalReason::BadMac: return "bad MAC (forged or altered)";
    case RefusalReason::OtherRun: return "other run";
    case RefusalReason::Replayed: return "replayed";
    case RefusalReason::Impersonation: return "sender mismatch";
  }
  return "unknown";
}

FrameAuth::FrameAuth(const auth::JobKey& key, std::uint64_t run_id, std::uint32_t me, std::uint64_t incarnation)
    : mac_(key), run_id_(run_id), me_(me), incarnation_(incarnation) {}

std::vector<std::uint8_t> FrameAuth::seal(std::uint32_t to, const Frame& frame) {
  RAILCHECK_ASSERT(frame.run_id == run_id_, "an identity seals only its own run's frames");
  std::vector<std::uint8_t> out = encode_frame(frame);
  out[frame_wire::kVersionOffset] = auth_wire::kVersion;
  const std::size_t frame_len = out.size();
  out.resize(frame_len + kTrailerSize);
  std::uint8_t* t = out.data() + frame_len;
  put_le(t + kSenderOffset, me_, 4);
  put_le(t + kKeyIdOffset, mac_.key_id(), 4);
  put_le(t + kIncarnationOffset, incarnation_, 8);
  put_le(t + kSeqOffset, next_seq_++, 8);
  const auto tag = mac_.tag({auth::label(kDomain), le32(to), Bytes(out.data(), frame_len), Bytes(t, kTagOffset)});
  std::copy(tag.begin(), tag.end(), t + kTagOffset);
  return out;
}

Result<std::optional<OpenedFrame>> FrameAuth::open(std::span<const std::uint8_t> buffered) {
  using namespace frame_wire;
  if (buffered.size() < kHeaderSize) return std::optional<OpenedFrame>{};
  const std::uint8_t version = buffered[kVersionOffset];
  const auto length = static_cast<std::size_t>(get_le(buffered.data() + kLengthOffset, 4));
  if (version != auth_wire::kVersion) {
    // Not ours to judge beyond framing: the v1 decoder checks magic, type and length, and an
    // intact v1 frame is refused as unauthenticated (kept whole for is_join_refusal).
    auto d = decode_frame(buffered);
    if (!d) return d.error();
    if (!d.value()) return std::optional<OpenedFrame>{};
    OpenedFrame o;
    o.consumed = d.value()->consumed;
    const std::uint64_t run = d.value()->frame.run_id;
    o.refusal = FrameRefusal{RefusalReason::Unauthenticated, "a v1 frame without a MAC", run,
                             std::move(d.value()->frame)};
    return std::optional<OpenedFrame>{std::move(o)};
  }
  // The header's magic, type and bounds, judged before waiting for a bogus length.
  if (get_le(buffered.data() + kMagicOffset, 4) != kMagic || length > kMaxPayload) {
    std::vector<std::uint8_t> v1(buffered.begin(), buffered.begin() + kHeaderSize);
    v1[kVersionOffset] = frame_wire::kVersion;
    auto d = decode_frame(v1);
    return d ? Error{"bootstrap frame: bad v2 header", ""} : d.error();
  }
  const std::size_t frame_len = kHeaderSize + length;
  if (buffered.size() < frame_len + kTrailerSize) return std::optional<OpenedFrame>{};
  const Bytes frame_bytes = buffered.first(frame_len);
  const std::uint8_t* t = buffered.data() + frame_len;
  const auto sender = static_cast<std::uint32_t>(get_le(t + kSenderOffset, 4));
  const auto key_id = static_cast<std::uint32_t>(get_le(t + kKeyIdOffset, 4));
  const std::uint64_t incarnation = get_le(t + kIncarnationOffset, 8);
  const std::uint64_t seq = get_le(t + kSeqOffset, 8);
  const std::uint64_t run_id = get_le(buffered.data() + kRunIdOffset, 8);

  OpenedFrame o;
  o.consumed = frame_len + kTrailerSize;
  const auto refuse = [&](RefusalReason r, std::string detail) {
    o.refusal = FrameRefusal{r, std::move(detail), run_id, std::nullopt};
    return std::optional<OpenedFrame>{std::move(o)};
  };
  if (key_id != mac_.key_id()) {
    return refuse(RefusalReason::WrongKey,
                  fmt::format("frame claiming to be from {} is keyed with key id {:08x}, ours is {:08x}", who(sender),
                              key_id, mac_.key_id()));
  }
  if (!mac_.verify({auth::label(kDomain), le32(me_), frame_bytes, Bytes(t, kTagOffset)},
                   Bytes(t + kTagOffset, auth::kTagBytes))) {
    return refuse(RefusalReason::BadMac, fmt::format("frame claiming to be from {} (seq {}) does not verify",
                                                     who(sender), seq));
  }
  if (run_id != run_id_) {
    return refuse(RefusalReason::OtherRun, fmt::format("{}'s frame belongs to run 0x{:016x}, this is run 0x{:016x}",
                                                       who(sender), run_id, run_id_));
  }
  auto f = decode_wrapped(frame_bytes);
  if (!f) return Error{fmt::format("authentic frame from {}: {}", who(sender), f.error().what), f.error().hint};
  FrameRefusal stale = check_fresh(sender, incarnation, seq, f.value());
  if (!stale.detail.empty()) return refuse(stale.reason, std::move(stale.detail));
  o.sender = sender;
  o.frame = std::move(f).value();
  return std::optional<OpenedFrame>{std::move(o)};
}

FrameRefusal FrameAuth::check_fresh(std::uint32_t sender, std::uint64_t incarnation, std::uint64_t seq,
                                    const Frame& frame) {
  if (auto claimed = claimed_sender(frame.message); claimed && *claimed != sender) {
    return {RefusalReason::Impersonation,
            fmt::format("{} sent a {} that names {} as its sender", who(sender), message_name(frame.message),
                        who(*claimed)),
            frame.run_id, std::nullopt};
  }
  auth::ReplayWindow& w = taken_[{sender, incarnation}];
  if (!w.take(seq)) {
    return {RefusalReason::Replayed,
            fmt::format("{}'s frame seq {} was taken already or is too old (highest taken {})", who(sender), seq,
                        w.highest()),
            frame.run_id, std::nullopt};
  }
  return {};
}

std::optional<std::uint32_t> claimed_sender(const Message& m) {
  if (const auto* c = std::get_if<CheckIn>(&m)) return c->rank;
  if (std::holds_alternative<RingNeighbour>(m)) return kFromRoot;
  if (const auto* h = std::get_if<RingHello>(&m)) return h->from_rank;
  if (const auto* d = std::get_if<RingDone>(&m)) return d->from_rank;
  return std::nullopt;
}

bool is_join_refusal(const Frame& f) {
  const auto* a = std::get_if<Abort>(&f.message);
  return a != nullptr && a->from_rank == kFromRoot &&
         (a->reason == AbortReason::NotAuthenticated || a->reason == AbortReason::WrongRun);
}

std::optional<Frame> join_refusal(const FrameRefusal& refusal) {
  AbortReason reason = AbortReason::NotAuthenticated;
  switch (refusal.reason) {
    case RefusalReason::Unauthenticated:
    case RefusalReason::WrongKey: break;
    case RefusalReason::OtherRun: reason = AbortReason::WrongRun; break;
    case RefusalReason::BadMac:
    case RefusalReason::Replayed:
    case RefusalReason::Impersonation: return std::nullopt;
  }
  return Frame{refusal.run_id, Abort{kFromRoot, reason,
                                     fmt::format("the root refused this check-in ({}): {}", name(refusal.reason),
                                                 refusal.detail)}};
}

}  // namespace railcheck::bootstrap

// Codec for the bootstrap's frames, wire format v1 (layout in bootstrap_codec.hpp).
#include "engine/bootstrap/bootstrap_codec.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/core/wire_safe.hpp"

namespace railcheck::bootstrap {

// Nothing process-local may cross to another rank (engine/core/wire_safe.hpp).
static_assert(WireSafe<CheckIn>);
static_assert(WireSafe<RingNeighbour>);
static_assert(WireSafe<RingHello>);
static_assert(WireSafe<RingBlock>);
static_assert(WireSafe<Abort>);
static_assert(WireSafe<RingDone>);

using namespace frame_wire;

namespace {

enum class Type : std::uint8_t {
  CheckIn = 1,
  RingNeighbour = 2,
  RingHello = 3,
  RingBlock = 4,
  Abort = 5,
  RingDone = 6
};

class Writer {
 public:
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { le(v, 2); }
  void u32(std::uint32_t v) { le(v, 4); }
  void u64(std::uint64_t v) { le(v, 8); }
  void bytes(std::span<const std::uint8_t> b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void text(const std::string& s) {
    u16(static_cast<std::uint16_t>(s.size()));
    out_.insert(out_.end(), s.begin(), s.end());
  }
  std::vector<std::uint8_t>& out() { return out_; }

 private:
  void le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t> out_;
};

// Reads a payload front to back; every read is bounds-checked and the first failure sticks.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> in) : in_(in) {}
  std::uint8_t u8() { return static_cast<std::uint8_t>(le(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(le(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(le(4)); }
  std::uint64_t u64() { return le(8); }
  std::span<const std::uint8_t> bytes(std::size_t n) {
    if (!take(n)) return {};
    return in_.subspan(pos_ - n, n);
  }
  bool short_read() const { return short_; }
  std::size_t left() const { return in_.size() - pos_; }

 private:
  bool take(std::size_t n) {
    if (short_ || in_.size() - pos_ < n) {
      short_ = true;
      return false;
    }
    pos_ += n;
    return true;
  }
  std::uint64_t le(std::size_t n) {
    if (!take(n)) return 0;
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(in_[pos_ - n + i]) << (8 * i);
    return v;
  }
  std::span<const std::uint8_t> in_;
  std::size_t pos_ = 0;
  bool short_ = false;
};

Type type_of(const Message& m) {
  return std::visit(
      [](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, CheckIn>) return Type::CheckIn;
        if constexpr (std::is_same_v<T, RingNeighbour>) return Type::RingNeighbour;
        if constexpr (std::is_same_v<T, RingHello>) return Type::RingHello;
        if constexpr (std::is_same_v<T, RingBlock>) return Type::RingBlock;
        if constexpr (std::is_same_v<T, Abort>) return Type::Abort;
        if constexpr (std::is_same_v<T, RingDone>) return Type::RingDone;
      },
      m);
}

void write_payload(Writer& w, const Message& m) {
  std::visit(
      [&w](const auto& v) {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, CheckIn>) {
          w.u32(v.rank);
          w.u32(v.nranks);
          w.u32(v.blob_size);
          w.text(v.ring_address);
        } else if constexpr (std::is_same_v<T, RingNeighbour>) {
          w.u32(v.next_rank);
          w.u32(v.nranks);
          w.text(v.next_address);
        } else if constexpr (std::is_same_v<T, RingHello>) {
          w.u32(v.from_rank);
          w.u32(v.to_rank);
        } else if constexpr (std::is_same_v<T, RingBlock>) {
          w.u32(v.step);
          w.u32(v.origin_rank);
          w.u32(static_cast<std::uint32_t>(v.blob.size()));
          w.bytes(v.blob);
        } else if constexpr (std::is_same_v<T, Abort>) {
          w.u32(v.from_rank);
          w.u8(static_cast<std::uint8_t>(v.reason));
          w.u8(0);
          w.text(v.text);
        } else if constexpr (std::is_same_v<T, RingDone>) {
          w.u32(v.from_rank);
        }
      },
      m);
}

bool printable(std::span<const std::uint8_t> s) {
  return std::all_of(s.begin(), s.end(), [](std::uint8_t c) { return c >= 0x20 && c <= 0x7e; });
}

Error bad_frame(std::string what) {
  return Error{std::move(what), "the peer is not a railcheck bootstrap of the same build, or the stream was corrupted"};
}

// A length-prefixed printable string of at most `max` bytes.
Result<std::string> read_text(Reader& r, std::size_t max, const char* field) {
  const std::uint16_t len = r.u16();
  if (r.short_read()) return bad_frame(fmt::format("bootstrap frame: payload ends inside {} length", field));
  if (len > max) return bad_frame(fmt::format("bootstrap frame: {} is {} bytes, at most {} allowed", field, len, max));
  auto b = r.bytes(len);
  if (r.short_read()) return bad_frame(fmt::format("bootstrap frame: payload ends inside {} ({} bytes)", field, len));
  if (!printable(b)) return bad_frame(fmt::format("bootstrap frame: {} holds non-printable bytes", field));
  return std::string(b.begin(), b.end());
}

Result<Message> read_payload(Type type, std::span<const std::uint8_t> payload) {
  Reader r(payload);
  Message m;
  switch (type) {
    case Type::CheckIn: {
      CheckIn c;
      c.rank = r.u32();
      c.nranks = r.u32();
      c.blob_size = r.u32();
      auto addr = read_text(r, kMaxAddressSize, "ring address");
      if (!addr) return addr.error();
      c.ring_address = std::move(addr).value();
      m = std::move(c);
      break;
    }
    case Type::RingNeighbour: {
      RingNeighbour n;
      n.next_rank = r.u32();
      n.nranks = r.u32();
      auto addr = read_text(r, kMaxAddressSize, "neighbour address");
      if (!addr) return addr.error();
      n.next_address = std::move(addr).value();
      m = std::move(n);
      break;
    }
    case Type::RingHello: {
      RingHello h;
      h.from_rank = r.u32();
      h.to_rank = r.u32();
      m = h;
      break;
    }
    case Type::RingBlock: {
      RingBlock b;
      b.step = r.u32();
      b.origin_rank = r.u32();
      const std::uint32_t len = r.u32();
      if (!r.short_read() && len > kMaxBlobSize) {
        return bad_frame(fmt::format("bootstrap frame: ring block of {} bytes, at most {} allowed", len, kMaxBlobSize));
      }
      auto blob = r.bytes(len);
      b.blob.assign(blob.begin(), blob.end());
      m = std::move(b);
      break;
    }
    case Type::Abort: {
      Abort a;
      a.from_rank = r.u32();
      const std::uint8_t reason = r.u8();
      const std::uint8_t reserved = r.u8();
      if (!r.short_read() && (reason == 0 || reason > kMaxAbortReason)) {
        return bad_frame(fmt::format("bootstrap frame: unknown abort reason {}", reason));
      }
      if (!r.short_read() && reserved != 0) {
        return bad_frame(fmt::format("bootstrap frame: abort reserved byte is 0x{:02x}, expected 0", reserved));
      }
      a.reason = static_cast<AbortReason>(reason);
      auto text = read_text(r, kMaxReasonSize, "abort text");
      if (!text) return text.error();
      a.text = std::move(text).value();
      m = std::move(a);
      break;
    }
    case Type::RingDone: {
      m = RingDone{r.u32()};
      break;
    }
  }
  if (r.short_read()) {
    return bad_frame(
        fmt::format("bootstrap frame: {} payload of {} bytes is too short", message_name(m), payload.size()));
  }
  if (r.left() != 0) {
    return bad_frame(fmt::format("bootstrap frame: {} payload has {} trailing bytes", message_name(m), r.left()));
  }
  return m;
}

}  // namespace

std::vector<std::uint8_t> encode_frame(const Frame& f) {
  Writer w;
  w.u32(kMagic);
  w.u8(kVersion);
  w.u8(static_cast<std::uint8_t>(type_of(f.message)));
  w.u16(0);
  w.u64(f.run_id);
  w.u32(0);  // length, patched below
  write_payload(w, f.message);
  auto& out = w.out();
  const auto len = static_cast<std::uint32_t>(out.size() - kHeaderSize);
  for (std::size_t i = 0; i < 4; ++i) out[kLengthOffset + i] = static_cast<std::uint8_t>(len >> (8 * i));
  return std::move(out);
}

Result<std::optional<DecodedFrame>> decode_frame(std::span<const std::uint8_t> buffered) {
  if (buffered.size() < kHeaderSize) return std::optional<DecodedFrame>{};
  Reader h(buffered.first(kHeaderSize));
  const std::uint32_t magic = h.u32();
  const std::uint8_t version = h.u8();
  const std::uint8_t type = h.u8();
  const std::uint16_t reserved = h.u16();
  const std::uint64_t run_id = h.u64();
  const std::uint32_t length = h.u32();
  if (magic != kMagic) {
    return bad_frame(fmt::format("bootstrap frame: magic 0x{:08x}, expected 0x{:08x} \"RCBS\"", magic, kMagic));
  }
  if (version == 2) {
    return Error{"bootstrap frame: version 2 (authenticated, issue 46), but this rank runs without a job key",
                 "give every rank the job's key (RAILCHECK_JOB_KEY_FILE; docs/security.md)"};
  }
  if (version != kVersion) {
    return Error{fmt::format("bootstrap frame: version {}, this build speaks {}", version, kVersion),
                 "run the same railcheck build on every rank"};
  }
  if (type < static_cast<std::uint8_t>(Type::CheckIn) || type > static_cast<std::uint8_t>(Type::RingDone)) {
    return bad_frame(fmt::format("bootstrap frame: unknown message type {}", type));
  }
  if (reserved != 0) return bad_frame(fmt::format("bootstrap frame: reserved field 0x{:04x}, expected 0", reserved));
  if (length > kMaxPayload) {
    return bad_frame(
        fmt::format("bootstrap frame: payload length {} exceeds the largest message ({})", length, kMaxPayload));
  }
  if (buffered.size() - kHeaderSize < length) return std::optional<DecodedFrame>{};
  auto m = read_payload(static_cast<Type>(type), buffered.subspan(kHeaderSize, length));
  if (!m) return m.error();
  return std::optional<DecodedFrame>{DecodedFrame{Frame{run_id, std::move(m).value()}, kHeaderSize + length}};
}

const char* name(AbortReason r) {
  switch (r) {
    case AbortReason::Requested: return "requested";
    case AbortReason::DuplicateRank: return "duplicate rank";
    case AbortReason::RankCountMismatch: return "rank count mismatch";
    case AbortReason::RankOutOfRange: return "rank out of range";
    case AbortReason::BlobSizeMismatch: return "blob size mismatch";
    case AbortReason::WrongRun: return "wrong run id";
    case AbortReason::Timeout: return "timeout";
    case AbortReason::PeerLost: return "peer lost";
    case AbortReason::ProtocolError: return "protocol error";
    case AbortReason::NotAuthenticated: return "not authenticated";
  }
  return "unknown";
}

const char* message_name(const Message& m) {
  static constexpr const char* kNames[] = {"CheckIn", "RingNeighbour", "RingHello", "RingBlock", "Abort", "RingDone"};
  return kNames[m.index()];
}

}  // namespace railcheck::bootstrap

#include "backends/hw/libfabric/control_codec.hpp"

#include <fmt/format.h>

#include <type_traits>

#include "engine/core/wire_safe.hpp"

namespace railcheck::fabric {

static_assert(WireSafe<QpEndpoint>);

namespace {

constexpr std::uint8_t kFlagOutOfBand = 0x01;
constexpr std::size_t kEndpointBytes = 26;

class Writer {
 public:
  void u8(std::uint8_t v) { b_.push_back(v); }
  void u16(std::uint16_t v) { put(v, 2); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void endpoint(const QpEndpoint& e) {
    u32(e.qpn);
    b_.insert(b_.end(), e.gid.begin(), e.gid.end());
    u16(e.lid);
    u32(e.psn);
  }
  std::vector<std::uint8_t>& bytes() { return b_; }

 private:
  void put(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) b_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  std::vector<std::uint8_t> b_;
};

// Every read is bounds-checked; the first short read makes the whole decode fail.
class Reader {
 public:
  explicit Reader(std::span<const std::uint8_t> b) : b_(b) {}
  bool ok() const { return ok_; }
  bool at_end() const { return at_ == b_.size(); }
  std::size_t left() const { return b_.size() - at_; }
  std::uint8_t u8() { return static_cast<std::uint8_t>(get(1)); }
  std::uint16_t u16() { return static_cast<std::uint16_t>(get(2)); }
  std::uint32_t u32() { return static_cast<std::uint32_t>(get(4)); }
  std::uint64_t u64() { return get(8); }
  QpEndpoint endpoint() {
    QpEndpoint e;
    e.qpn = u32();
    for (auto& g : e.gid) g = u8();
    e.lid = u16();
    e.psn = u32();
    return e;
  }

 private:
  std::uint64_t get(std::size_t n) {
    if (!ok_ || left() < n) {
      ok_ = false;
      return 0;
    }
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(b_[at_ + i]) << (8 * i);
    at_ += n;
    return v;
  }
  std::span<const std::uint8_t> b_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

void write_body(Writer& w, const ControlMessage& m) {
  std::visit(
      [&w](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, ConnectRequest>) {
          w.endpoint(x.primary);
        } else if constexpr (std::is_same_v<T, StandbyParams>) {
          w.u8(x.reply ? 1 : 0);
          w.u32(static_cast<std::uint32_t>(x.endpoints.size()));
          for (const auto& e : x.endpoints) w.endpoint(e);
        } else if constexpr (std::is_same_v<T, FailoverNotice> || std::is_same_v<T, ResyncRequest>) {
          w.u32(x.epoch);
          w.u32(x.failed.value);
          w.u32(x.next.value);
        } else if constexpr (std::is_same_v<T, ResyncAck>) {
          w.u32(x.epoch);
          w.u64(x.delivered);
        } else if constexpr (std::is_same_v<T, ProbeRequest>) {
          w.u32(x.epoch);
          w.u32(static_cast<std::uint32_t>(x.seqs.size()));
          for (auto s : x.seqs) w.u64(s);
        } else if constexpr (std::is_same_v<T, ProbeReply>) {
          w.u32(x.epoch);
          w.u32(static_cast<std::uint32_t>(x.delivered.size()));
          for (auto s : x.delivered) w.u64(s);
        } else if constexpr (std::is_same_v<T, Ping> || std::is_same_v<T, Pong>) {
          w.u64(x.nonce);
        } else if constexpr (std::is_same_v<T, PathRevive>) {
          w.u32(x.path.value);
          w.u8(x.ack ? 1 : 0);
        }
        // ConnectAck has no body.
      },
      m);
}

// A count must be backed by bytes before anything is allocated for it.
bool count_fits(Reader& r, std::uint32_t n, std::size_t each) { return r.ok() && r.left() / each >= n; }

Result<ControlMessage> read_body(std::uint8_t type, Reader& r) {
  switch (type) {
    case 0: return ControlMessage{ConnectRequest{r.endpoint()}};
    case 1: return ControlMessage{ConnectAck{}};
    case 2: {
      StandbyParams p;
      p.reply = r.u8() != 0;
      const std::uint32_t n = r.u32();
      if (!count_fits(r, n, kEndpointBytes)) break;
      for (std::uint32_t i = 0; i < n; ++i) p.endpoints.push_back(r.endpoint());
      return ControlMessage{std::move(p)};
    }
    case 3: {
      FailoverNotice f;
      f.epoch = r.u32();
      f.failed = PathIndex{r.u32()};
      f.next = PathIndex{r.u32()};
      return ControlMessage{f};
    }
    case 4: {
      ResyncRequest f;
      f.epoch = r.u32();
      f.failed = PathIndex{r.u32()};
      f.next = PathIndex{r.u32()};
      return ControlMessage{f};
    }
    case 5: {
      ResyncAck a;
      a.epoch = r.u32();
      a.delivered = r.u64();
      return ControlMessage{a};
    }
    case 6:
    case 7: {
      const std::uint32_t epoch = r.u32();
      const std::uint32_t n = r.u32();
      if (!count_fits(r, n, 8)) break;
      std::vector<std::uint64_t> seqs;
      for (std::uint32_t i = 0; i < n; ++i) seqs.push_back(r.u64());
      if (type == 6) return ControlMessage{ProbeRequest{epoch, std::move(seqs)}};
      return ControlMessage{ProbeReply{epoch, std::move(seqs)}};
    }
    case 8: return ControlMessage{Ping{r.u64()}};
    case 9: return ControlMessage{Pong{r.u64()}};
    case 10: {
      PathRevive p;
      p.path = PathIndex{r.u32()};
      p.ack = r.u8() != 0;
      return ControlMessage{p};
    }
    default: return Error{fmt::format("control message type {} is unknown (v1 knows 0..10 and 128)", type), ""};
  }
  return Error{fmt::format("control message type {}: a count exceeds the bytes that follow", type), ""};
}

}  // namespace

static_assert(std::variant_size_v<ControlMessage> == 11, "a new control message needs a codec entry");

Result<std::vector<std::uint8_t>> encode_control(bool out_of_band, const ControlMessage& m) {
  Writer w;
  w.u8(kControlVersion);
  w.u8(static_cast<std::uint8_t>(m.index()));
  w.u8(out_of_band ? kFlagOutOfBand : 0);
  w.u8(0);
  w.u32(0);  // body length, patched below
  write_body(w, m);
  auto& b = w.bytes();
  if (b.size() > kControlMaxBytes)
    return Error{fmt::format("control message {} encodes to {} bytes; the limit is {}", control_name(m), b.size(),
                             kControlMaxBytes),
                 ""};
  const auto body = static_cast<std::uint32_t>(b.size() - kControlHeaderBytes);
  for (int i = 0; i < 4; ++i) b[4 + i] = static_cast<std::uint8_t>(body >> (8 * i));
  return std::move(b);
}

std::vector<std::uint8_t> encode_delivery_ack(const DeliveryAck& a) {
  Writer w;
  w.u8(kControlVersion);
  w.u8(kDeliveryAckType);
  w.u8(0);
  w.u8(0);
  w.u32(8);
  w.u64(a.next);
  return std::move(w.bytes());
}

Result<DecodedControl> decode_control(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < kControlHeaderBytes)
    return Error{fmt::format("control message of {} bytes is shorter than its {}-byte header", bytes.size(),
                             kControlHeaderBytes),
                 ""};
  Reader r(bytes);
  const std::uint8_t version = r.u8();
  const std::uint8_t type = r.u8();
  const std::uint8_t flags = r.u8();
  const std::uint8_t reserved = r.u8();
  const std::uint32_t body = r.u32();
  if (version != kControlVersion)
    return Error{fmt::format("control message version {}; this build speaks {}", version, kControlVersion), ""};
  if ((flags & ~kFlagOutOfBand) != 0 || reserved != 0)
    return Error{
        fmt::format("control message has reserved bits set (flags 0x{:02x}, reserved 0x{:02x})", flags, reserved), ""};
  if (body != bytes.size() - kControlHeaderBytes)
    return Error{
        fmt::format("control message says {} body bytes, {} arrived", body, bytes.size() - kControlHeaderBytes), ""};
  DecodedControl out;
  out.out_of_band = (flags & kFlagOutOfBand) != 0;
  if (type == kDeliveryAckType) {
    out.delivery_ack = DeliveryAck{r.u64()};
  } else {
    auto m = read_body(type, r);
    if (!m) return m.error();
    out.message = std::move(m).value();
  }
  if (!r.ok()) return Error{fmt::format("control message type {} is truncated", type), ""};
  if (!r.at_end()) return Error{fmt::format("control message type {} has {} trailing bytes", type, r.left()), ""};
  return out;
}

}  // namespace railcheck::fabric

#pragma once
// Control messages (engine/core/control_message.hpp) as bytes, for the tagged messages that
// carry them between two FabricConnections. An explicit codec, never a struct image.
//
// Wire format v1 (integers little-endian, written byte by byte):
//   offset size field
//        0    1 version      1
//        1    1 type         index of the alternative in ControlMessage (0 ConnectRequest ..
//                            10 PathRevive)
//        2    1 flags        bit0 = out of band (ControlChannel::out_of_band); others 0
//        3    1 reserved     0
//        4    4 body length  bytes that follow
//        8    .. body        per type:
//   ConnectRequest  endpoint                       StandbyParams  u8 reply, u32 n, n x endpoint
//   ConnectAck      (empty)                        FailoverNotice u32 epoch, u32 failed, u32 next
//   ResyncRequest   u32 epoch, u32 failed, u32 next
//   ResyncAck       u32 epoch, u64 delivered       ProbeRequest   u32 epoch, u32 n, n x u64
//   ProbeReply      u32 epoch, u32 n, n x u64      Ping / Pong    u64 nonce
//   PathRevive      u32 path, u8 ack
//   DeliveryAck     u64 next (type 128: the backend's own, not an engine message; see below)
//   endpoint = u32 qpn, 16 bytes gid, u16 lid, u32 psn (26 bytes)
// The path a message arrived on is not in the bytes: it is the rail whose endpoint received it.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "engine/core/control_message.hpp"
#include "engine/core/result.hpp"

namespace railcheck::fabric {

constexpr std::uint8_t kControlVersion = 1;
constexpr std::size_t kControlHeaderBytes = 8;
// Receive buffers are this large; a probe of ~8000 sequence numbers still fits.
constexpr std::size_t kControlMaxBytes = 64 * 1024;

// The receiver's backend tells the sender's backend that the engine has every message whose
// sequence number is below `next` (its delivered watermark): the RC ACK that a transport whose
// send completion is local (ofi_rxm over tcp) does not give (rc_completion_order.hpp).
struct DeliveryAck {
  std::uint64_t next = 0;
  bool operator==(const DeliveryAck&) const = default;
};
constexpr std::uint8_t kDeliveryAckType = 128;

// Exactly one of `message` (for the engine) and `delivery_ack` (for the backend) is set.
struct DecodedControl {
  bool out_of_band = false;
  std::optional<ControlMessage> message;
  std::optional<DeliveryAck> delivery_ack;
};

// Errors when the encoding would exceed kControlMaxBytes.
Result<std::vector<std::uint8_t>> encode_control(bool out_of_band, const ControlMessage& m);
std::vector<std::uint8_t> encode_delivery_ack(const DeliveryAck& a);
Result<DecodedControl> decode_control(std::span<const std::uint8_t> bytes);

}  // namespace railcheck::fabric

#pragma once
// The PassSm proxy-setup response, split the way the seed's fix prescribes (seed, end: "划分
// '可共享' 与 '本地' 字段"): psmP2pSendProxySetup memcpy'd its whole p2pShmProxyInfo, CUDA
// stream and events included, into the response; the peer copied it back over its own, and
// its proxy then ran copies on a stream handle from another process and hung. Here the peer
// gets only ProxyShare (the shared-memory descriptor), through an explicit codec; the local
// ProxyResources keep their stream and events, which WireSafe rejects at compile time.
#include <array>
#include <cstdint>
#include <span>

#include "engine/core/result.hpp"
#include "engine/core/wire_safe.hpp"

namespace railcheck::plan {

// Process-local CUDA handles, opaque here.
struct CudaStream {
  std::uintptr_t raw = 0;
};
struct CudaEvent {
  std::uintptr_t raw = 0;
};

}  // namespace railcheck::plan

template <>
struct railcheck::process_local<railcheck::plan::CudaStream> : std::true_type {};
template <>
struct railcheck::process_local<railcheck::plan::CudaEvent> : std::true_type {};

namespace railcheck::plan {

constexpr std::size_t kPsmSteps = 8;  // PSM_STEPS in the seed's fork

// ncclShmIpcDesc_t's shareable content: which segment to attach and how large it is.
struct ShmIpcDesc {
  std::array<char, 32> name{};  // shm segment name, NUL-padded
  std::uint64_t size = 0;
  std::uint32_t creator_rank = 0;
  bool operator==(const ShmIpcDesc&) const = default;
};

// What crosses to the peer: the seed's p2pShmProxyShare.
struct ProxyShare {
  ShmIpcDesc desc;
  bool operator==(const ProxyShare&) const = default;
};
static_assert(WireSafe<ProxyShare>);

// What stays in the process: the seed's p2pShmProxyInfo.
struct ProxyResources {
  CudaStream stream;
  std::array<CudaEvent, kPsmSteps> events{};
  ShmIpcDesc desc;
};
static_assert(!WireSafe<ProxyResources>, "a stream or event handle must never reach the wire");

// Wire format v1, little-endian: [0,4) magic "RCPS", [4] version 1, [5,8) zero, [8,40) name,
// [40,48) size, [48,52) creator rank.
constexpr std::size_t kProxyShareWireSize = 52;

std::array<std::uint8_t, kProxyShareWireSize> encode_proxy_share(const ProxyShare& s);
Result<ProxyShare> decode_proxy_share(std::span<const std::uint8_t> bytes);

// The sender's side of setup: only the shareable part of its resources goes out.
inline ProxyShare share_of(const ProxyResources& r) { return ProxyShare{r.desc}; }

}  // namespace railcheck::plan

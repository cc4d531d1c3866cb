// Codec for the PassSm proxy-setup response (proxy_share.hpp).
#include "engine/plan/proxy_share.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace railcheck::plan {
namespace {

constexpr std::uint32_t kMagic = 0x53504352;  // "RCPS" in wire order
constexpr std::uint8_t kVersion = 1;
constexpr std::size_t kNameOffset = 8;
constexpr std::size_t kSizeOffset = 40;
constexpr std::size_t kRankOffset = 48;

void put(std::span<std::uint8_t> out, std::size_t at, std::uint64_t v, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) out[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint64_t get(std::span<const std::uint8_t> in, std::size_t at, std::size_t width) {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < width; ++i) v |= static_cast<std::uint64_t>(in[at + i]) << (8 * i);
  return v;
}

}  // namespace

std::array<std::uint8_t, kProxyShareWireSize> encode_proxy_share(const ProxyShare& s) {
  std::array<std::uint8_t, kProxyShareWireSize> out{};
  put(out, 0, kMagic, 4);
  out[4] = kVersion;
  std::transform(s.desc.name.begin(), s.desc.name.end(), out.begin() + kNameOffset,
                 [](char c) { return static_cast<std::uint8_t>(c); });
  put(out, kSizeOffset, s.desc.size, 8);
  put(out, kRankOffset, s.desc.creator_rank, 4);
  return out;
}

Result<ProxyShare> decode_proxy_share(std::span<const std::uint8_t> bytes) {
  if (bytes.size() != kProxyShareWireSize)
    return Error{fmt::format("proxy share: {} bytes, expected {}", bytes.size(), kProxyShareWireSize),
                 "the peer sent a different struct: only the shareable fields may cross"};
  if (get(bytes, 0, 4) != kMagic) return Error{fmt::format("proxy share: bad magic {:#010x}", get(bytes, 0, 4)), ""};
  if (bytes[4] != kVersion) return Error{fmt::format("proxy share: version {}, expected {}", bytes[4], kVersion), ""};
  if (bytes[5] != 0 || bytes[6] != 0 || bytes[7] != 0) return Error{"proxy share: reserved bytes are not zero", ""};
  ProxyShare s;
  std::transform(bytes.begin() + kNameOffset, bytes.begin() + kSizeOffset, s.desc.name.begin(),
                 [](std::uint8_t b) { return static_cast<char>(b); });
  s.desc.size = get(bytes, kSizeOffset, 8);
  s.desc.creator_rank = static_cast<std::uint32_t>(get(bytes, kRankOffset, 4));
  return s;
}

}  // namespace railcheck::plan

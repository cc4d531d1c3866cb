#include "backends/hw/cuda/zerobuf/window_handle.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/core/wire_safe.hpp"

namespace railcheck::hw::zerobuf {

// The descriptor crosses as a number paired with its owner's pid, which the peer resolves
// through pidfd_getfd; nothing else process-local is in the blob.
static_assert(WireSafe<WindowHandle>);

namespace {

constexpr std::uint32_t kMagic = 0x3157425AU;  // "ZBW1" read as little-endian bytes
constexpr std::uint16_t kVersion = 1;

void put(std::vector<std::uint8_t>& out, std::size_t at, std::uint64_t v, int n) {
  for (int i = 0; i < n; ++i) out[at + i] = static_cast<std::uint8_t>(v >> (8 * i));
}
std::uint64_t get(std::span<const std::uint8_t> in, std::size_t at, int n) {
  std::uint64_t v = 0;
  for (int i = 0; i < n; ++i) v |= static_cast<std::uint64_t>(in[at + i]) << (8 * i);
  return v;
}

Error bad(std::string what) {
  return Error{"zerobuf window handle: " + std::move(what),
               "every rank must run the same railcheck zerobuf build (wire format v1)"};
}

}  // namespace

std::vector<std::uint8_t> encode(const WindowHandle& h) {
  std::vector<std::uint8_t> out(kWindowHandleBytes, 0);
  put(out, 0, kMagic, 4);
  put(out, 4, kVersion, 2);
  put(out, 8, h.rank, 4);
  put(out, 12, h.nranks, 4);
  put(out, 16, h.pid, 4);
  put(out, 20, h.fd, 4);
  put(out, 24, h.window_bytes, 8);
  put(out, 32, h.flag_area_bytes, 8);
  std::copy(h.device_uuid.begin(), h.device_uuid.end(), out.begin() + 40);
  return out;
}

Result<WindowHandle> decode_window_handle(std::span<const std::uint8_t> in) {
  if (in.size() != kWindowHandleBytes) return bad(fmt::format("{} bytes, expected {}", in.size(), kWindowHandleBytes));
  if (get(in, 0, 4) != kMagic) return bad(fmt::format("magic {:#x}, expected {:#x}", get(in, 0, 4), kMagic));
  if (get(in, 4, 2) != kVersion) return bad(fmt::format("version {}, expected {}", get(in, 4, 2), kVersion));
  if (get(in, 6, 2) != 0 || get(in, 56, 8) != 0) return bad("reserved fields are not zero");
  WindowHandle h;
  h.rank = static_cast<std::uint32_t>(get(in, 8, 4));
  h.nranks = static_cast<std::uint32_t>(get(in, 12, 4));
  h.pid = static_cast<std::uint32_t>(get(in, 16, 4));
  h.fd = static_cast<std::uint32_t>(get(in, 20, 4));
  h.window_bytes = get(in, 24, 8);
  h.flag_area_bytes = get(in, 32, 8);
  std::copy(in.begin() + 40, in.begin() + 56, h.device_uuid.begin());
  if (h.nranks == 0 || h.nranks > kMaxRanks) return bad(fmt::format("nranks {}: 1 to {}", h.nranks, kMaxRanks));
  if (h.rank >= h.nranks) return bad(fmt::format("rank {} of {} ranks", h.rank, h.nranks));
  if (h.pid == 0 || h.pid > 0x7fffffffU) return bad(fmt::format("rank {}: pid {}", h.rank, h.pid));
  if (h.fd > 0x7fffffffU) return bad(fmt::format("rank {}: descriptor {}", h.rank, h.fd));
  if (h.window_bytes == 0 || h.flag_area_bytes == 0 || h.flag_area_bytes > h.window_bytes)
    return bad(
        fmt::format("rank {}: a flag area of {} B in a window of {} B", h.rank, h.flag_area_bytes, h.window_bytes));
  return h;
}

Result<std::vector<WindowHandle>> decode_peer_handles(const std::vector<std::vector<std::uint8_t>>& blobs,
                                                      std::uint32_t my_rank) {
  std::vector<WindowHandle> out;
  for (std::size_t r = 0; r < blobs.size(); ++r) {
    auto h = decode_window_handle(blobs[r]);
    if (!h) return Error{fmt::format("bootstrap blob of rank {}: {}", r, h.error().what), h.error().hint};
    if (h->rank != r) return bad(fmt::format("blob {} says it is rank {}", r, h->rank));
    if (h->nranks != blobs.size())
      return bad(fmt::format("rank {} says {} ranks, the bootstrap gathered {}", r, h->nranks, blobs.size()));
    if (!out.empty() && h->flag_area_bytes != out.front().flag_area_bytes)
      return bad(fmt::format("rank {} has a flag area of {} B, rank 0 of {} B", r, h->flag_area_bytes,
                             out.front().flag_area_bytes));
    out.push_back(h.value());
  }
  if (my_rank >= out.size()) return bad(fmt::format("this rank {} is not among {} blobs", my_rank, out.size()));
  return out;
}

}  // namespace railcheck::hw::zerobuf

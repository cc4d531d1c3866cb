#pragma once
// What one rank tells every other rank about its window (zbccl seed §4.4, §5.1), as the blob of
// railcheck's TCP bootstrap (engine/bootstrap): enough for a peer to import the window's
// physical memory and map it.
//
// The window's memory is exported as a POSIX file descriptor (CU_MEM_HANDLE_TYPE_POSIX_FILE_
// DESCRIPTOR). A descriptor number means nothing in another process on its own, so the blob
// carries it together with the owner's pid: "descriptor `fd` of process `pid`", which a peer on
// the same host turns into its own descriptor with pidfd_open + pidfd_getfd (peer_fd.hpp). The
// owner keeps the descriptor open until it tears the communicator down.
//
// Wire format v1, little-endian, 64 bytes:
//   0  u32 magic "ZBW1"   4 u16 version (1)   6 u16 reserved (0)
//   8  u32 rank          12 u32 nranks
//  16  u32 pid           20 u32 fd
//  24  u64 window_bytes  32 u64 flag_area_bytes
//  40  u8[16] device uuid (cuDeviceGetUuid; tells peers on one GPU from peers on another)
//  56  u64 reserved (0)
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "engine/core/result.hpp"

namespace railcheck::hw::zerobuf {

constexpr std::uint32_t kMaxRanks = 8;  // the kernel's peer table (flag_kernels.cuh)
constexpr std::size_t kWindowHandleBytes = 64;

struct WindowHandle {
  std::uint32_t rank = 0;
  std::uint32_t nranks = 0;
  std::uint32_t pid = 0;
  std::uint32_t fd = 0;
  std::uint64_t window_bytes = 0;
  std::uint64_t flag_area_bytes = 0;
  std::array<std::uint8_t, 16> device_uuid{};
  bool operator==(const WindowHandle&) const = default;
};

std::vector<std::uint8_t> encode(const WindowHandle& h);
Result<WindowHandle> decode_window_handle(std::span<const std::uint8_t> blob);

// Every rank's handle from the bootstrap's blobs, checked against each other and against this
// rank: blob r holds rank r, every rank agrees on nranks and on the flag area, no window is
// empty. Error: which rank's blob is wrong and how.
Result<std::vector<WindowHandle>> decode_peer_handles(const std::vector<std::vector<std::uint8_t>>& blobs,
                                                      std::uint32_t my_rank);

}  // namespace railcheck::hw::zerobuf

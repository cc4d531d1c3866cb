#pragma once
// Turns "descriptor `fd` of process `pid`" (a peer's WindowHandle) into a descriptor of this
// process: pidfd_open(pid) then pidfd_getfd(pidfd, fd) (Linux >= 5.6). The kernel allows it when
// this process may ptrace the owner (same user, and Yama's ptrace_scope permitting it, or
// CAP_SYS_PTRACE); a refusal is an error that says so, never a silent fallback.
#include <cstdint>

#include "engine/core/result.hpp"

namespace railcheck::hw::zerobuf {

// A new descriptor, owned by the caller (close it). Error: which call failed, with errno's text
// and what to do (a kernel without the calls, ptrace permissions, a peer that has exited).
Result<int> fetch_peer_fd(std::uint32_t pid, std::uint32_t fd);

}  // namespace railcheck::hw::zerobuf

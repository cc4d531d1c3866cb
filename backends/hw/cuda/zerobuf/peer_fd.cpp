#include "backends/hw/cuda/zerobuf/peer_fd.hpp"

#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace railcheck::hw::zerobuf {
namespace {

std::string why(int err) {
  switch (err) {
    case ENOSYS: return "this kernel has no pidfd_open/pidfd_getfd: Linux 5.6 or newer is needed";
    case EPERM:
    case EACCES:
      return "ptrace permission refused: run every rank as the same user, and either as root, with "
             "CAP_SYS_PTRACE, or with /proc/sys/kernel/yama/ptrace_scope at 0";
    case ESRCH: return "that process has exited: a peer died during the bootstrap";
    case EBADF: return "that process has no such descriptor: it closed its window early";
    default: return "see pidfd_getfd(2)";
  }
}

Error failed(const char* call, std::uint32_t pid, std::uint32_t fd, int err) {
  return Error{fmt::format("zerobuf: {} for descriptor {} of pid {} failed: {}", call, fd, pid, std::strerror(err)),
               why(err)};
}

}  // namespace

Result<int> fetch_peer_fd(std::uint32_t pid, std::uint32_t fd) {
  const long pidfd = ::syscall(SYS_pidfd_open, static_cast<pid_t>(pid), 0);
  if (pidfd < 0) return failed("pidfd_open", pid, fd, errno);
  const long got = ::syscall(SYS_pidfd_getfd, static_cast<int>(pidfd), static_cast<int>(fd), 0);
  const int err = errno;
  ::close(static_cast<int>(pidfd));
  if (got < 0) return failed("pidfd_getfd", pid, fd, err);
  return static_cast<int>(got);
}

}  // namespace railcheck::hw::zerobuf

#include "backends/hw/conform/peer_channel.hpp"

#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>

namespace railcheck::conform {

PeerChannel::~PeerChannel() {
  if (fd_ >= 0) close(fd_);
}

bool PeerChannel::send_line(const std::string& line) {
  // A peer that already exited must make this a false return, never a SIGPIPE that kills the
  // caller (a lab side that failed before the parent's "stop" reached it): SIGPIPE is blocked in
  // this thread around the write, and one the write raised is taken before the mask is restored.
  sigset_t pipe_only, saved;
  sigemptyset(&pipe_only);
  sigaddset(&pipe_only, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe_only, &saved);
  std::string out = line + "\n";
  const char* p = out.data();
  std::size_t left = out.size();
  bool ok = true;
  while (left > 0) {
    const ssize_t n = write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ok = false;
      if (errno == EPIPE) {
        const timespec now{0, 0};
        (void)sigtimedwait(&pipe_only, nullptr, &now);
      }
      break;
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  pthread_sigmask(SIG_SETMASK, &saved, nullptr);
  return ok;
}

std::optional<std::string> PeerChannel::read_line(std::chrono::milliseconds wait) {
  const auto until = std::chrono::steady_clock::now() + wait;
  while (true) {
    if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
      std::string line = buffer_.substr(0, nl);
      buffer_.erase(0, nl + 1);
      return line;
    }
    if (closed_) return std::nullopt;
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(std::max<long long>(0, left.count()))) <= 0) return std::nullopt;
    char chunk[4096];
    const ssize_t n = read(fd_, chunk, sizeof(chunk));
    if (n <= 0) {
      closed_ = true;
      continue;
    }
    buffer_.append(chunk, static_cast<std::size_t>(n));
  }
}

}  // namespace railcheck::conform

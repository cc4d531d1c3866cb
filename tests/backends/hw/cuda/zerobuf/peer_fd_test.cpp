// Fetching a descriptor of another process through pidfd_getfd, as ranks do with each other's
// exported windows; here with this process as the "peer" (always allowed) and with a pid that
// does not exist (the error names the call and the cause).
#include "backends/hw/cuda/zerobuf/peer_fd.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cerrno>

using railcheck::hw::zerobuf::fetch_peer_fd;

TEST_CASE("a descriptor fetched by pid and number is the same open file", "[zerobuf][pidfd]") {
  int pipe_fds[2];
  REQUIRE(::pipe(pipe_fds) == 0);
  auto got = fetch_peer_fd(static_cast<std::uint32_t>(::getpid()), static_cast<std::uint32_t>(pipe_fds[1]));
  if (!got.ok() && got.error().what.find("Function not implemented") != std::string::npos) {
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    WARN("skipped: this kernel has no pidfd_getfd (Linux < 5.6): " << got.error().message());
    return;
  }
  REQUIRE(got.ok());
  CHECK(got.value() != pipe_fds[1]);
  ::close(pipe_fds[1]);  // only the fetched copy is left open for writing
  const char msg[] = "zb";
  REQUIRE(::write(got.value(), msg, 2) == 2);
  ::close(got.value());
  char buf[4] = {};
  CHECK(::read(pipe_fds[0], buf, sizeof buf) == 2);
  CHECK(std::string(buf) == "zb");
  ::close(pipe_fds[0]);
}

TEST_CASE("fetching from a process that has exited is an error naming the call", "[zerobuf][pidfd]") {
  const pid_t child = ::fork();
  REQUIRE(child >= 0);
  if (child == 0) ::_exit(0);
  int status = 0;
  REQUIRE(::waitpid(child, &status, 0) == child);  // reaped: the pid no longer exists
  auto got = fetch_peer_fd(static_cast<std::uint32_t>(child), 0);
  REQUIRE_FALSE(got.ok());
  CHECK(got.error().what.find("pid " + std::to_string(child)) != std::string::npos);
  const bool named = got.error().what.find("pidfd_open") != std::string::npos ||
                     got.error().what.find("Function not implemented") != std::string::npos;
  CHECK(named);
}

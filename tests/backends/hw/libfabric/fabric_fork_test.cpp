// Two processes, as NCCL runs them: the listener's handle crosses a socket pair (the bootstrap's job),
// the child connects and sends, the parent receives and verifies every byte.
#include <poll.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>

#include "stream_fixture.hpp"

using namespace railcheck;
using namespace railcheck::test;

namespace {

bool read_all(int fd, std::uint8_t* p, std::size_t n) {
  while (n > 0) {
    const ssize_t got = read(fd, p, n);
    if (got <= 0) return false;
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

// The sender runs in a fresh image of this test binary (fork + exec of the hidden test case
// below), not in a forked copy: a child that inherits the parent's initialised libfabric
// providers (tcp's progress state) stalls, as libfabric does not support fork after init.
[[noreturn]] void exec_sender(int fd, const std::string& prov, const conform::StreamSpec& spec) {
  setenv("RAILCHECK_FORK_FD", std::to_string(fd).c_str(), 1);
  setenv("RAILCHECK_FORK_PROVIDER", prov.c_str(), 1);
  setenv("RAILCHECK_FORK_SPEC",
         (std::to_string(spec.seed) + " " + std::to_string(spec.messages) + " " + std::to_string(spec.max_size) + " " +
          std::to_string(spec.cut_primary_after ? static_cast<long long>(*spec.cut_primary_after) : -1LL))
             .c_str(),
         1);
  execl("/proc/self/exe", "railcheck_tests_backends_hw_libfabric", "[.fabric-fork-sender]",
        static_cast<char*>(nullptr));
  _exit(4);
}

std::string run_two_processes(const std::string& prov, const conform::StreamSpec& spec) {
  const FabricOptions o = loopback_options(prov);
  std::fflush(nullptr);
  std::array<int, 2> fds{};
  // A socket pair: the handle goes down, the receiver's "done" comes back up.
  REQUIRE(socketpair(AF_UNIX, SOCK_STREAM, 0, fds.data()) == 0);
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    close(fds[1]);
    exec_sender(fds[0], prov, spec);
  }
  close(fds[0]);
  std::vector<std::uint8_t> handle;
  auto rx = FabricConnection::listen(o, handle);
  if (!rx) {
    close(fds[1]);
    waitpid(pid, nullptr, 0);
    return "listen: " + rx.error().message();
  }
  const auto len = static_cast<std::uint32_t>(handle.size());
  const bool sent = write(fds[1], &len, sizeof(len)) == sizeof(len) &&
                    write(fds[1], handle.data(), handle.size()) == static_cast<ssize_t>(handle.size());
  std::string why;
  if (sent) {
    conform::StreamReceiver recv(*rx.value(), spec);
    const bool done = pump([&] { recv.step(); }, [&] { return !recv.error().empty() || recv.done(); });
    if (!recv.error().empty())
      why = "receiver: " + recv.error();
    else if (!done)
      why = "receiver timed out after " + std::to_string(recv.verified()) + " messages";
  } else {
    why = "could not hand the handle to the child";
  }
  close(fds[1]);  // the child's read sees EOF: the receiver is finished, it may close
  int status = 0;
  waitpid(pid, &status, 0);
  if (why.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
    why = "the sending process failed (exit status " + std::to_string(status) + "; its stderr says why)";
  return why;
}

}  // namespace

TEST_CASE("two processes: send/recv exactly once over a handle passed through a socket pair", "[fabric][fork]") {
  for (const char* prov : {"tcp;ofi_rxm", "shm"}) {
    DYNAMIC_SECTION(prov) {
      if (!provider_here(prov)) continue;
      conform::StreamSpec spec;
      spec.seed = 21;
      spec.messages = 200;
      spec.max_size = 6000;
      INFO("seed " << spec.seed);
      CHECK(run_two_processes(prov, spec) == "");
    }
  }
}

TEST_CASE("two processes: the sender's primary rail is cut mid-stream, nothing lost or duplicated", "[fabric][fork]") {
  for (const char* prov : {"tcp;ofi_rxm", "shm"}) {
    DYNAMIC_SECTION(prov) {
      if (!provider_here(prov)) continue;
      conform::StreamSpec spec;
      spec.seed = 23;
      spec.messages = 300;
      spec.max_size = 3000;
      spec.cut_primary_after = 120;
      INFO("seed " << spec.seed);
      CHECK(run_two_processes(prov, spec) == "");
    }
  }
}

// Runs only inside exec_sender's child: connect with the handle from the pipe, send the stream.
TEST_CASE("fork child: the sending side", "[.fabric-fork-sender]") {
  const char* fd_text = std::getenv("RAILCHECK_FORK_FD");
  const char* prov = std::getenv("RAILCHECK_FORK_PROVIDER");
  const char* spec_text = std::getenv("RAILCHECK_FORK_SPEC");
  REQUIRE(fd_text != nullptr);
  REQUIRE(prov != nullptr);
  REQUIRE(spec_text != nullptr);
  conform::StreamSpec spec;
  long long cut = -1;
  REQUIRE(std::sscanf(spec_text, "%lu %lu %zu %lld", &spec.seed, &spec.messages, &spec.max_size, &cut) == 4);
  if (cut >= 0) spec.cut_primary_after = static_cast<std::uint64_t>(cut);
  const int fd = std::atoi(fd_text);
  std::uint32_t len = 0;
  REQUIRE(read_all(fd, reinterpret_cast<std::uint8_t*>(&len), sizeof(len)));
  REQUIRE(len <= 128);
  std::vector<std::uint8_t> handle(len);
  REQUIRE(read_all(fd, handle.data(), len));
  auto c = FabricConnection::connect(loopback_options(prov), handle);
  if (!c) FAIL("connect: " << c.error().message());
  conform::StreamSender tx(*c.value(), spec);
  const bool done = pump([&] { tx.step(); }, [&] { return !tx.error().empty() || tx.done(); });
  // Keep the endpoints up until the receiver is finished (EOF on the socket): closing earlier
  // would reset TCP connections with data the receiver has not read yet, as NCCL never does.
  pollfd pfd{fd, POLLIN, 0};
  pump([&] { c.value()->progress(); }, [&] { return poll(&pfd, 1, 0) > 0; });
  INFO("seed " << spec.seed);
  CHECK(tx.error() == "");
  CHECK(done);
}

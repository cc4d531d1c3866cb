// Starting the suite's peer process (peer_process.hpp).
#include "backends/hw/conform/peer_process.hpp"

#include <sys/socket.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "backends/hw/conform/child_process.hpp"
#include "backends/hw/conform/netns_lab.hpp"

namespace railcheck::conform {

Result<PeerProcess> start_peer(const PeerLaunch& l) {
  int fds[2] = {-1, -1};
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds) != 0) return Error{"socketpair failed", ""};
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return Error{"fork failed", ""};
  }
  if (pid == 0) {
    close(fds[0]);
    if (l.lab != nullptr) {
      if (auto in = enter_netns(l.lab->side(1).netns); !in) {
        std::fprintf(stderr, "conform: the peer could not enter its namespace: %s\n", in.error().message().c_str());
        _exit(2);
      }
    }
    for (const auto& [name, value] : l.env) {
      if (value) {
        ::setenv(name.c_str(), value->c_str(), 1);
      } else {
        ::unsetenv(name.c_str());
      }
    }
    const std::string fd = std::to_string(fds[1]);
    std::vector<std::string> args = {"railcheck", "conform", "--provider", l.provider, "--peer-fd", fd};
    if (!l.rails.empty()) args.insert(args.end(), {"--peer-rails", l.rails[0] + "," + l.rails[1]});
    if (l.lab != nullptr) args.insert(args.end(), {"--cut-link", l.lab->side(1).rails[0].if_name});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(l.self_exe.c_str(), argv.data());
    std::fprintf(stderr, "conform: could not start the peer %s\n", l.self_exe.c_str());
    _exit(2);
  }
  close(fds[1]);
  return PeerProcess{pid, fds[0]};
}

int wait_peer(pid_t pid) { return wait_child(pid); }

}  // namespace railcheck::conform

#pragma once
// Starting the suite's peer process: the railcheck executable as `conform --peer-fd N`, a fresh
// image (libfabric does not support fork after its providers are initialised), joined to this
// process by a socket pair that carries the case lines (peer_channel.hpp).
#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/result.hpp"

namespace railcheck::conform {

class NetnsLab;

struct PeerLaunch {
  std::string self_exe;  // what to exec
  std::string provider;
  std::vector<std::string> rails;  // --peer-rails; empty: the provider's default
  const NetnsLab* lab = nullptr;   // the peer enters side 1's namespace; --cut-link its rail 0
  // Environment variables set (a value) or removed (nullopt) in the child before the exec.
  std::vector<std::pair<std::string, std::optional<std::string>>> env;
};

struct PeerProcess {
  pid_t pid = -1;
  int fd = -1;  // this side of the socket pair; the caller owns it
};

Result<PeerProcess> start_peer(const PeerLaunch& l);

// The peer's exit code, or 128 + the signal that ended it; -1 if it cannot be waited for.
int wait_peer(pid_t pid);

}  // namespace railcheck::conform

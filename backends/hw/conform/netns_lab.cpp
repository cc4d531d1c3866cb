#include "backends/hw/conform/netns_lab.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <net/if.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace railcheck::conform {
namespace {

constexpr auto kIpDeadline = std::chrono::seconds(10);
constexpr const char* kRootHint = "run as root, or use the endpoint-cut failover";
constexpr const char* kNotPermittedHint =
    "this host or container does not permit network namespaces (they need CAP_SYS_ADMIN and CAP_NET_ADMIN, "
    "e.g. docker --privileged); use the endpoint-cut failover";

class OwnedFd {
 public:
  explicit OwnedFd(int fd = -1) : fd_(fd) {}
  ~OwnedFd() { reset(); }
  OwnedFd(const OwnedFd&) = delete;
  OwnedFd& operator=(const OwnedFd&) = delete;
  int get() const { return fd_; }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

std::string command_line(const std::string& tool, const std::vector<std::string>& args) {
  std::string line = tool;
  for (const std::string& a : args) line += " " + a;
  return line;
}

// ip's stderr as one line for an Error's `what`.
std::string one_line(std::string text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
  std::string out;
  for (const char c : text) out += c == '\n' ? std::string("; ") : std::string(1, c);
  return out.empty() ? "(no message)" : out;
}

std::string status_text(int status) {
  if (WIFEXITED(status)) return fmt::format("exit status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("killed by signal {}", WTERMSIG(status));
  return fmt::format("wait status {}", status);
}

int wait_for(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// Reads both pipes to EOF (stdout and stderr together, so a chatty ip can never block on a
// full pipe) or until the deadline; false on the deadline.
bool drain(int out_fd, int err_fd, std::string& out, std::string& err) {
  const auto until = std::chrono::steady_clock::now() + kIpDeadline;
  pollfd fds[2] = {{out_fd, POLLIN, 0}, {err_fd, POLLIN, 0}};
  std::string* sinks[2] = {&out, &err};
  int open_fds = 2;
  while (open_fds > 0) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    const int n = poll(fds, 2, static_cast<int>(left.count()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char chunk[4096];
      const ssize_t got = read(fds[i].fd, chunk, sizeof(chunk));
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        fds[i].fd = -1;  // poll ignores negative fds
        --open_fds;
        continue;
      }
      sinks[i]->append(chunk, static_cast<std::size_t>(got));
    }
  }
  return true;
}

Result<bool> ip_step(const std::vector<std::string>& args) {
  auto out = run_ip(args);
  if (!out) return out.error();
  return true;
}

}  // namespace

Result<std::string> run_ip(const std::vector<std::string>& args) { return run_tool("ip", args); }

Result<std::string> run_tc(const std::vector<std::string>& args) { return run_tool("tc", args); }

Result<std::string> run_tool(const std::string& tool, const std::vector<std::string>& args) {
  const std::string cmd = command_line(tool, args);
  int out_pipe[2];
  int err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return Error{fmt::format("`{}`: pipe: {}", cmd, std::strerror(errno)), {}};
  OwnedFd out_r(out_pipe[0]);
  OwnedFd out_w(out_pipe[1]);
  if (pipe2(err_pipe, O_CLOEXEC) != 0) return Error{fmt::format("`{}`: pipe: {}", cmd, std::strerror(errno)), {}};
  OwnedFd err_r(err_pipe[0]);
  OwnedFd err_w(err_pipe[1]);

  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&fa, out_w.get(), STDOUT_FILENO);  // dup2 clears O_CLOEXEC on the copy
  posix_spawn_file_actions_adddup2(&fa, err_w.get(), STDERR_FILENO);
  std::vector<char*> argv;
  argv.push_back(const_cast<char*>(tool.c_str()));
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, tool.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  out_w.reset();  // so that EOF arrives when ip exits
  err_w.reset();
  if (rc == ENOENT) return Error{fmt::format("`{}`: no `{}` binary on PATH", cmd, tool), "apt-get install iproute2"};
  if (rc != 0) return Error{fmt::format("`{}`: cannot start {}: {}", cmd, tool, std::strerror(rc)), {}};

  std::string out;
  std::string err;
  if (!drain(out_r.get(), err_r.get(), out, err)) {
    kill(pid, SIGKILL);
    wait_for(pid);
    return Error{fmt::format("`{}` did not finish within {} s", cmd, kIpDeadline.count()), {}};
  }
  const int status = wait_for(pid);
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return out;
  const bool not_permitted = err.find("Operation not permitted") != std::string::npos;
  return Error{fmt::format("`{}` failed ({}): {}", cmd, status_text(status), one_line(err)),
               not_permitted ? kNotPermittedHint : ""};
}

Result<std::unique_ptr<NetnsLab>> NetnsLab::create(const std::string& prefix, std::size_t rails) {
  if (rails < 1 || rails > kMaxRails)
    return Error{fmt::format("a network-namespace lab of {} rails; it makes 1 to {}", rails, kMaxRails), ""};
  const bool well_formed =
      !prefix.empty() && prefix.size() <= kMaxPrefix &&
      std::all_of(prefix.begin(), prefix.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)); });
  if (!well_formed) {
    return Error{fmt::format("network-namespace lab prefix '{}' is not 1 to {} letters and digits", prefix, kMaxPrefix),
                 "interface names '<prefix>r0a' must fit in 15 characters"};
  }
  if (geteuid() != 0) {
    return Error{fmt::format("the network-namespace lab needs root to create namespaces '{}a' and '{}b' (running "
                             "as uid {})",
                             prefix, prefix, geteuid()),
                 kRootHint};
  }
  std::unique_ptr<NetnsLab> lab(new NetnsLab());
  if (auto built = lab->build(prefix, rails); !built) return built.error();  // ~NetnsLab removes the part built
  return lab;
}

Result<bool> NetnsLab::build(const std::string& prefix, std::size_t rails) {
  constexpr char kTag[2] = {'a', 'b'};
  for (std::size_t s = 0; s < 2; ++s) {
    sides_[s].netns = prefix + kTag[s];
    sides_[s].rails.clear();
    for (std::size_t r = 0; r < rails; ++r)
      sides_[s].rails.push_back(
          {fmt::format("{}r{}{}", prefix, r, kTag[s]), fmt::format("169.254.{}.{}", r + 1, s + 1)});
  }
  for (const NetnsSide& side : sides_) {
    if (auto step = ip_step({"netns", "add", side.netns}); !step) return step;
    created_netns_.push_back(side.netns);
  }
  for (std::size_t r = 0; r < rails; ++r) {
    const std::string& end_a = sides_[0].rails[r].if_name;
    const std::string& end_b = sides_[1].rails[r].if_name;
    if (auto step = ip_step({"link", "add", end_a, "type", "veth", "peer", "name", end_b}); !step) return step;
    unmoved_links_ = {end_a, end_b};
    for (const NetnsSide& side : sides_) {
      const std::string& end = side.rails[r].if_name;
      if (auto step = ip_step({"link", "set", end, "netns", side.netns}); !step) return step;
      unmoved_links_.erase(std::find(unmoved_links_.begin(), unmoved_links_.end(), end));
    }
  }
  for (const NetnsSide& side : sides_) {
    for (const NetnsRail& rail : side.rails) {
      if (auto step = ip_step({"-n", side.netns, "addr", "add", rail.address + "/30", "dev", rail.if_name}); !step) {
        return step;
      }
      if (auto step = ip_step({"-n", side.netns, "link", "set", rail.if_name, "up"}); !step) return step;
    }
    if (auto step = ip_step({"-n", side.netns, "link", "set", "lo", "up"}); !step) return step;
  }
  return true;
}

Result<bool> NetnsLab::limit_rate(double gbps) {
  if (!(gbps >= 0.001) || gbps > 400)  // tc's unit is the kbit/s: below 1 Mb/s it rounds away
    return Error{fmt::format("a lab rail of {} Gb/s; shape it to at least 0.001 and at most 400 Gb/s", gbps), ""};
  const auto kbit = static_cast<long long>(gbps * 1e6 + 0.5);
  for (const NetnsSide& side : sides_) {
    for (const NetnsRail& rail : side.rails) {
      // latency bounds the queue (rate x latency + burst): a second of the rate holds any window
      // the lab streams, so the bucket only ever delays.
      auto shaped = run_tc({"-n", side.netns, "qdisc", "replace", "dev", rail.if_name, "root", "tbf", "rate",
                            fmt::format("{}kbit", kbit), "burst", std::to_string(kShapeBurstBytes), "latency", "1s"});
      if (!shaped) {
        return Error{fmt::format("cannot shape the lab's rail {} to {} Gb/s: {}", rail.if_name, gbps,
                                 shaped.error().message()),
                     "the kernel needs the tbf qdisc (CONFIG_NET_SCH_TBF) and iproute2's tc"};
      }
    }
  }
  rate_limit_gbps_ = gbps;
  return true;
}

NetnsLab::~NetnsLab() {
  try {
    // Deleting one end of a veth pair deletes its peer, so the second delete may find nothing
    // to delete; only a namespace left behind is worth a line.
    for (const std::string& link : unmoved_links_) (void)run_ip({"link", "del", link});
    for (const std::string& netns : created_netns_) {
      if (auto gone = run_ip({"netns", "del", netns}); !gone) {
        std::fprintf(stderr, "railcheck: network namespace %s left behind: %s\n", netns.c_str(),
                     gone.error().message().c_str());
      }
    }
  } catch (...) {  // NOLINT(bugprone-empty-catch): a destructor must not throw; nothing else to do
  }
}

Result<bool> enter_netns(const std::string& netns) {
  if (netns.empty() || netns.find('/') != std::string::npos || netns == "." || netns == "..") {
    return Error{fmt::format("'{}' is not a network namespace name", netns), {}};
  }
  const std::string path = "/run/netns/" + netns;
  OwnedFd fd(open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) {
    return Error{fmt::format("cannot open network namespace {}: {}", path, std::strerror(errno)),
                 "create it first (NetnsLab::create or `ip netns add`)"};
  }
  if (setns(fd.get(), CLONE_NEWNET) != 0) {
    const int e = errno;
    return Error{fmt::format("setns({}, CLONE_NEWNET): {}", path, std::strerror(e)), e == EPERM ? kRootHint : ""};
  }
  return true;
}

Result<bool> set_link_up(const std::string& if_name, bool up) {
  const char* state = up ? "up" : "down";
  if (if_name.empty() || if_name.size() >= IFNAMSIZ) {
    return Error{
        fmt::format("cannot set link '{}' {}: a link name is 1 to {} characters", if_name, state, IFNAMSIZ - 1), {}};
  }
  OwnedFd sock(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (sock.get() < 0) {
    return Error{fmt::format("cannot set link '{}' {}: socket(AF_INET): {}", if_name, state, std::strerror(errno)), {}};
  }
  ifreq req{};
  std::memcpy(req.ifr_name, if_name.data(), if_name.size());
  if (ioctl(sock.get(), SIOCGIFFLAGS, &req) != 0) {
    const int e = errno;
    return Error{fmt::format("cannot set link '{}' {}: SIOCGIFFLAGS: {}", if_name, state, std::strerror(e)),
                 e == ENODEV ? "no link of that name in this network namespace; `ip link` lists them" : ""};
  }
  req.ifr_flags = static_cast<short>(up ? (req.ifr_flags | IFF_UP) : (req.ifr_flags & ~IFF_UP));
  if (ioctl(sock.get(), SIOCSIFFLAGS, &req) != 0) {
    const int e = errno;
    return Error{fmt::format("cannot set link '{}' {}: SIOCSIFFLAGS: {}", if_name, state, std::strerror(e)),
                 e == EPERM ? "needs CAP_NET_ADMIN: run as root" : ""};
  }
  return true;
}

std::string default_netns_prefix() { return "rc" + std::to_string(getpid()); }

}  // namespace railcheck::conform

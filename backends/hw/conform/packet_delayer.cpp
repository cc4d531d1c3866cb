// The lab's delay fault in user space (packet_delayer.hpp).
#include "backends/hw/conform/packet_delayer.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <linux/close_range.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>

#include "backends/hw/conform/child_process.hpp"
#include "backends/hw/conform/peer_channel.hpp"
#include "engine/core/rng.hpp"

namespace railcheck::conform {
namespace {

using Clock = std::chrono::steady_clock;

struct Held {
  std::uint32_t id;
  Clock::time_point release;
};

struct DelayerState {
  DelaySpec spec;
  SeededRng rng{1};
  std::deque<Held> held;  // release times never decrease: in order, like a link
  Clock::time_point last_release{};
};

int on_packet(nfq_q_handle*, nfgenmsg*, nfq_data* nfa, void* data) {
  auto& st = *static_cast<DelayerState*>(data);
  const nfqnl_msg_packet_hdr* ph = nfq_get_msg_packet_hdr(nfa);
  if (ph == nullptr) return 0;
  const auto spread = static_cast<std::uint64_t>(std::max<long long>(0, st.spec.spread.count()));
  const auto wait = st.spec.delay + std::chrono::nanoseconds(static_cast<long long>(st.rng.below(spread)));
  const auto release = std::max(Clock::now() + wait, st.last_release);
  st.last_release = release;
  st.held.push_back(Held{ntohl(ph->packet_id), release});
  return 0;
}

// The child: binds the queue, says "ready", then holds and releases until its stop pipe closes;
// what it still holds then goes out at once.
int delayer_main(const std::string& netns, std::uint16_t queue, const DelaySpec& spec, int ready_fd, int stop_fd) {
  if (auto in = enter_netns(netns); !in) return fail_with(40, in.error().message());
  sched_param p{};
  p.sched_priority = 1;
  (void)sched_setscheduler(0, SCHED_FIFO, &p);  // as the lab's sides: a packet's wait is its delay, not a core's
  DelayerState st;
  st.spec = spec;
  st.rng = SeededRng(spec.seed);
  nfq_handle* h = nfq_open();
  if (h == nullptr) return fail_with(41, "nfq_open failed (no nfnetlink_queue in this kernel, or not root)");
  nfq_q_handle* qh = nfq_create_queue(h, queue, &on_packet, &st);
  if (qh == nullptr) return fail_with(42, fmt::format("binding NFQUEUE {} failed: {}", queue, std::strerror(errno)));
  if (nfq_set_mode(qh, NFQNL_COPY_META, 0) < 0) return fail_with(43, "nfq_set_mode failed");
  (void)nfq_set_queue_maxlen(qh, 1 << 16);
  (void)nfnl_rcvbufsiz(nfq_nfnlh(h), 16 << 20);  // a burst of a window's packets must not overflow it
  const int fd = nfq_fd(h);
  (void)PeerChannel(ready_fd).send_line("ready");
  std::vector<char> buf(1 << 16);
  bool stopping = false;
  while (!stopping || !st.held.empty()) {
    const auto now = Clock::now();
    while (!st.held.empty() && (stopping || st.held.front().release <= now)) {
      (void)nfq_set_verdict(qh, st.held.front().id, NF_ACCEPT, 0, nullptr);
      st.held.pop_front();
    }
    if (stopping) break;
    // ppoll sleeps to the nanosecond (hrtimers; no slack for a SCHED_FIFO thread), so a release
    // is neither late by poll's millisecond rounding nor a busy spin.
    auto wait = std::chrono::nanoseconds(std::chrono::milliseconds(100));
    if (!st.held.empty()) wait = std::max(std::chrono::nanoseconds(0), st.held.front().release - now);
    const timespec ts{static_cast<time_t>(wait.count() / 1'000'000'000), static_cast<long>(wait.count() % 1'000'000'000)};
    pollfd fds[2] = {{fd, POLLIN, 0}, {stop_fd, POLLIN, 0}};
    if (ppoll(fds, 2, &ts, nullptr) < 0 && errno != EINTR) return fail_with(44, "ppoll failed");
    if ((fds[1].revents & (POLLIN | POLLHUP)) != 0) stopping = true;
    if ((fds[0].revents & POLLIN) != 0) {
      // Every message waiting, without blocking.
      for (ssize_t n; (n = recv(fd, buf.data(), buf.size(), MSG_DONTWAIT)) > 0;)
        nfq_handle_packet(h, buf.data(), static_cast<int>(n));
    }
  }
  nfq_destroy_queue(qh);
  nfq_close(h);
  return 0;
}

}  // namespace

Result<std::unique_ptr<PacketDelayer>> PacketDelayer::start(const NetnsSide& side, int rail, std::uint16_t queue,
                                                            const DelaySpec& spec) {
  std::unique_ptr<PacketDelayer> d(new PacketDelayer());
  d->netns_ = side.netns;
  d->dev_ = side.rails.at(static_cast<std::size_t>(rail)).if_name;
  d->queue_ = queue;
  int ready[2], stop[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return Error{"packet delayer: pipe2 failed", ""};
  if (pipe2(stop, O_CLOEXEC) != 0) {
    close(ready[0]);
    close(ready[1]);
    return Error{"packet delayer: pipe2 failed", ""};
  }
  const std::string netns = side.netns;
  d->child_ = fork_child(
      [&] {
        // Only its own two pipes: an inherited write end of another delayer's stop pipe would keep
        // that one from ever seeing it close.
        const int r = fcntl(ready[1], F_DUPFD_CLOEXEC, 1000), s = fcntl(stop[0], F_DUPFD_CLOEXEC, 1001);
        if (r < 0 || s < 0 || dup3(r, 3, O_CLOEXEC) < 0 || dup3(s, 4, O_CLOEXEC) < 0)
          return fail_with(45, "packet delayer: dup failed");
        close_range(5, ~0U, 0);
        return delayer_main(netns, queue, spec, 3, 4);
      },
      600);
  close(ready[1]);
  close(stop[0]);
  d->stop_fd_ = stop[1];
  PeerChannel from_child(ready[0]);
  if (from_child.read_line(std::chrono::seconds(5)).value_or("") != "ready") {
    const int code = wait_child(d->child_);
    d->child_ = -1;
    return Error{fmt::format("packet delayer in {} did not start (exit {}; its reason is on stderr)", netns, code),
                 "the kernel needs nfnetlink_queue (CONFIG_NETFILTER_NETLINK_QUEUE) and the run needs root"};
  }
  return d;
}

std::vector<std::string> PacketDelayer::rule(const char* op) const {
  return {"netns", "exec", netns_, "iptables", op, "OUTPUT", "-o", dev_, "-j", "NFQUEUE", "--queue-num",
          std::to_string(queue_)};
}

Result<bool> PacketDelayer::engage() {
  if (engaged_) return true;
  if (auto done = run_ip(rule("-A")); !done)
    return Error{done.error().message(), "apt-get install iptables (the NFQUEUE target)"};
  engaged_ = true;
  return true;
}

Result<bool> PacketDelayer::disengage() {
  if (!engaged_) return true;
  if (auto done = run_ip(rule("-D")); !done) return done.error();
  engaged_ = false;
  return true;
}

PacketDelayer::~PacketDelayer() {
  (void)disengage();
  if (stop_fd_ >= 0) close(stop_fd_);
  if (child_ > 0) (void)wait_child(child_);
}

}  // namespace railcheck::conform

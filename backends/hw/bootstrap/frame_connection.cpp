// A bootstrap connection's frame I/O (frame_connection.hpp).
#include "backends/hw/bootstrap/frame_connection.hpp"

#include <fmt/format.h>
#include <poll.h>

#include <span>

namespace railcheck::hw {
namespace {

constexpr std::size_t kReadChunk = 64 * 1024;

}  // namespace

void flush_connection(FrameConnection& c, ConnectionNews& news) {
  while (c.pending()) {
    auto r = send_some(c.fd, std::span(c.out).subspan(c.out_done), c.peer);
    if (!r) {
      news.lost = r.error().what;
      return;
    }
    if (r->would_block) return;
    c.out_done += r->done;
  }
  c.out.clear();
  c.out_done = 0;
}

ConnectionNews service_connection(FrameConnection& c, short revents, bootstrap::FrameAuth* opener) {
  ConnectionNews news;
  if (c.connecting) {
    if ((revents & (POLLOUT | POLLERR | POLLHUP)) == 0) return news;
    c.connecting = false;
    if (const int err = connect_errno(c.fd); err != 0) {
      news.connect_errno = err;
      return news;
    }
  }
  if (revents & (POLLIN | POLLHUP | POLLERR)) {
    std::uint8_t chunk[kReadChunk];
    for (;;) {
      auto r = recv_some(c.fd, chunk, c.peer);
      if (!r) {
        news.lost = r.error().what;
        break;
      }
      c.in.insert(c.in.end(), chunk, chunk + r->done);
      if (r->eof) news.lost = "connection closed by " + c.peer;
      if (r->eof || r->would_block) break;
    }
    // Frames that arrived before a close still count: decode them first.
    std::size_t used = 0;
    for (;;) {
      const auto rest = std::span<const std::uint8_t>(c.in).subspan(used);
      if (opener != nullptr) {
        auto o = opener->open(rest);
        if (!o) {
          news.lost = fmt::format("bad frame from {}: {}", c.peer, o.error().message());
          break;
        }
        if (!o.value()) break;
        news.frames.push_back(
            IncomingFrame{std::move(o.value()->frame), o.value()->sender, std::move(o.value()->refusal)});
        used += o.value()->consumed;
        continue;
      }
      auto d = bootstrap::decode_frame(rest);
      if (!d) {
        news.lost = fmt::format("bad frame from {}: {}", c.peer, d.error().message());
        break;
      }
      if (!d.value()) break;
      news.frames.push_back(IncomingFrame{std::move(d.value()->frame), 0, std::nullopt});
      used += d.value()->consumed;
    }
    c.in.erase(c.in.begin(), c.in.begin() + static_cast<std::ptrdiff_t>(used));
  }
  if (!news.lost && c.open()) flush_connection(c, news);
  return news;
}

std::vector<std::uint8_t> seal_frame(bootstrap::FrameAuth* sealer, std::uint32_t to, const bootstrap::Frame& f) {
  return sealer != nullptr ? sealer->seal(to, f) : bootstrap::encode_frame(f);
}

void close_if_done(FrameConnection& c) {
  if (c.close_when_flushed && !c.pending() && !c.connecting) c.fd.reset();
}

}  // namespace railcheck::hw

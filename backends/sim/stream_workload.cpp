#include "backends/sim/stream_workload.hpp"

#include <algorithm>

namespace railcheck::sim {

namespace {
constexpr std::uint64_t kSendMr = 1;
constexpr std::uint64_t kRecvMr = 2;
}  // namespace

StreamWorkload::StreamWorkload(std::uint32_t conn, const Workload& w, bool slow_receiver)
    : conn_(conn), w_(w), slow_(slow_receiver), seen_(w.messages, false) {}

UserRegMr StreamWorkload::send_region() const {
  return UserRegMr{MrId{kSendMr}, BufferLayout::send_base(conn_), w_.messages * BufferLayout::kSlot};
}
UserRegMr StreamWorkload::recv_region() const {
  return UserRegMr{MrId{kRecvMr}, BufferLayout::recv_base(conn_), w_.messages * BufferLayout::kSlot};
}

std::vector<UserIsend> StreamWorkload::sender_ready_posts() {
  std::vector<UserIsend> out;
  while (!stats_.connection_failed && next_send_ < w_.messages && next_send_ - completed_sends_ < w_.window) {
    const std::uint64_t m = next_send_++;
    out.push_back(UserIsend{
        RequestId{m},
        Sge{BufferLayout::send_addr(conn_, m), static_cast<std::uint32_t>(w_.message_bytes), MrId{kSendMr}}, m});
  }
  return out;
}

void StreamWorkload::on_send_complete(bool ok) {
  ++completed_sends_;
  if (ok) {
    ++stats_.sends_completed;
  } else {
    ++stats_.sends_failed;
  }
}

std::vector<UserIrecv> StreamWorkload::receiver_ready_posts(Nanos now) {
  std::vector<UserIrecv> out;
  if (hold_until_ && now < *hold_until_) return out;
  hold_until_.reset();
  while (!stats_.connection_failed && next_recv_buffer_ < w_.messages && outstanding_recv_requests_ < w_.window) {
    UserIrecv r;
    r.request = RequestId{next_recv_buffer_};
    const std::uint64_t group = std::min<std::uint64_t>(w_.recv_group, w_.messages - next_recv_buffer_);
    for (std::uint64_t i = 0; i < group; ++i) {
      const std::uint64_t m = next_recv_buffer_++;
      r.buffers.push_back(
          Sge{BufferLayout::recv_addr(conn_, m), static_cast<std::uint32_t>(w_.message_bytes), MrId{kRecvMr}});
      r.tags.push_back(m);
    }
    ++outstanding_recv_requests_;
    out.push_back(std::move(r));
    if (slow_) break;  // a slow receiver re-posts one request per hold
  }
  return out;
}

void StreamWorkload::on_recv_complete(Nanos now, RequestId req, bool ok,
                                      const std::unordered_map<std::uint64_t, std::uint64_t>& memory) {
  --outstanding_recv_requests_;
  const std::uint64_t first = req.value;
  const std::uint64_t group = std::min<std::uint64_t>(w_.recv_group, w_.messages - first);
  completed_recv_buffers_ += group;
  if (slow_ && w_.receiver_hold > Nanos{0}) hold_until_ = now + w_.receiver_hold;
  if (!ok) {
    stats_.recvs_failed += group;
    return;
  }
  for (std::uint64_t i = 0; i < group; ++i) {
    const std::uint64_t expected = first + i;
    auto it = memory.find(BufferLayout::recv_addr(conn_, expected));
    if (it == memory.end()) {
      ++stats_.empty;
      continue;
    }
    const std::uint64_t got = (it->second - BufferLayout::send_base(conn_)) / BufferLayout::kSlot;
    if (got < seen_.size() && seen_[got]) {
      ++stats_.duplicates;
    } else if (got != expected) {
      ++stats_.misplaced;
      if (got < seen_.size()) seen_[got] = true;
    } else {
      ++stats_.delivered;
      seen_[got] = true;
      stats_.delivery_times.push_back(now);
    }
  }
}

}  // namespace railcheck::sim

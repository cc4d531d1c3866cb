#include "backends/hw/cuda/host_proxy.hpp"

#include <fmt/format.h>

namespace railcheck::hw::cuda {

Result<bool> HostProxy::on_descriptor(const WriteDescriptor& d) {
  if (d.seq != next_seq_)
    return Error{fmt::format("descriptor seq {} where {} was next", d.seq, next_seq_),
                 "the producer skipped or repeated a ring slot"};
  next_seq_ = d.seq + SlotCodec::slots(d);
  if (d.expect > 0) {
    if (d.flag_slot >= flag_count_)
      return Error{fmt::format("descriptor {} names flag slot {} of {}", d.seq, d.flag_slot, flag_count_), ""};
    waiters_.push_back(Waiter{d.imm, d.flag_slot, d.seq + 1});
    if (service_ns_) waiters_.back().popped = std::chrono::steady_clock::now();
    auto ev = counter_.expect(d.imm, d.expect);
    if (!ev) {
      waiters_.pop_back();
      return ev.error();
    }
    if (ev.value() == imm::ImmEvent::OverArrival)
      return Error{fmt::format("imm {:#x}: more writes landed than the {} expected", d.imm, d.expect), ""};
    if (ev.value() == imm::ImmEvent::Completed) complete(d.imm);
  }
  if (d.inline_payload) return issuer_.post_inline(d, std::span<const std::uint8_t>(inline_bytes_.data(), d.length));
  return issuer_.post(d);
}

Result<bool> HostProxy::on_landed(std::uint32_t imm) {
  switch (counter_.on_arrival(imm)) {
    case imm::ImmEvent::Completed: complete(imm); break;
    case imm::ImmEvent::OverArrival:
      return Error{fmt::format("imm {:#x} landed more often than expected (a duplicate write)", imm), ""};
    default: break;
  }
  return true;
}

void HostProxy::complete(std::uint32_t imm) {
  // The newest waiter is the likeliest to complete next; ImmCounter refuses an imm that is still
  // open, so there is exactly one entry.
  auto it = waiters_.end();
  while (it != waiters_.begin() && (it - 1)->imm != imm) --it;
  if (it == waiters_.begin()) return;  // cannot happen: only an expected imm completes
  const Waiter w = *(it - 1);
  waiters_.erase(it - 1);
  // Release before raising: the GPU may reuse the value as soon as it sees the flag, and this
  // thread handles the reuse's descriptor only after this function returns anyway.
  (void)counter_.release(imm);
  raise_flag(flags_, w.flag_slot, w.flag_value);
  flags_raised_.fetch_add(1, std::memory_order_relaxed);
  if (service_ns_)
    service_ns_->push_back(static_cast<std::uint32_t>(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - w.popped).count()));
}

Result<std::size_t> HostProxy::run_once() {
  std::size_t work = 0;
  while (auto d = ring_.try_pop(&inline_bytes_)) {
    auto r = on_descriptor(*d);
    if (!r) return r.error();
    ++work;
    descriptors_.fetch_add(1, std::memory_order_relaxed);
  }
  landed_.clear();
  if (auto p = issuer_.poll(landed_); !p) return p.error();
  for (auto imm : landed_) {
    auto r = on_landed(imm);
    if (!r) return r.error();
    ++work;
  }
  if (!landed_.empty()) landed_count_.fetch_add(landed_.size(), std::memory_order_relaxed);
  return work;
}

void HostProxy::start(Idle idle) {
  running_.store(true, std::memory_order_release);
  thread_ = std::thread([this, idle] {
    while (running_.load(std::memory_order_acquire)) {
      auto r = run_once();
      if (!r) {
        std::lock_guard lock(mu_);
        error_ = r.error();
        return;
      }
      if (r.value() != 0) continue;
      if (idle == Idle::Yield) {
        std::this_thread::yield();
      } else {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();  // spin-wait hint: frees the sibling hyperthread, no syscall
#endif
      }
    }
  });
}

void HostProxy::stop() {
  running_.store(false, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

std::optional<Error> HostProxy::error() const {
  std::lock_guard lock(mu_);
  return error_;
}

ProxyStats HostProxy::stats() const {
  ProxyStats s;
  s.descriptors = descriptors_.load(std::memory_order_relaxed);
  s.landed = landed_count_.load(std::memory_order_relaxed);
  s.flags_raised = flags_raised_.load(std::memory_order_relaxed);
  return s;
}

}  // namespace railcheck::hw::cuda

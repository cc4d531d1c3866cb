#include "backends/hw/cuda/fabric_write_issuer.hpp"

#include <fmt/format.h>
#include <rdma/fi_errno.h>

#include <chrono>
#include <cstring>

namespace railcheck::hw::cuda {

namespace {
// tcp;ofi_rxm and shm progress manually: a full queue drains only when both CQs are read.
constexpr auto kGiveUp = std::chrono::seconds(10);
}  // namespace

Result<std::unique_ptr<FabricWriteIssuer>> FabricWriteIssuer::open(const std::string& provider, const std::string& node,
                                                                   const std::uint8_t* src, std::size_t src_len,
                                                                   std::uint8_t* dst, std::size_t dst_len,
                                                                   InlineWrites inline_writes) {
  std::unique_ptr<FabricWriteIssuer> w(new FabricWriteIssuer());
  w->name_ = "libfabric " + provider + " fi_writedata (loopback)";
  auto a = fabric::FabricRail::open(provider, node, kMaxInFlight);
  if (!a) return a.error();
  auto b = fabric::FabricRail::open(provider, node, kMaxInFlight);
  if (!b) return b.error();
  w->initiator_ = std::move(a).value();
  w->target_ = std::move(b).value();
  if (auto r = w->initiator_->insert_peer(w->target_->local()); !r) return r.error();
  if (auto r = w->target_->insert_peer(w->initiator_->local()); !r) return r.error();
  auto sm = w->initiator_->register_memory(const_cast<std::uint8_t*>(src), src_len);
  if (!sm) return sm.error();
  auto dm = w->target_->register_memory(dst, dst_len);
  if (!dm) return dm.error();
  auto stm = w->initiator_->register_memory(w->staging_.data(), w->staging_.size());
  if (!stm) return stm.error();
  w->src_mem_ = std::move(sm).value();
  w->dst_mem_ = std::move(dm).value();
  w->staging_mem_ = std::move(stm).value();
  w->src_ = src;
  w->src_len_ = src_len;
  w->dst_len_ = dst_len;
  w->inline_writes_ = inline_writes;
  w->free_ops_.reserve(kMaxInFlight);
  for (std::size_t i = kMaxInFlight; i-- > 0;) {
    w->ops_[i].staging = w->staging_.data() + i * kStagingBytes;
    w->free_ops_.push_back(&w->ops_[i]);
  }
  return w;
}

Result<bool> FabricWriteIssuer::check_range(const WriteDescriptor& d, std::size_t local_len) const {
  if ((!d.inline_payload && d.local_offset + d.length > local_len) || d.remote_offset + d.length > dst_len_)
    return Error{fmt::format("descriptor {}: {} bytes at {} -> {} fall outside the {}-byte source or {}-byte "
                             "destination region",
                             d.seq, d.length, d.inline_payload ? std::string("inline") : std::to_string(d.local_offset),
                             d.remote_offset, local_len, dst_len_),
                 ""};
  return true;
}

Result<FabricWriteIssuer::Op*> FabricWriteIssuer::take_op(const WriteDescriptor& d) {
  const auto give_up = std::chrono::steady_clock::now() + kGiveUp;
  while (free_ops_.empty()) {
    if (std::chrono::steady_clock::now() > give_up)
      return Error{fmt::format("descriptor {}: all {} write contexts still in flight after 10 s", d.seq, kMaxInFlight),
                   "the initiator's CQ reported no write complete (provider stalled?)"};
    if (auto r = drain(nullptr); !r) return r.error();
  }
  Op* op = free_ops_.back();
  free_ops_.pop_back();
  return op;
}

template <typename Post>
Result<bool> FabricWriteIssuer::post_retrying(const WriteDescriptor& d, Op* op, const char* call, Post&& post) {
  const auto give_up = std::chrono::steady_clock::now() + kGiveUp;
  for (;;) {
    const ssize_t rc = post();
    if (rc == 0) return true;
    if (rc != -FI_EAGAIN || std::chrono::steady_clock::now() > give_up) {
      if (op) free_ops_.push_back(op);
      return Error{fmt::format("{} for descriptor {} failed: {}", call, d.seq, fi_strerror(static_cast<int>(-rc))),
                   rc == -FI_EAGAIN ? "the provider refused it for 10 s (queue never drained)" : ""};
    }
    ++eagain_retries_;
    if (auto r = drain(nullptr); !r) return r;
  }
}

// No local completion comes for an inject: the write is ours no longer once the call returned.
Result<bool> FabricWriteIssuer::inject(const WriteDescriptor& d, const void* bytes) {
  auto r = post_retrying(d, nullptr, "fi_inject_writedata", [&] {
    return initiator_->inject_write(bytes, d.length, d.imm, dst_mem_.base + d.remote_offset, dst_mem_.key);
  });
  if (r) ++injected_;
  return r;
}

Result<bool> FabricWriteIssuer::post(const WriteDescriptor& d) {
  if (auto r = check_range(d, src_len_); !r) return r;
  if (d.length == 0 && initiator_->zero_length_write_injected()) return inject(d, nullptr);
  auto op = take_op(d);
  if (!op) return op.error();
  return post_retrying(d, op.value(), "fi_writedata", [&] {
    return initiator_->write(src_ + d.local_offset, d.length, src_mem_.desc, d.imm, dst_mem_.base + d.remote_offset,
                             dst_mem_.key, &op.value()->ctx);
  });
}

Result<bool> FabricWriteIssuer::post_inline(const WriteDescriptor& d, std::span<const std::uint8_t> bytes) {
  if (bytes.size() != d.length || d.length > kStagingBytes)
    return Error{fmt::format("descriptor {}: {} inline bytes handed over for a length of {} (at most {})", d.seq,
                             bytes.size(), d.length, kStagingBytes),
                 ""};
  if (auto r = check_range(d, 0); !r) return r;
  if ((d.length == 0 && initiator_->zero_length_write_injected()) ||
      (inline_writes_ == InlineWrites::InjectWhereAllowed && d.length <= initiator_->inject_size()))
    return inject(d, bytes.data());
  auto op = take_op(d);
  if (!op) return op.error();
  if (!bytes.empty()) std::memcpy(op.value()->staging, bytes.data(), bytes.size());
  auto r = post_retrying(d, op.value(), "fi_writedata (staged inline)", [&] {
    return initiator_->write(op.value()->staging, d.length, staging_mem_.desc, d.imm, dst_mem_.base + d.remote_offset,
                             dst_mem_.key, &op.value()->ctx);
  });
  if (r) ++staged_;
  return r;
}

// Reads both CQs: the initiator's local completions free their Op, the target's remote-CQ-data
// completions are landings (kept in `pending_` when called from post()).
Result<bool> FabricWriteIssuer::drain(std::vector<std::uint32_t>* landed) {
  for (;;) {
    auto n = initiator_->poll(batch_);
    if (!n) return n.error();
    for (std::size_t i = 0; i < n.value(); ++i) {
      const auto& c = batch_[i];
      if (c.error != 0)
        return Error{fmt::format("a write failed at the initiator: {} ({})", fi_strerror(c.error), c.error_text), ""};
      if (c.context) free_ops_.push_back(reinterpret_cast<Op*>(c.context));
      ++local_completions_;
    }
    if (n.value() == 0) break;
  }
  for (;;) {
    auto n = target_->poll(batch_);
    if (!n) return n.error();
    for (std::size_t i = 0; i < n.value(); ++i) {
      const auto& c = batch_[i];
      if (c.error != 0)
        return Error{fmt::format("a write failed at the target: {} ({})", fi_strerror(c.error), c.error_text), ""};
      if ((c.flags & FI_REMOTE_CQ_DATA) == 0) continue;
      const auto imm = static_cast<std::uint32_t>(c.data);
      if (landed) landed->push_back(imm);
      else pending_.push_back(imm);
    }
    if (n.value() == 0) break;
  }
  return true;
}

Result<bool> FabricWriteIssuer::poll(std::vector<std::uint32_t>& landed) {
  landed.insert(landed.end(), pending_.begin(), pending_.end());
  pending_.clear();
  return drain(&landed);
}

}  // namespace railcheck::hw::cuda

#include "backends/hw/cuda/fabric_write_issuer.hpp"

#include <rdma/fi_errno.h>

#include <chrono>
#include <fmt/format.h>

namespace railcheck::hw::cuda {

Result<std::unique_ptr<FabricWriteIssuer>> FabricWriteIssuer::open(const std::string& provider, const std::string& node,
                                                                   const std::uint8_t* src, std::size_t src_len,
                                                                   std::uint8_t* dst, std::size_t dst_len) {
  std::unique_ptr<FabricWriteIssuer> w(new FabricWriteIssuer());
  w->name_ = "libfabric " + provider + " fi_writedata (loopback)";
  auto a = fabric::FabricRail::open(provider, node, 256);
  if (!a) return a.error();
  auto b = fabric::FabricRail::open(provider, node, 256);
  if (!b) return b.error();
  w->initiator_ = std::move(a).value();
  w->target_ = std::move(b).value();
  if (auto r = w->initiator_->insert_peer(w->target_->local()); !r) return r.error();
  if (auto r = w->target_->insert_peer(w->initiator_->local()); !r) return r.error();
  auto sm = w->initiator_->register_memory(const_cast<std::uint8_t*>(src), src_len);
  if (!sm) return sm.error();
  auto dm = w->target_->register_memory(dst, dst_len);
  if (!dm) return dm.error();
  w->src_mem_ = std::move(sm).value();
  w->dst_mem_ = std::move(dm).value();
  w->src_ = src;
  w->src_len_ = src_len;
  w->dst_len_ = dst_len;
  return w;
}

FabricWriteIssuer::Op* FabricWriteIssuer::take_op() {
  if (free_ops_.empty()) {
    ops_.push_back(std::make_unique<Op>());
    return ops_.back().get();
  }
  Op* op = free_ops_.back();
  free_ops_.pop_back();
  return op;
}

Result<bool> FabricWriteIssuer::post(const WriteDescriptor& d) {
  if (d.local_offset + d.length > src_len_ || d.remote_offset + d.length > dst_len_)
    return Error{fmt::format("descriptor {}: {} bytes at {} -> {} fall outside the {}-byte source or {}-byte "
                             "destination region",
                             d.seq, d.length, d.local_offset, d.remote_offset, src_len_, dst_len_),
                 ""};
  Op* op = take_op();
  // tcp;ofi_rxm and shm progress manually: a full queue drains only when both CQs are read.
  const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  for (;;) {
    const ssize_t rc = initiator_->write(src_ + d.local_offset, d.length, src_mem_.desc, d.imm,
                                         dst_mem_.base + d.remote_offset, dst_mem_.key, &op->ctx);
    if (rc == 0) return true;
    if (rc != -FI_EAGAIN || std::chrono::steady_clock::now() > give_up) {
      free_ops_.push_back(op);
      return Error{fmt::format("fi_writedata for descriptor {} failed: {}", d.seq, fi_strerror(static_cast<int>(-rc))),
                   rc == -FI_EAGAIN ? "the provider refused it for 10 s (queue never drained)" : ""};
    }
    ++eagain_retries_;
    if (auto r = drain(nullptr); !r) return r;
  }
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

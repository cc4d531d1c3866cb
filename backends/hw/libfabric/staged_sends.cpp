#include "backends/hw/libfabric/staged_sends.hpp"

#include <cstring>

#include "engine/core/engine_assert.hpp"

namespace railcheck::fabric {

StagedSends::StagedSends(std::size_t slots, std::size_t slot_bytes)
    : slot_bytes_(slot_bytes), slots_(slot_bytes == 0 ? 0 : slots) {}

std::optional<const std::byte*> StagedSends::stage(RequestId request, const void* data, std::size_t size) {
  if (!fits(size) || in_use_ == slots_.size()) return std::nullopt;
  // Not zeroed: untouched pages of a large arena cost no memory.
  if (!arena_) arena_ = std::make_unique_for_overwrite<std::byte[]>(arena_bytes());
  std::size_t i = 0;
  while (slots_[i].state != SlotState::Free) ++i;  // in_use_ < size: one is free
  slots_[i] = Slot{SlotState::Posted, request};
  ++in_use_;
  std::byte* copy = arena_.get() + i * slot_bytes_;
  if (size > 0) std::memcpy(copy, data, size);
  return copy;
}

std::optional<std::size_t> StagedSends::slot_at(std::uint64_t addr) const {
  if (!arena_) return std::nullopt;
  const auto base = reinterpret_cast<std::uint64_t>(arena_.get());
  if (addr < base || addr >= base + arena_bytes()) return std::nullopt;
  const std::uint64_t off = addr - base;
  // A WR names its slot's first byte: anything else is not a copy made here.
  if (!RAILCHECK_ASSERT(off % slot_bytes_ == 0, "a staged send's WR starts at its slot")) return std::nullopt;
  return static_cast<std::size_t>(off / slot_bytes_);
}

std::optional<RequestId> StagedSends::sent_locally(std::uint64_t addr) {
  const auto i = slot_at(addr);
  if (!i || slots_[*i].state != SlotState::Posted) return std::nullopt;
  slots_[*i].state = SlotState::Reported;
  return slots_[*i].request;
}

StagedSends::Outcome StagedSends::completed(RequestId request) {
  if (in_use_ == 0) return Outcome::NotStaged;
  for (Slot& s : slots_) {
    if (s.state == SlotState::Free || s.request != request) continue;
    const Outcome o = s.state == SlotState::Reported ? Outcome::AlreadyReported : Outcome::ReportNow;
    s = Slot{};
    --in_use_;
    return o;
  }
  return Outcome::NotStaged;
}

}  // namespace railcheck::fabric

#include "engine/imm/imm_counter.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "engine/core/engine_assert.hpp"

namespace railcheck::imm {

const char* to_string(ImmEvent e) {
  switch (e) {
    case ImmEvent::Waiting: return "waiting";
    case ImmEvent::Held: return "held";
    case ImmEvent::Completed: return "completed";
    case ImmEvent::OverArrival: return "over-arrival";
  }
  return "?";
}

Result<ImmEvent> ImmCounter::expect(std::uint32_t imm, std::uint32_t count) {
  if (count == 0)
    return Error{fmt::format("expect(imm {:#x}, 0): an expectation of zero writes never fires", imm),
                 "expect at least one write, or do not wait at all"};
  Slot& s = slots_[imm];
  if (s.state != SlotState::Holding)
    return Error{fmt::format("expect(imm {:#x}): the value is {}", imm,
                             s.state == SlotState::Open ? "already awaited" : "retired and not released"),
                 "give each concurrent transfer its own immediate value"};
  if (s.arrived > count) {
    over_arrivals_ += s.arrived - count;
    s.state = SlotState::Retired;
    return ImmEvent::OverArrival;
  }
  s.expected = count;
  RAILCHECK_ASSERT(s.arrived <= s.expected, "an expectation set on a held value covers what already arrived");
  if (s.arrived == count) {
    s.state = SlotState::Retired;
    return ImmEvent::Completed;
  }
  s.state = SlotState::Open;
  return ImmEvent::Waiting;
}

ImmEvent ImmCounter::on_arrival(std::uint32_t imm) {
  Slot& s = slots_[imm];
  switch (s.state) {
    case SlotState::Holding: ++s.arrived; return ImmEvent::Held;
    case SlotState::Retired: ++over_arrivals_; return ImmEvent::OverArrival;
    case SlotState::Open: break;
  }
  RAILCHECK_ASSERT(s.arrived < s.expected, "an open value has had fewer writes than it awaits");
  if (++s.arrived < s.expected) return ImmEvent::Waiting;
  s.state = SlotState::Retired;
  RAILCHECK_ASSERT(s.arrived == s.expected, "a value completes at exactly the count it awaited");
  return ImmEvent::Completed;
}

Result<bool> ImmCounter::release(std::uint32_t imm) {
  auto it = slots_.find(imm);
  if (it == slots_.end() || it->second.state != SlotState::Retired)
    return Error{fmt::format("release(imm {:#x}): the value has not completed", imm),
                 "release a value only after its expectation fired"};
  slots_.erase(it);
  return true;
}

bool ImmCounter::completed(std::uint32_t imm) const {
  auto it = slots_.find(imm);
  return it != slots_.end() && it->second.state == SlotState::Retired;
}

std::uint32_t ImmCounter::arrived(std::uint32_t imm) const {
  auto it = slots_.find(imm);
  return it == slots_.end() ? 0 : it->second.arrived;
}

std::vector<ImmShortfall> ImmCounter::audit() const {
  std::vector<ImmShortfall> out;
  for (const auto& [imm, s] : slots_)
    if (s.state != SlotState::Retired) out.push_back({imm, s.expected, s.arrived});
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.imm < b.imm; });
  return out;
}

}  // namespace railcheck::imm

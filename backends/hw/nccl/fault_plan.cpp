#include "backends/hw/nccl/fault_plan.hpp"

#include <fmt/format.h>

#include <charconv>

namespace railcheck::nccl {
namespace {

constexpr std::string_view kForms =
    "cut-primary-after-msgs=N or cut-primary-after-ms=T, optionally followed by ,comms=K";

Result<std::uint64_t> parse_count(std::string_view text, std::string_view whole, std::string_view what) {
  std::uint64_t v = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc{} || ptr != end)
    return Error{fmt::format("{}={}: {} '{}' is not a whole number", kFaultVariable, whole, what, text),
                 std::string(kForms)};
  return v;
}

}  // namespace

Result<std::optional<FaultPlan>> parse_fault_plan(std::string_view text) {
  if (text.empty()) return std::optional<FaultPlan>{};
  FaultPlan plan;
  std::string_view rule = text;
  if (const auto comma = text.find(','); comma != std::string_view::npos) {
    rule = text.substr(0, comma);
    const std::string_view rest = text.substr(comma + 1);
    constexpr std::string_view kComms = "comms=";
    if (rest.rfind(kComms, 0) != 0)
      return Error{fmt::format("{}={}: unknown option '{}'", kFaultVariable, text, rest), std::string(kForms)};
    auto k = parse_count(rest.substr(kComms.size()), text, "comms");
    if (!k) return k.error();
    if (k.value() == 0 || k.value() > 1'000'000)
      return Error{fmt::format("{}={}: comms must be 1 .. 1000000", kFaultVariable, text), std::string(kForms)};
    plan.comms = static_cast<std::uint32_t>(k.value());
  }
  constexpr std::string_view kMsgs = "cut-primary-after-msgs=";
  constexpr std::string_view kMs = "cut-primary-after-ms=";
  std::string_view number;
  if (rule.rfind(kMsgs, 0) == 0) {
    plan.trigger = FaultTrigger::AfterMessages;
    number = rule.substr(kMsgs.size());
  } else if (rule.rfind(kMs, 0) == 0) {
    plan.trigger = FaultTrigger::AfterMillis;
    number = rule.substr(kMs.size());
  } else {
    return Error{fmt::format("{}={}: unknown fault '{}'", kFaultVariable, text, rule), std::string(kForms)};
  }
  auto n = parse_count(number, text, "the threshold");
  if (!n) return n.error();
  if (plan.trigger == FaultTrigger::AfterMessages && n.value() == 0)
    return Error{fmt::format("{}={}: the message count must be >= 1", kFaultVariable, text), std::string(kForms)};
  plan.threshold = n.value();
  return std::optional<FaultPlan>{plan};
}

std::string describe(const FaultPlan& plan) {
  const std::string scope = plan.comms == 0 ? "every send comm" : fmt::format("the first {} send comms", plan.comms);
  if (plan.trigger == FaultTrigger::AfterMessages)
    return fmt::format("cut the primary rail after {} messages on {}", plan.threshold, scope);
  return fmt::format("cut the primary rail {} ms after connect on {}", plan.threshold, scope);
}

bool FaultClock::due(std::uint64_t messages, std::uint64_t elapsed_ms, const std::function<bool()>& standbys_ready) {
  if (fired_) return false;
  const std::uint64_t seen = plan_.trigger == FaultTrigger::AfterMessages ? messages : elapsed_ms;
  if (seen < plan_.threshold) return false;
  if (standbys_ready && !standbys_ready()) return false;
  fired_ = true;
  return true;
}

}  // namespace railcheck::nccl

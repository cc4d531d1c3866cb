#include "models/fault_profile.hpp"

#include <algorithm>

namespace railcheck {

std::vector<LinkChange> expand_link_changes(const FaultProfile& p) {
  std::vector<LinkChange> out;
  for (const auto& d : p.downs) {
    out.push_back({d.at, d.link, false});
    if (d.until) out.push_back({*d.until, d.link, true});
  }
  for (const auto& f : p.flaps) {
    for (std::uint32_t i = 0; i < f.count; ++i) {
      const Nanos down = f.start + f.period * static_cast<std::int64_t>(i);
      out.push_back({down, f.link, false});
      out.push_back({down + f.down_for, f.link, true});
    }
  }
  // Stable: changes at the same instant apply in the order the profile lists them, so every
  // driver ends in the same state (e.g. a link_down ending exactly when a flap starts).
  std::stable_sort(out.begin(), out.end(), [](const LinkChange& a, const LinkChange& b) { return a.at < b.at; });
  return out;
}

Nanos extra_latency(const FaultProfile& p, const LinkRef& link, Nanos t) {
  // Overlapping windows add up. `spread` is random per packet: drivers draw it from their own
  // seeded RNG, so this stays a pure function.
  Nanos extra{0};
  for (const auto& j : p.jitters)
    if (j.link == link && j.at <= t && t < j.until) extra += j.extra;
  return extra;
}

std::optional<Nanos> first_fault_time(const FaultProfile& p) {
  // Only outages count: jitter slows a link but never takes it down.
  std::optional<Nanos> first;
  const auto consider = [&](Nanos t) {
    if (!first || t < *first) first = t;
  };
  for (const auto& d : p.downs) consider(d.at);
  for (const auto& f : p.flaps)
    if (f.count > 0) consider(f.start);
  // A one-way cut is an outage too: nothing gets through in one direction.
  for (const auto& l : p.losses)
    if (l.probability >= 1) consider(l.at);
  return first;
}

std::optional<Nanos> first_benign_fault_time(const FaultProfile& p) {
  std::optional<Nanos> first;
  const auto consider = [&](Nanos t) {
    if (!first || t < *first) first = t;
  };
  for (const auto& j : p.jitters) consider(j.at);
  for (const auto& l : p.losses)
    if (l.probability < 1) consider(l.at);
  for (const auto& i : p.incasts) consider(i.at);
  for (const auto& s : p.stalls) consider(s.at);
  return first;
}

double one_way_loss(const FaultProfile& p, const LinkRef& link, Nanos t) {
  double worst = 0;
  for (const auto& l : p.losses)
    if (l.link == link && l.at <= t && t < l.until) worst = std::max(worst, l.probability);
  return worst;
}

std::optional<Nanos> stalled_until(const FaultProfile& p, std::uint32_t rank, Nanos t) {
  std::optional<Nanos> end;
  for (const auto& s : p.stalls)
    if (s.rank == rank && s.at <= t && t < s.at + s.for_) end = std::max(end.value_or(Nanos{0}), s.at + s.for_);
  return end;
}

}  // namespace railcheck

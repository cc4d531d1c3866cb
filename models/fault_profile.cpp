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
  std::stable_sort(out.begin(), out.end(), [](const LinkChange& a, const LinkChange& b) { return a.at < b.at; });
  return out;
}

Nanos extra_latency(const FaultProfile& p, const LinkRef& link, Nanos t) {
  Nanos extra{0};
  for (const auto& j : p.jitters)
    if (j.link == link && j.at <= t && t < j.until) extra += j.extra;
  return extra;
}

std::optional<Nanos> first_fault_time(const FaultProfile& p) {
  std::optional<Nanos> first;
  for (const auto& c : expand_link_changes(p))
    if (!c.up && (!first || c.at < *first)) first = c.at;
  return first;
}

}  // namespace railcheck

#include "backends/hw/verbs/gid_choice.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace railcheck::hw::verbs {

bool is_zero(const Gid& g) {
  return std::all_of(g.begin(), g.end(), [](std::uint8_t b) { return b == 0; });
}

bool is_ipv4_mapped(const Gid& g) {
  for (int i = 0; i < 10; ++i)
    if (g[i] != 0) return false;
  return g[10] == 0xff && g[11] == 0xff;
}

bool is_link_local(const Gid& g) {
  return g[0] == 0xfe && (g[1] & 0xc0) == 0x80;
}

std::string format_gid(const Gid& g) {
  std::string s;
  for (std::size_t i = 0; i < g.size(); i += 2) {
    if (i) s += ':';
    s += fmt::format("{:02x}{:02x}", g[i], g[i + 1]);
  }
  return s;
}

std::optional<GidEntry> choose_gid(std::span<const GidEntry> table, bool ethernet) {
  // Lower rank is better; ties go to the lower index (the order the kernel filled the table).
  auto rank = [ethernet](const GidEntry& e) -> int {
    if (is_zero(e.gid)) return -1;
    if (!ethernet) return e.type == GidType::Ib ? (e.index == 0 ? 0 : 1) : -1;
    if (e.type == GidType::RoceV2 && is_ipv4_mapped(e.gid)) return 0;
    if (e.type == GidType::RoceV2 && !is_link_local(e.gid)) return 1;
    if (e.type == GidType::RoceV2) return 2;
    if (e.type == GidType::RoceV1 && !is_link_local(e.gid)) return 3;
    return -1;  // link-local RoCE v1 cannot leave the L2 segment
  };
  std::optional<GidEntry> best;
  int best_rank = 1 << 30;
  for (const auto& e : table) {
    int r = rank(e);
    if (r < 0) continue;
    if (r < best_rank || (r == best_rank && best && e.index < best->index)) {
      best = e;
      best_rank = r;
    }
  }
  return best;
}

}  // namespace railcheck::hw::verbs

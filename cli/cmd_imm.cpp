// railcheck imm check | transfer: the ImmCounter invariants over every arrival order
// (verify/imm), and one WRITE_IMM transfer on SimGrid (backends/sim/imm).
#include <fmt/format.h>

#include <cstdio>

#include "backends/sim/imm/imm_transfer_sim.hpp"
#include "cli/cli_output.hpp"
#include "cli/commands.hpp"
#include "verify/imm/arrival_enumerator.hpp"

namespace railcheck::cli {
int cmd_imm_check(const ImmOptions& o) {
  auto policy = parse_replay_policy(o.policy);
  if (!policy) return bad_input("imm", {fmt::format("--policy '{}'", o.policy), "use naive, probe or resync"});
  auto r = imm::check_every_order({o.writes, *policy, !o.no_failover});
  if (!r) return bad_input("imm", r.error());
  std::printf("%s", r->summary().c_str());
  return r->clean() ? kExitOk : kExitViolation;
}

int cmd_imm_transfer(const ImmOptions& o) {
  if (o.mib == 0 || o.mib > (1u << 20))
    return bad_input("imm", {fmt::format("--mib {}", o.mib), "use 1..1048576 (1 TiB)"});
  const std::uint64_t bytes = o.mib << 20;
  imm::WriteShape shape = imm::SingleWrite{0, 0, 0, bytes};
  constexpr std::uint64_t kMaxPages = 1u << 16;  // one WRITE_IMM piece each: bounded before allocating
  if (o.page_kib > 0) {
    if (o.page_kib > (o.mib << 10))
      return bad_input("imm", {fmt::format("--page-kib {} is larger than the transfer (--mib {})", o.page_kib, o.mib),
                               "use a page no larger than the transfer"});
    if ((o.mib << 10) % o.page_kib != 0)
      return bad_input("imm", {fmt::format("--page-kib {} does not divide the transfer (--mib {})", o.page_kib, o.mib),
                               "use a page size that divides the transfer, e.g. a power of two"});
    if ((o.mib << 10) / o.page_kib > kMaxPages)
      return bad_input("imm", {fmt::format("--mib {} --page-kib {} makes {} pages, more than {}", o.mib, o.page_kib,
                                           (o.mib << 10) / o.page_kib, kMaxPages),
                               "use larger pages or a smaller transfer"});
    // Pages in order on the source, reversed on the destination (a KV cache's scattered blocks).
    const std::uint64_t page = o.page_kib << 10, pages = bytes / page;
    imm::PagedWrite w{0, page, {}};
    for (std::uint64_t p = 0; p < pages; ++p) w.pages.push_back({p * page, (pages - 1 - p) * page});
    shape = w;
  }
  auto spec = sim::preset_transfer(o.preset, shape, imm::Regions{bytes, {bytes}});
  if (!spec) return bad_input("imm", spec.error());
  if (o.page_kib > 0) spec->shard_by = imm::ShardBy::Pages;
  if (o.transport == "rc")
    spec->transport = sim::ImmTransport::Rc;
  else if (o.transport == "srd")
    spec->transport = sim::ImmTransport::Srd;
  else if (!o.transport.empty())
    return bad_input("imm", {fmt::format("--transport '{}'", o.transport), "use rc or srd"});
  auto r = sim::simulate_imm_transfer(spec.value(), o.seed);
  if (!r) return bad_input("imm", r.error());
  std::printf("%s x%u %s, %llu MiB in %u WRITE_IMMs, seed %llu\n", spec->nic.name.c_str(), spec->nics_per_gpu,
              spec->transport == sim::ImmTransport::Rc ? "rc" : "srd", static_cast<unsigned long long>(o.mib),
              r->writes, static_cast<unsigned long long>(o.seed));
  std::printf("ImmCounter fired at %s (ideal %s, ratio %.3f); %u landings out of posting order\n",
              format_duration(r->finished).c_str(), format_duration(r->ideal).c_str(),
              to_seconds(r->finished) / to_seconds(r->ideal), r->out_of_order);
  for (const auto& gap : r->shortfalls)
    std::printf("never completes: imm %u expected %u, %u arrived\n", gap.imm, gap.expected, gap.arrived);
  return r->shortfalls.empty() ? kExitOk : kExitViolation;
}

}  // namespace railcheck::cli

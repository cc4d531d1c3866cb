// railcheck budget: the maxComms / maxRecvs budget with its per-resource breakdown, the seed's
// debug print (§16.6) extended with every resource (engine/budget/), and with --open the count of
// connections a modeled HCA really holds (backends/sim/sweep/device_fill.hpp, seed §15.4 exp. C).
#include <fmt/format.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>

#include "backends/sim/sweep/device_fill.hpp"
#include "cli/cli_output.hpp"
#include "cli/commands.hpp"
#include "models/preset_caps.hpp"
#include "models/scenario.hpp"

namespace railcheck::cli {
namespace {

using budget::BudgetResource;
using budget::kUnbounded;

// Caps and usage from a scenario or a preset, then every override on top.
Result<std::pair<budget::BudgetCaps, budget::BudgetUsage>> inputs(const BudgetOptions& o) {
  budget::BudgetCaps caps;
  budget::BudgetUsage usage;
  if (!o.scenario.empty()) {
    if (!o.preset.empty()) return Error{"give a scenario or --preset, not both", {}};
    auto sc = load_scenario_file(o.scenario);
    if (!sc) return sc.error();
    caps = budget::caps_from_preset(sc->topology.nic);
    caps.source = fmt::format("{} (nic {})", o.scenario, sc->topology.nic.name);
    usage = budget::usage_from_tunables(sc->engine, sc->topology.paths_per_conn);
  } else if (!o.preset.empty()) {
    auto nic = find_nic_preset(o.preset);
    if (!nic) return Error{fmt::format("--preset '{}': no such NIC preset", o.preset), "use " + nic_preset_names()};
    caps = budget::caps_from_preset(*nic);
  } else if (o.max_qp && o.max_cqe && o.max_qp_wr) {
    caps.source = "command line";
  } else {
    return Error{"no device caps", fmt::format("name --preset ({}) or a scenario, or give --max-qp, --max-cqe "
                                               "and --max-qp-wr",
                                               nic_preset_names())};
  }
  caps.max_qp = o.max_qp.value_or(caps.max_qp);
  caps.max_cqe = o.max_cqe.value_or(caps.max_cqe);
  caps.max_qp_wr = o.max_qp_wr.value_or(caps.max_qp_wr);
  caps.max_cq = o.max_cq.value_or(caps.max_cq);
  usage.channels = o.channels.value_or(usage.channels);
  usage.wr_per_conn = o.wr_per_conn.value_or(usage.wr_per_conn);
  usage.max_recvs = o.max_recvs.value_or(usage.max_recvs);
  usage.paths = o.paths.value_or(usage.paths);
  usage.two_sided_qps_per_path = o.two_sided_qps.value_or(usage.two_sided_qps_per_path);
  usage.one_sided_qps_per_path = o.one_sided_qps.value_or(usage.one_sided_qps_per_path);
  usage.comms_cap = o.cap.value_or(usage.comms_cap);
  if (o.cq_layout == "per-comm")
    usage.cq_layout = budget::CqLayout::PerComm;
  else if (!o.cq_layout.empty() && o.cq_layout != "device")
    return Error{fmt::format("--cq-layout '{}'", o.cq_layout), "use device or per-comm"};
  return std::pair{caps, usage};
}

std::string count(std::uint64_t n) { return n == kUnbounded ? "no limit" : fmt::format("{}", n); }

void print(const budget::BudgetCaps& caps, const budget::BudgetUsage& u, const budget::CommBudget& b,
           const std::optional<sweep::DeviceFill>& fill) {
  fmt::print("maxComms budget for {} (seed 15.2; unit: one peer over every channel, send + receive comm)\n",
             caps.source);
  fmt::print("  caps:  max_qp {}, max_cqe {} (per CQ), max_qp_wr {}, max_cq {}\n", caps.max_qp, caps.max_cqe,
             caps.max_qp_wr, caps.max_cq == 0 ? std::string("not known") : fmt::format("{}", caps.max_cq));
  fmt::print(
      "  usage: {} channels, {} WRs per comm, maxRecvs {}, {} paths, {} two-sided + {} one-sided QPs per path, "
      "CQ layout {}, cap {}\n",
      u.channels, u.wr_per_conn, u.max_recvs, u.paths, u.two_sided_qps_per_path, u.one_sided_qps_per_path,
      budget::cq_layout_name(u.cq_layout), u.comms_cap == 0 ? std::string("none") : fmt::format("{}", u.comms_cap));
  fmt::print("  CQEs per path: send comm {}, receive comm {}\n", b.send_cqes, b.recv_cqes);
  fmt::print("  {:<10} {:>10} {:>14} {:>12}  {}\n", "resource", "limit", "per conn", "connections", "made of");
  for (const auto& l : b.limits) {
    if (!l.checked) {
      fmt::print("  {:<10} {:>10} {:>14} {:>12}  {}\n", budget::resource_name(l.resource), "-", "-", "not checked",
                 l.note);
      continue;
    }
    fmt::print("  {:<10} {:>10} {:>14} {:>12}  {}\n", budget::resource_name(l.resource), l.cap, l.per_conn,
               count(l.conns), l.note);
  }
  if (b.binding == BudgetResource::Cap)
    fmt::print("  maxComms {} (the cap binds; the tightest resource allows {}: {:.1f}x headroom)\n", b.max_comms,
               count(b.resource_comms), b.headroom());
  else
    fmt::print("  maxComms {} (binding: {})\n", b.max_comms, budget::resource_name(b.binding));
  fmt::print("  maxRecvs {} (sets the send side's CQEs)\n", b.max_recvs);
  fmt::print("  seed's formula: qp_limit {}, cqe_limit {}, maxComms {}{}\n", b.seed.qp_limit, b.seed.cqe_limit,
             b.seed.max_comms, b.seed.max_comms > b.resource_comms ? "  <- more than the device holds" : "");
  if (fill) {
    fmt::print("  opened on a modeled HCA: {} connections ({} QPs, {} CQs), then {}\n", fill->connections, fill->qps,
               fill->cqs, fill->refusal.what);
    if (b.max_comms > fill->connections)
      fmt::print("  maxComms {} is more than the device holds\n", b.max_comms);
    else if (b.max_comms > 0)
      fmt::print("  margin: {:.2f}x (opened / maxComms)\n",
                 static_cast<double>(fill->connections) / static_cast<double>(b.max_comms));
  }
}

nlohmann::json to_json(const budget::BudgetCaps& caps, const budget::BudgetUsage& u, const budget::CommBudget& b,
                       const std::optional<sweep::DeviceFill>& fill) {
  auto num = [](std::uint64_t n) { return n == kUnbounded ? nlohmann::json(nullptr) : nlohmann::json(n); };
  nlohmann::json limits = nlohmann::json::object();
  for (const auto& l : b.limits)
    limits[std::string(budget::resource_name(l.resource))] = {
        {"cap", l.cap}, {"per_conn", l.per_conn}, {"connections", num(l.conns)}, {"checked", l.checked}};
  nlohmann::json j{{"caps",
                    {{"source", caps.source},
                     {"max_qp", caps.max_qp},
                     {"max_cqe", caps.max_cqe},
                     {"max_qp_wr", caps.max_qp_wr},
                     {"max_cq", caps.max_cq}}},
                   {"usage",
                    {{"channels", u.channels},
                     {"wr_per_conn", u.wr_per_conn},
                     {"max_recvs", u.max_recvs},
                     {"paths", u.paths},
                     {"two_sided_qps_per_path", u.two_sided_qps_per_path},
                     {"one_sided_qps_per_path", u.one_sided_qps_per_path},
                     {"cq_layout", budget::cq_layout_name(u.cq_layout)},
                     {"cap", u.comms_cap}}},
                   {"limits", limits},
                   {"max_comms", b.max_comms},
                   {"binding", budget::resource_name(b.binding)},
                   {"resource_comms", num(b.resource_comms)},
                   {"max_recvs", b.max_recvs},
                   {"seed_formula",
                    {{"qp_limit", b.seed.qp_limit}, {"cqe_limit", b.seed.cqe_limit}, {"max_comms", b.seed.max_comms}}}};
  if (fill) {
    j["opened"] = {{"connections", fill->connections},
                   {"refused_by", budget::resource_name(fill->refusal.resource)},
                   {"refusal", fill->refusal.what},
                   {"qps", fill->qps},
                   {"cqs", fill->cqs}};
    j["outcome"] = b.max_comms > fill->connections ? "over-budget" : "ok";
  }
  return j;
}

}  // namespace

int cmd_budget(const BudgetOptions& o) {
  auto in = inputs(o);
  if (!in) return bad_input("budget", in.error());
  const auto& [caps, usage] = in.value();
  auto b = budget::compute_budget(caps, usage);
  if (!b) return bad_input("budget", b.error());
  std::optional<sweep::DeviceFill> fill;
  // A scenario is how the sweep runs points of the maxComms study: it always opens.
  if (o.open || !o.scenario.empty()) {
    auto f = sweep::fill_device(caps, usage);
    if (!f) return bad_input("budget", f.error());
    fill = f.value();
  }
  if (o.json_path == "-") {
    std::cout << to_json(caps, usage, b.value(), fill).dump(2) << "\n";
  } else {
    print(caps, usage, b.value(), fill);
    if (!o.json_path.empty()) {
      std::ofstream out(o.json_path);
      out << to_json(caps, usage, b.value(), fill).dump(2) << "\n";
      out.close();
      if (out.fail()) return bad_input("budget", {fmt::format("cannot write {}", o.json_path), {}});
    }
  }
  // The budget over-promises when the device cannot hold what it would report to NCCL.
  return fill && b->max_comms > fill->connections ? kExitViolation : kExitOk;
}

}  // namespace railcheck::cli

// railcheck route weights|moe: build routing tables from a spec, print them with their byte
// balance, and time them on the SimGrid driver.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <numeric>

#include "backends/sim/routing/moe_sim.hpp"
#include "backends/sim/routing/route_spec.hpp"
#include "backends/sim/sim_run.hpp"
#include "cli/commands.hpp"
#include "engine/routing/moe_tables.hpp"
#include "engine/routing/weight_transfer_plan.hpp"

namespace railcheck::cli {
namespace {

using nlohmann::json;

constexpr double kGB = 1e9;

struct Spread {
  double min = 0, mean = 0, max = 0;
};

Spread spread(const std::vector<std::uint64_t>& v) {
  if (v.empty()) return {};
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const double sum = static_cast<double>(std::accumulate(v.begin(), v.end(), std::uint64_t{0}));
  return {static_cast<double>(*lo), sum / static_cast<double>(v.size()), static_cast<double>(*hi)};
}

std::string gb(const Spread& s) {
  return fmt::format("{:.2f} / {:.2f} / {:.2f} GB", s.min / kGB, s.mean / kGB, s.max / kGB);
}

int bad_input(const std::string& file, const Error& e) {
  // Loader errors already name the file (with the line); engine errors name only the parameter.
  const std::string msg = e.message();
  fmt::print(stderr, "railcheck: {}{}\n", msg.find(file) == std::string::npos ? file + ": " : "", msg);
  return kExitBadInput;
}

int write_json(const std::string& path, const json& j) {
  if (path.empty()) return kExitOk;
  const std::string text = j.dump(2) + "\n";
  if (path == "-") {
    std::cout << text;
    return kExitOk;
  }
  std::ofstream f(path);
  if (!f || !(f << text) || !f.flush()) {
    fmt::print(stderr, "railcheck: cannot write {}\n", path);
    return kExitBadInput;
  }
  return kExitOk;
}

void print_trainer_table(const routing::RolloutMetadata& r, const std::vector<routing::WeightMapping>& mappings,
                         const routing::WeightRoutingTable& table, std::uint32_t rank) {
  fmt::print("\nrouting table of trainer rank {}:\n", rank);
  for (std::size_t g = 0; g < table.groups.size(); ++g) {
    fmt::print("  mesh group {} ({} meshes)\n", g, table.groups[g].meshes.size());
    for (const routing::TransferTask& task : table.groups[g].per_trainer[rank]) {
      const routing::WeightMapping& m = mappings[task.mapping];
      std::string writes;
      for (const auto& w : task.writes)
        writes += fmt::format(
            " r{}:{}", w.rollout_gpu,
            w.bytes >= 1000000 ? fmt::format("{:.1f}MB", w.bytes / 1e6) : fmt::format("{:.1f}KB", w.bytes / 1e3));
      fmt::print("    gather {:<60} {}{}{}\n", r.params[m.weight].name, m.parts.size() > 1 ? "fuse " : "",
                 m.quantize ? "quantize " : "", writes.empty() ? " (gather only)" : "->" + writes);
    }
    fmt::print("    barrier\n");
  }
}

}  // namespace

int cmd_route_weights(const RouteOptions& o) {
  auto spec = sim::load_weights_spec(o.spec);
  if (!spec) return bad_input(o.spec, spec.error());
  if (!o.write_queues.empty()) {
    const auto q = sim::parse_write_queues(o.write_queues);
    if (!q)
      return bad_input(o.spec, Error{"--write-queues " + o.write_queues + ": expected per-peer or per-write", ""});
    spec.value().pipeline.write_queues = *q;
  }
  const sim::WeightsSpec& s = spec.value();
  const auto t0 = std::chrono::steady_clock::now();
  auto planned = routing::plan_weight_transfer(s.model, s.trainer, s.rollout, s.table_order);
  if (!planned) return bad_input(o.spec, planned.error());
  const double build_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const routing::WeightTransferPlan& plan = planned.value();
  const routing::WeightRoutingTable& table = plan.table;
  if (o.trainer_rank && *o.trainer_rank >= plan.trainer.ranks)
    return bad_input(
        o.spec,
        Error{fmt::format("--trainer {} but there are {} trainer ranks", *o.trainer_rank, plan.trainer.ranks), ""});

  std::size_t quantized = 0, fused = 0;
  for (const auto& m : plan.mappings) {
    quantized += m.quantize ? 1 : 0;
    fused += m.parts.size() > 1 ? 1 : 0;
  }
  const Spread sent = spread(table.sent_bytes), received = spread(table.received_bytes);
  fmt::print("route weights: {} ({}: {} trainer GPUs {} -> {} rollout GPUs {})\n", s.name, s.model.name,
             plan.trainer.ranks, routing::to_string(s.trainer.dtype), plan.rollout.gpus.size(),
             routing::to_string(s.rollout.dtype));
  fmt::print("  parameters      {} trainer tensors -> {} rollout weights ({} fused, {} quantized)\n",
             plan.trainer.params.size(), plan.mappings.size(), fused, quantized);
  std::string groups;
  for (const auto& g : table.groups) groups += fmt::format("{}{}", groups.empty() ? "" : " + ", g.meshes.size());
  fmt::print("  mesh groups     {} ({} meshes), a barrier after each\n", table.groups.size(), groups);
  fmt::print("  table           {} writes, {:.1f} GB, planned in {:.3f} s (metadata, matching, table)\n", table.writes,
             table.total_bytes / kGB, build_s);
  fmt::print("  sent/trainer    min/mean/max {}\n", gb(sent));
  fmt::print("  recv/rollout    min/mean/max {}\n", gb(received));

  json j{{"name", s.name},
         {"model", s.model.name},
         {"trainer_gpus", plan.trainer.ranks},
         {"rollout_gpus", plan.rollout.gpus.size()},
         {"total_bytes", table.total_bytes},
         {"writes", table.writes},
         {"mesh_groups", table.groups.size()},
         {"build_seconds", build_s},
         {"sent_bytes", table.sent_bytes},
         {"received_bytes", table.received_bytes}};
  if (!o.table_only) {
    const auto wire = sim::default_wire_mode();
    if (!wire) return bad_input(o.spec, wire.error());
    if (auto fits = sim::wire_mode_fits(wire.value(), s.pipeline); !fits) return bad_input(o.spec, fits.error());
    sim::TransferProgress progress;
    if (o.progress)
      progress.report = [](double sim_s, std::uint64_t landed, std::uint64_t writes, double wall_s) {
        fmt::print(stderr, "railcheck: sim {:.3f} s | {}/{} writes landed | wall {:.0f} s\n", sim_s, landed, writes,
                   wall_s);
      };
    sim::TransferTimeline timeline(0, 0, 0.005);
    const auto r =
        sim::simulate_weight_transfer({plan.trainer, plan.rollout, plan.mappings, table}, s.fabric, s.pipeline,
                                      wire.value(), progress, o.timeline_path.empty() ? nullptr : &timeline);
    if (!o.timeline_path.empty()) {
      const json t{{"name", s.name},
                   {"bin_seconds", timeline.bin_s},
                   {"nic_bytes_per_second", s.fabric.nic_gbps_per_gpu * 1e9 / 8},
                   {"simulated_seconds", r.total_s},
                   {"ideal_seconds", r.ideal_s},
                   {"stages", {"cap_wait", "h2d", "gather", "gpu_ops", "barrier"}},
                   {"stage_seconds", timeline.stage_s},
                   {"trainer_nic_tx_bytes", timeline.trainer_nic_tx},
                   {"rollout_nic_rx_bytes", timeline.rollout_nic_rx}};
      if (const int rc = write_json(o.timeline_path, t); rc != kExitOk) return rc;
    }
    fmt::print("  fabric          {} x {} per GPU = {:.0f} Gb/s; batch {} B; tmp cap {} B; write queues {}\n",
               s.nics_per_gpu, s.nic, s.fabric.nic_gbps_per_gpu, s.pipeline.batch_bytes, s.pipeline.max_tmp_bytes,
               sim::to_string(s.pipeline.write_queues));
    fmt::print("  simulated       {:.3f} s ({} tasks, {} writes); mesh groups end at", r.total_s, r.tasks, r.writes);
    for (double e : r.group_end_s) fmt::print(" {:.3f}", e);
    fmt::print(" s\n");
    fmt::print("  ideal           {:.3f} s (bytes / aggregate NIC bandwidth); busiest NIC {:.3f} s; gap x{:.2f}\n",
               r.ideal_s, r.nic_bound_s, r.ideal_s > 0 ? r.total_s / r.ideal_s : 0.0);
    fmt::print(
        "  per trainer GPU cap wait {:.3f}  h2d {:.3f}  gather {:.3f}  gpu ops {:.3f}  barrier {:.3f} s (mean)\n",
        r.mean_stage.cap_wait, r.mean_stage.h2d, r.mean_stage.gather, r.mean_stage.gpu_ops, r.mean_stage.barrier);
    fmt::print("  peak tmp memory {:.2f} GB on one trainer GPU\n", static_cast<double>(r.peak_tmp_bytes) / kGB);
    j["write_queues"] = sim::to_string(s.pipeline.write_queues);
    j["simulated_seconds"] = r.total_s;
    j["group_end_seconds"] = r.group_end_s;
    j["ideal_seconds"] = r.ideal_s;
    j["busiest_nic_seconds"] = r.nic_bound_s;
    j["peak_tmp_bytes"] = r.peak_tmp_bytes;
    j["stage_seconds"] = {{"cap_wait", r.mean_stage.cap_wait},
                          {"h2d", r.mean_stage.h2d},
                          {"gather", r.mean_stage.gather},
                          {"gpu_ops", r.mean_stage.gpu_ops},
                          {"barrier", r.mean_stage.barrier}};
  }
  if (o.trainer_rank) print_trainer_table(plan.rollout, plan.mappings, table, *o.trainer_rank);
  return write_json(o.json_path, j);
}

int cmd_route_moe(const RouteOptions& o) {
  auto spec = sim::load_moe_spec(o.spec);
  if (!spec) return bad_input(o.spec, spec.error());
  const sim::MoeSpec& s = spec.value();
  const routing::MoeCluster cluster{s.ranks, s.fabric.gpus_per_node, static_cast<std::uint32_t>(s.model.experts)};
  if (o.moe_rank && *o.moe_rank >= s.ranks)
    return bad_input(o.spec, Error{fmt::format("--rank {} but there are {} ranks", *o.moe_rank, s.ranks), ""});
  SeededRng rng(o.seed.value_or(s.seed));
  auto assignment = routing::draw_token_assignment(s.model, cluster, s.tokens_per_rank, rng);
  if (!assignment) return bad_input(o.spec, assignment.error());
  // A token is one hidden vector; FP8 carries one F32 scale per 128 elements (DeepEP's format).
  auto token_bytes = [&](routing::DType d) {
    return s.model.hidden * routing::bytes_per_element(d) + (d == routing::DType::FP8 ? s.model.hidden / 128 * 4 : 0);
  };
  const std::uint64_t dispatch_bytes = token_bytes(s.dispatch_dtype), combine_bytes = token_bytes(s.combine_dtype);
  const char* solver = o.simgrid ? "simgrid-full" : "fluid";
  fmt::print("route moe: {} ({}: {} ranks in {} nodes, {} experts, top-{}, {} tokens per rank, seed {}; solver {})\n",
             s.name, s.model.name, s.ranks, cluster.nodes(), s.model.experts, s.model.experts_per_token,
             s.tokens_per_rank, o.seed.value_or(s.seed), solver);
  fmt::print("  token bytes: dispatch {} ({}), combine {} ({}); NIC {:.0f} Gb/s per GPU, NVLink {:.0f} GB/s\n",
             dispatch_bytes, routing::to_string(s.dispatch_dtype), combine_bytes, routing::to_string(s.combine_dtype),
             s.fabric.nic_gbps_per_gpu, s.fabric.nvlink_gbytes_s);
  fmt::print("  {:<13} {:>14} {:>14} {:>11} {:>14} {:>14} {:>11}\n", "scheme", "dispatch RDMA", "dispatch NVL", "time",
             "combine RDMA", "combine NVL", "time");
  json j{{"name", s.name},
         {"model", s.model.name},
         {"ranks", s.ranks},
         {"tokens_per_rank", s.tokens_per_rank},
         {"solver", solver}};
  const auto wire = sim::default_wire_mode();
  if (!wire) return bad_input(o.spec, wire.error());
  std::uint64_t rdma[2] = {0, 0};
  for (routing::MoeScheme scheme : {routing::MoeScheme::Flat, routing::MoeScheme::Hierarchical}) {
    const auto tables = routing::build_moe_tables(assignment.value(), cluster, scheme);
    const auto t = sim::simulate_moe(tables, s.ranks, s.fabric, dispatch_bytes, combine_bytes,
                                     o.simgrid ? sim::MoeSolver::SimGrid : sim::MoeSolver::Fluid, wire.value());
    const double d_rdma = static_cast<double>(tables.dispatch.rdma_tokens * dispatch_bytes) / 1e6;
    const double d_nvl = static_cast<double>(tables.dispatch.nvlink_tokens * dispatch_bytes) / 1e6;
    const double c_rdma = static_cast<double>(tables.combine.rdma_tokens * combine_bytes) / 1e6;
    const double c_nvl = static_cast<double>(tables.combine.nvlink_tokens * combine_bytes) / 1e6;
    fmt::print("  {:<13} {:>11.1f} MB {:>11.1f} MB {:>8.1f} us {:>11.1f} MB {:>11.1f} MB {:>8.1f} us\n",
               routing::to_string(scheme), d_rdma, d_nvl, t.dispatch_s * 1e6, c_rdma, c_nvl, t.combine_s * 1e6);
    rdma[scheme == routing::MoeScheme::Flat ? 0 : 1] =
        tables.dispatch.rdma_tokens * dispatch_bytes + tables.combine.rdma_tokens * combine_bytes;
    j[std::string(routing::to_string(scheme))] = {
        {"dispatch_rdma_bytes", tables.dispatch.rdma_tokens * dispatch_bytes},
        {"dispatch_nvlink_bytes", tables.dispatch.nvlink_tokens * dispatch_bytes},
        {"combine_rdma_bytes", tables.combine.rdma_tokens * combine_bytes},
        {"combine_nvlink_bytes", tables.combine.nvlink_tokens * combine_bytes},
        {"dispatch_seconds", t.dispatch_s},
        {"combine_seconds", t.combine_s}};
    if (o.moe_rank && *o.moe_rank < s.ranks) {
      fmt::print("    rank {} sends ({}):", *o.moe_rank, routing::to_string(scheme));
      for (const auto& m : tables.dispatch.messages)
        if (m.from == *o.moe_rank)
          fmt::print(" [{}{} {} {} tok]", m.stage == 1 ? "fwd " : "", m.via == routing::Fabric::Rdma ? "rdma" : "nvl",
                     m.to, m.tokens);
      fmt::print("\n");
    }
  }
  if (rdma[0] > 0)
    fmt::print("  hierarchical sends {:.1f}% of flat's RDMA bytes\n", 100.0 * static_cast<double>(rdma[1]) / rdma[0]);
  if (const int rc = write_json(o.json_path, j); rc != kExitOk) return rc;
  // The property the hierarchy exists for; a table that breaks it is a bug worth an exit code.
  if (rdma[1] > rdma[0]) {
    fmt::print(stderr, "railcheck: hierarchical MoE sent more RDMA bytes than flat\n");
    return kExitViolation;
  }
  return kExitOk;
}

}  // namespace railcheck::cli

#include "backends/sim/routing/route_spec.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "models/nic_preset.hpp"
#include "models/toml_reader.hpp"

namespace railcheck::sim {
namespace {

constexpr std::string_view kDocs = "see docs/routing.md for the route spec format";

std::string preset_names() {
  std::string out;
  for (const auto& p : nic_presets()) out += fmt::format("{}{}", out.empty() ? "" : ", ", p.name);
  return out;
}

routing::ModelConfig read_model(TomlTable t) {
  t.allow_only({"name"});
  t.require({"name"});
  const std::string name = t.text("name").value_or("");
  if (auto c = routing::find_model_config(name)) return *c;
  if (t.present() && !name.empty())
    t.fail("name", fmt::format("a model ({})", routing::model_config_names()), fmt::format("\"{}\"", name));
  return {};
}

routing::DType read_dtype(TomlTable& t, std::string_view key, routing::DType fallback) {
  auto s = t.text(key);
  if (!s) return fallback;
  if (auto d = routing::parse_dtype(*s)) return *d;
  t.fail(key, "\"bf16\", \"fp8\" or \"f32\"", fmt::format("\"{}\"", *s));
  return fallback;
}

// [fabric]: the NIC preset gives the per-NIC rate and hop latency; a GPU has nics_per_gpu of them.
FabricParams read_fabric(TomlTable t, std::string& nic, std::uint32_t& nics_per_gpu) {
  t.allow_only({"nic", "nics_per_gpu", "nvlink_gbytes_s", "pcie_gbytes_s", "hbm_gbytes_s", "gpus_per_node"});
  FabricParams f;
  nic = t.text("nic").value_or(nic);
  auto preset = find_nic_preset(nic);
  if (!preset) {
    t.fail("nic", fmt::format("a NIC preset ({})", preset_names()), fmt::format("\"{}\"", nic));
    return f;
  }
  nics_per_gpu = t.whole<std::uint32_t>("nics_per_gpu", {1, 64}).value_or(nics_per_gpu);
  f.nic_gbps_per_gpu = preset->link_gbps * nics_per_gpu;
  f.nic_latency = preset->link_latency;
  f.nvlink_gbytes_s = t.number("nvlink_gbytes_s", {0.001, 1e5}).value_or(f.nvlink_gbytes_s);
  f.pcie_gbytes_s = t.number("pcie_gbytes_s", {0.001, 1e5}).value_or(f.pcie_gbytes_s);
  f.hbm_gbytes_s = t.number("hbm_gbytes_s", {0.001, 1e6}).value_or(f.hbm_gbytes_s);
  f.gpus_per_node = t.whole<std::uint32_t>("gpus_per_node", {1, 1024}).value_or(f.gpus_per_node);
  return f;
}

// `queues`: the write-queue model when the spec names none, which follows the NIC.
PipelineParams read_pipeline(TomlTable t, WriteQueues queues) {
  t.allow_only({"max_tmp_bytes", "gpu_op_overhead_us", "cpu_offload", "barrier_latency_ms", "batch_bytes",
                "write_queues", "release_gathered", "prefetch_h2d", "group_barrier", "table_order"});
  PipelineParams p;
  p.write_queues = queues;
  p.max_tmp_bytes = t.byte_size("max_tmp_bytes", {1}).value_or(p.max_tmp_bytes);
  p.gpu_op_overhead = t.micros("gpu_op_overhead_us", {0, 1e6}).value_or(p.gpu_op_overhead);
  p.cpu_offload = t.numeric("cpu_offload", "true or false", true).value_or(p.cpu_offload ? 1 : 0) != 0;
  p.barrier_latency = t.millis("barrier_latency_ms", {0, 1e6}).value_or(p.barrier_latency);
  p.batch_bytes = t.byte_size("batch_bytes", {0}).value_or(p.batch_bytes);
  p.release_gathered = t.numeric("release_gathered", "true or false", true).value_or(p.release_gathered ? 1 : 0) != 0;
  p.prefetch_h2d = t.numeric("prefetch_h2d", "true or false", true).value_or(p.prefetch_h2d ? 1 : 0) != 0;
  p.group_barrier = t.numeric("group_barrier", "true or false", true).value_or(p.group_barrier ? 1 : 0) != 0;
  if (auto name = t.text("write_queues")) {
    if (auto q = parse_write_queues(*name))
      p.write_queues = *q;
    else
      t.fail("write_queues", "\"per-peer\" or \"per-write\"", fmt::format("\"{}\"", *name));
  }
  return p;
}

// The TOML document and the common top-level keys; `sections` are the tables a kind allows.
template <typename Spec, typename ReadBody>
Result<Spec> load_spec(const std::string& path, std::initializer_list<std::string_view> sections, ReadBody body) {
  auto text = read_text_file(path, "route spec", "check the path; the shipped specs are in scenarios/routing/");
  if (!text) return text.error();
  auto doc = parse_toml(text.value(), path, kDocs);
  if (!doc) return doc.error();
  TomlReader reader(path);
  TomlTable root(reader, &doc.value(), "");
  std::vector<std::string_view> allowed{"name", "description"};
  allowed.insert(allowed.end(), sections);
  root.allow_only(allowed);
  Spec spec;
  spec.name = root.text("name").value_or(std::filesystem::path(path).stem().string());
  spec.description = root.text("description").value_or("");
  spec.model = read_model(root.table("model"));
  if (!root.table("model").present()) root.fail("model", "a [model] table with name = \"...\"", "nothing");
  body(root, spec);
  if (reader.failed()) return *reader.error();
  return spec;
}

}  // namespace

Result<WeightsSpec> load_weights_spec(const std::string& path) {
  return load_spec<WeightsSpec>(
      path, {"model", "trainer", "rollout", "fabric", "pipeline"}, [](TomlTable& root, WeightsSpec& s) {
        TomlTable tr = root.table("trainer");
        tr.allow_only({"pp", "fsdp", "ep", "dtype"});
        s.trainer.pp = tr.whole<std::uint32_t>("pp", {1, 1024}).value_or(s.trainer.pp);
        s.trainer.fsdp = tr.whole<std::uint32_t>("fsdp", {1, 4096}).value_or(s.trainer.fsdp);
        s.trainer.ep = tr.whole<std::uint32_t>("ep", {1, 1024}).value_or(s.trainer.ep);
        s.trainer.dtype = read_dtype(tr, "dtype", s.trainer.dtype);
        TomlTable ro = root.table("rollout");
        ro.allow_only({"replicas", "gpus_per_replica", "dtype"});
        s.rollout.replicas = ro.whole<std::uint32_t>("replicas", {1, 4096}).value_or(s.rollout.replicas);
        s.rollout.gpus_per_replica = ro.whole<std::uint32_t>("gpus_per_replica", {1, 1024}).value_or(1);
        s.rollout.dtype = read_dtype(ro, "dtype", s.rollout.dtype);
        s.fabric = read_fabric(root.table("fabric"), s.nic, s.nics_per_gpu);
        // RC queue pairs send a peer's writes one at a time in order; SRD (EFA) does not order
        // them, so there every write is its own flow unless the spec says otherwise.
        const auto preset = find_nic_preset(s.nic);
        s.pipeline = read_pipeline(root.table("pipeline"),
                                   preset && !preset->ordered ? WriteQueues::PerWrite : WriteQueues::PerPeer);
        TomlTable pipeline = root.table("pipeline");
        if (auto order = pipeline.text("table_order")) {
          if (*order == "model")
            s.table_order = routing::TableOrder::Model;
          else if (*order != "interleaved")
            pipeline.fail("table_order", "\"interleaved\" or \"model\"", fmt::format("\"{}\"", *order));
        }
        if (s.trainer.ranks() % s.fabric.gpus_per_node != 0)
          tr.fail_here(fmt::format("pp * fsdp * ep a multiple of fabric.gpus_per_node = {}", s.fabric.gpus_per_node),
                       fmt::format("{} trainer GPUs", s.trainer.ranks()),
                       "trainer and rollout GPUs sit on separate nodes");
      });
}

Result<MoeSpec> load_moe_spec(const std::string& path) {
  return load_spec<MoeSpec>(path, {"model", "moe", "fabric"}, [](TomlTable& root, MoeSpec& s) {
    TomlTable m = root.table("moe");
    m.allow_only({"ranks", "tokens_per_rank", "seed", "dispatch_dtype", "combine_dtype"});
    s.ranks = m.whole<std::uint32_t>("ranks", {1, 4096}).value_or(s.ranks);
    s.tokens_per_rank = m.whole<std::uint32_t>("tokens_per_rank", {1, 1 << 20}).value_or(s.tokens_per_rank);
    s.seed = m.whole<std::uint64_t>("seed", {0}).value_or(s.seed);
    s.dispatch_dtype = read_dtype(m, "dispatch_dtype", s.dispatch_dtype);
    s.combine_dtype = read_dtype(m, "combine_dtype", s.combine_dtype);
    s.fabric = read_fabric(root.table("fabric"), s.nic, s.nics_per_gpu);
  });
}

}  // namespace railcheck::sim

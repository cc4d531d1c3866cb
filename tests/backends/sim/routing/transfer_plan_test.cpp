// Issue 34's plan decisions (PipelineParams: release_gathered, prefetch_h2d, group_barrier):
// each one on a small DeepSeek-V3 world, the plan before them pinned to its old figures, the
// shipped Kimi-K2 and Qwen3 specs within 5 % of their bound, and the timeline that shows it.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <numeric>
#include <sstream>

#include "backends/sim/routing/weight_transfer_sim.hpp"
#include "cli/commands.hpp"
#include "engine/routing/weight_transfer_plan.hpp"

using namespace railcheck;
using namespace railcheck::routing;
using namespace railcheck::sim;

namespace {

// DeepSeek-V3 on 32 trainers (PP 2 x FSDP 2 x EP 8) into one FP8 replica of 16 GPUs: fused and
// quantized tensors, expert gathers across nodes beside the writes, two mesh groups.
struct PlanWorld {
  WeightTransferPlan plan;
  PlanWorld() {
    auto p = plan_weight_transfer(*find_model_config("deepseek-v3"), {.pp = 2, .fsdp = 2, .ep = 8},
                                  {.replicas = 1, .gpus_per_replica = 16, .dtype = DType::FP8});
    REQUIRE(p.ok());
    plan = std::move(p.value());
  }
  WeightTransferResult run(const PipelineParams& p, TransferTimeline* timeline = nullptr) const {
    return simulate_weight_transfer({plan.trainer, plan.rollout, plan.mappings, plan.table}, FabricParams{}, p,
                                    WireMode::Mailbox, {}, timeline);
  }
};

// Batches and cap of these worlds: a run of about a second here. SimGrid runs several times
// slower under the sanitizers (many times, on the thread contexts that tree used until
// 2026-11-29): there, eight times fewer tasks, under a cap that still binds (each decision's check
// held at 512 MiB / 2 GiB, measured 2026-11-26).
#ifdef RAILCHECK_SANITIZE
constexpr std::uint64_t kBatchBytes = 512ull << 20, kCapBytes = 2048ull << 20;
#else
constexpr std::uint64_t kBatchBytes = 64ull << 20, kCapBytes = 512ull << 20;
#endif

// The pipeline before issue 34.
PipelineParams before_issue_34() {
  PipelineParams p;
  p.batch_bytes = kBatchBytes;
  p.max_tmp_bytes = kCapBytes;
  p.release_gathered = false;
  p.prefetch_h2d = false;
  p.group_barrier = true;
  return p;
}

std::string shipped_spec(const char* name) {
  std::ifstream f(std::string(RAILCHECK_SOURCE_DIR) + "/scenarios/routing/" + name);
  std::stringstream text;
  text << f.rdbuf();
  return text.str();
}

// `text` as a spec file, run through `railcheck route weights`, its JSON.
nlohmann::json route_weights(const std::string& text, const char* tag) {
  const auto dir = std::filesystem::temp_directory_path();
  const std::string stem = "railcheck-plan-" + std::string(tag) + "-" + std::to_string(::getpid());
  const auto spec = dir / (stem + ".toml");
  const auto out = dir / (stem + ".json");
  std::ofstream(spec) << text;
  const int rc = cli::cmd_route_weights({.spec = spec.string(), .json_path = out.string()});
  std::filesystem::remove(spec);
  REQUIRE(rc == cli::kExitOk);
  std::ifstream f(out);
  auto j = nlohmann::json::parse(f);
  std::filesystem::remove(out);
  return j;
}

}  // namespace

TEST_CASE("freeing the gathered tensor once its quantized copy exists shortens the cap wait", "[sim][routing][plan]") {
  const PlanWorld w;
  PipelineParams held = before_issue_34();
  PipelineParams freed = held;
  freed.release_gathered = true;
  const auto a = w.run(held);
  const auto b = w.run(freed);
  CHECK(a.mean_stage.cap_wait > 0);
  CHECK(b.mean_stage.cap_wait < 0.8 * a.mean_stage.cap_wait);
  CHECK(b.total_s < a.total_s);
  CHECK(b.writes == a.writes);
}

TEST_CASE("a copy stream hides the next shard's H2D copy behind the gather", "[sim][routing][plan]") {
  const PlanWorld w;
  PipelineParams serial = before_issue_34();
  serial.release_gathered = true;  // room under the cap for a prefetch
  PipelineParams prefetch = serial;
  prefetch.prefetch_h2d = true;
  const auto a = w.run(serial);
  const auto b = w.run(prefetch);
  CHECK(a.mean_stage.h2d > 0);
  CHECK(b.mean_stage.h2d < 0.8 * a.mean_stage.h2d);
  CHECK(b.total_s <= a.total_s);
  CHECK(b.peak_tmp_bytes <= std::max<std::uint64_t>(prefetch.max_tmp_bytes, a.peak_tmp_bytes));
}

TEST_CASE("without the barrier between mesh groups no trainer waits for another", "[sim][routing][plan]") {
  const PlanWorld w;
  PipelineParams barrier = before_issue_34();
  barrier.release_gathered = true;
  barrier.prefetch_h2d = true;
  PipelineParams straight = barrier;
  straight.group_barrier = false;
  const auto a = w.run(barrier);
  const auto b = w.run(straight);
  CHECK(a.mean_stage.barrier > 0);
  CHECK(b.mean_stage.barrier == 0);
  // Not always shorter: here the trainers that go on early share their NICs with the others'
  // last writes, and the end moves by +0.2 % (measured 2026-11-26); on Kimi-K2, where three
  // trainers in four idled at the barrier, the end comes 2.3 % sooner (docs/routing.md).
  CHECK(b.total_s <= 1.01 * a.total_s);
  REQUIRE(b.group_end_s.size() == 2);
  CHECK(b.group_end_s[1] == Approx(b.total_s));
}

TEST_CASE("the timeline accounts for every stage second and every byte written", "[sim][routing][plan]") {
  const PlanWorld w;
  TransferTimeline timeline(0, 0, 0.002);
  const auto r = w.run(PipelineParams{.max_tmp_bytes = kCapBytes, .batch_bytes = kBatchBytes}, &timeline);
  const auto trainers = static_cast<double>(w.plan.trainer.ranks);
  const auto sum = [](const std::vector<std::vector<double>>& rows) {
    return std::accumulate(rows.begin(), rows.end(), 0.0,
                           [](double s, const auto& row) { return std::accumulate(row.begin(), row.end(), s); });
  };
  const double stage_means[kStages] = {r.mean_stage.cap_wait, r.mean_stage.h2d, r.mean_stage.gather,
                                       r.mean_stage.gpu_ops, r.mean_stage.barrier};
  for (std::size_t s = 0; s < kStages; ++s)
    CHECK(sum(timeline.stage_s[s]) / trainers == Approx(stage_means[s]).epsilon(1e-9).margin(1e-12));
  const double written = static_cast<double>(w.plan.table.total_bytes);
  CHECK(sum(timeline.rollout_nic_rx) == Approx(written).epsilon(1e-9));
  CHECK(sum(timeline.trainer_nic_tx) > written);  // the expert gathers cross the NICs too
  for (const auto& row : timeline.rollout_nic_rx) CHECK(row.size() * timeline.bin_s <= r.total_s + timeline.bin_s);
}

TEST_CASE("the plan before issue 34 gives the Qwen3-235B figures it gave before", "[routing][weights][scenario]") {
#ifdef RAILCHECK_SANITIZE
  WARN("not run here: 128 simulated trainers outlast the sanitizer tree's time limit");
  return;
#endif
  const std::string old_plan =
      "\n[pipeline]\nrelease_gathered = false\nprefetch_h2d = false\ngroup_barrier = true\ntable_order = \"model\"\n";
  std::string text = shipped_spec("qwen3-235b-128-to-32.toml");
  text.replace(text.find("[pipeline]\n"), 11, old_plan.substr(1));
  const auto j = route_weights(text, "qwen3-old");
  // `railcheck route weights` on the shipped spec, built from f9537d6 (before issue 34), 17
  // significant digits; a process of its own prints them to the bit. Here SimGrid's clock goes on
  // from the engines of the tests before, and an instant near a later clock keeps fewer bits:
  // measured 2026-11-26, after the other 23 cases of this binary, 3e-12 relative on the end and
  // 2e-12 s on a stage. A modelling change moves them by far more (one 4 KB write more on a
  // 400 Gb/s NIC: 8e-8 s).
  const double end = 0.6098762249955519;
  const auto same_instant = [](double x) { return Approx(x).epsilon(1e-10).margin(0); };
  const auto same_stage = [&](double x) { return Approx(x).epsilon(0).margin(1e-10 * end); };
  CHECK(j.at("simulated_seconds").get<double>() == same_instant(end));
  CHECK(j.at("group_end_seconds").at(0).get<double>() == same_instant(0.038908406051555926));
  const auto& st = j.at("stage_seconds");
  CHECK(st.at("cap_wait").get<double>() == same_stage(0.1390422521582368));
  CHECK(st.at("h2d").get<double>() == same_stage(0.08188142215999254));
  CHECK(st.at("gather").get<double>() == same_stage(0.29331618945421895));
  CHECK(st.at("gpu_ops").get<double>() == same_stage(0.0590221510719946));
  CHECK(st.at("barrier").get<double>() == same_stage(0.022310600743110615));
  CHECK(j.at("peak_tmp_bytes") == 1244659712);
}

TEST_CASE("route weights on the shipped Kimi-K2 spec lands within 5 % of the ideal bound",
          "[routing][weights][scenario]") {
  std::string text = shipped_spec("kimi-k2-256-to-128.toml");
#ifdef RAILCHECK_SANITIZE
  // The shipped run takes ~50 s optimised and several times that under the sanitizers.
  // Here Kimi-K2 goes from 128 trainers (FSDP 2 x PP 8 x EP 8: every parameter's H2D copy,
  // gather, fusion and quantization under the same 1 GiB cap) in 256 MiB batches to one FP8
  // replica of 16 rollout GPUs: an eighth of the bytes into an eighth of the NICs, so the same
  // 1.310 s bound, reached at x1.0017 with 0.40 s of cap wait and 0.46 s of gathers per trainer
  // (0.43 s of CPU optimised; measured 2026-11-26). With 256 trainers and one task per tensor it
  // took 187 s here.
  const auto set = [&text](const std::string& from, const std::string& to) {
    REQUIRE(text.find(from) != std::string::npos);
    text.replace(text.find(from), from.size(), to);
  };
  set("fsdp = 4\n", "fsdp = 2\n");
  set("replicas = 8\n", "replicas = 1\n");
  set("[pipeline]\n", "[pipeline]\nbatch_bytes = \"256MiB\"\n");
#endif
  const auto j = route_weights(text, "kimi");
  const double t = j.at("simulated_seconds").get<double>();
  const double ideal = j.at("ideal_seconds").get<double>();
  CHECK(ideal == Approx(1.31).epsilon(0.005));
  CHECK(t >= ideal);
  CHECK(t <= 1.05 * ideal);
  // With the cap of the seed (1 GiB): only a task larger than it (the 2.35 GB embedding) goes over.
  CHECK(j.at("peak_tmp_bytes").get<double>() < 2.5e9);
  CHECK(j.at("stage_seconds").at("barrier").get<double>() == 0);
}

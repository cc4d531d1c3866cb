// Where a log cannot show launch boundaries (NVLink-only communicators: NCCL 2.28 advances
// opCount only for launches with proxy ops), replay-sched must not call a divergence that follows
// from one guess at them. On the Flight Recorder recordings (scenarios/triage, real PyTorch 2.11
// runs, every operation at opCount 0, TUNING lines on rank 0 only) the healthy runs replay clean
// from their logs and the mismatched ones diverge.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli/commands.hpp"
#include "engine/plan/nccl_log_import.hpp"
#include "engine/plan/sched_replay.hpp"
#include "engine/plan/sched_verdict.hpp"
#include "support/test_files.hpp"

namespace railcheck::cli {
namespace {

namespace fs = std::filesystem;
using railcheck::test::source_path;

int replay_logs(const fs::path& dir) {
  ReplaySchedOptions o;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".log") o.inputs.push_back(e.path().string());
  std::sort(o.inputs.begin(), o.inputs.end());
  o.policies = {"nccl"};
  return cmd_replay_sched(o);
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST_CASE("replay-sched: the recorded PyTorch runs' logs give no false divergence", "[cli][plan]") {
  const fs::path triage = source_path("scenarios/triage");
  for (const char* healthy : {"healthy-r2", "healthy-r4", "healthy_uneven-r2", "p2p_cycle-r2"}) {
    INFO(healthy);
    CHECK(replay_logs(triage / healthy) == kExitOk);
  }
  for (const char* mismatched : {"op_mismatch-r2", "size_mismatch-r2"}) {
    INFO(mismatched);
    CHECK(replay_logs(triage / mismatched) == kExitViolation);
  }
}

TEST_CASE("replay-sched: a divergence that only one reading of uncertain launch boundaries has is inconclusive",
          "[cli][plan]") {
  // healthy-r2's logs without TUNING lines, rank 1's opCounts made to advance per operation: as
  // logged, rank 0 launches everything at once and rank 1 one operation at a time, and the
  // channels diverge; each operation its own launch, every rank agrees.
  const fs::path src = source_path("scenarios/triage/healthy-r2");
  const fs::path dir = fs::temp_directory_path() / "railcheck-boundaries";
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::regex tuning(R"([^\n]*(Bytes -> Algo|TUNING|Tuner)[^\n]*\n)");
  std::ofstream(dir / "nccl_rank0.log") << std::regex_replace(slurp(src / "nccl_rank0.log"), tuning, "");
  std::string rank1 = std::regex_replace(slurp(src / "nccl_rank1.log"), tuning, "");
  int n = 0;
  std::string out;
  std::size_t at = 0;
  for (std::size_t hit; (hit = rank1.find(": opCount 0 ", at)) != std::string::npos; at = hit + 12)
    out += rank1.substr(at, hit - at) + ": opCount " + std::to_string(n++) + " ";
  out += rank1.substr(at);
  std::ofstream(dir / "nccl_rank1.log") << out;
  REQUIRE(n >= 8);
  // The test means something only if the two readings really differ: as logged it diverges,
  // each operation its own launch it does not; replay-sched then calls it inconclusive.
  const std::vector<plan::LogFile> logs{{"nccl_rank0.log", slurp(dir / "nccl_rank0.log")},
                                        {"nccl_rank1.log", slurp(dir / "nccl_rank1.log")}};
  const auto nccl = plan::policy_by_name("nccl").value();
  for (const auto reading : {plan::LaunchReading::AsLogged, plan::LaunchReading::EachOperation}) {
    auto imported = plan::import_nccl_logs(logs, reading);
    REQUIRE(imported.ok());
    CHECK(imported->boundaries_uncertain);
    auto replayed = plan::replay(imported->input, nccl, plan::NcclVersion::V2_28);
    REQUIRE(replayed.ok());
    CHECK(replayed->violation() == (reading == plan::LaunchReading::AsLogged));
  }
  // The job completed (every log ends in Destroy COMPLETE), which the diverging reading cannot
  // explain: healthy. The same logs cut off before their end are a job that stopped: inconclusive.
  CHECK(replay_logs(dir) == kExitOk);
  // The engine decides it (the CLI prints): both readings imported, both replayed, judged.
  const auto judge_dir = [&] {
    const std::vector<plan::LogFile> files{{"nccl_rank0.log", slurp(dir / "nccl_rank0.log")},
                                           {"nccl_rank1.log", slurp(dir / "nccl_rank1.log")}};
    auto readings = plan::import_nccl_log_readings(files);
    REQUIRE(readings.ok());
    REQUIRE(readings->each_operation.has_value());
    auto judged =
        plan::replay_and_judge(readings->as_logged.input, &*readings->each_operation, nccl, plan::NcclVersion::V2_28);
    REQUIRE(judged.ok());
    CHECK(judged->show_each_operation);  // the first reading diverges: the report shows the other
    return judged->verdict.kind;
  };
  CHECK(judge_dir() == plan::SchedVerdict::Kind::Healthy);
  for (const char* rank : {"nccl_rank0.log", "nccl_rank1.log"}) {
    std::string text = slurp(dir / rank);
    std::ofstream(dir / rank) << std::regex_replace(text, std::regex(R"([^\n]*Destroy COMPLETE[^\n]*\n)"), "");
  }
  CHECK(replay_logs(dir) == kExitInconclusive);
  CHECK(judge_dir() == plan::SchedVerdict::Kind::Inconclusive);
}

}  // namespace
}  // namespace railcheck::cli

// railcheck align (cli/cmd_align.cpp) on every committed recording of real NCCL 2.28.9
// (scenarios/groundtruth/, issue 14): the 2.28 model must place every operation of every rank
// on the channels, in the plan and at the place NCCL did. Also its exit codes.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "cli/commands.hpp"
#include "engine/plan/alignment.hpp"
#include "support/test_files.hpp"
#include "tests/engine/plan/shipped_file.hpp"

namespace fs = std::filesystem;

namespace railcheck::cli {
namespace {

using railcheck::test::source_path;

int align(std::vector<std::string> inputs) {
  AlignOptions o;
  o.inputs = std::move(inputs);
  return cmd_align(o);
}

}  // namespace

TEST_CASE("align: every committed NCCL 2.28.9 recording aligns op by op with the 2.28 model", "[cli][plan][align]") {
  plan::AlignmentReport report;
  int workloads = 0;
  for (const auto& dir : fs::directory_iterator(source_path("scenarios/groundtruth"))) {
    if (!dir.is_directory()) continue;
    ++workloads;
    std::vector<plan::NamedText> traces, logs;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      const auto rel = fs::relative(f.path(), RAILCHECK_SOURCE_DIR).string();
      const auto name = f.path().filename().string();
      if (name.starts_with("railcheck-prof-")) traces.push_back({rel, plan::shipped_file(rel)});
      if (f.path().extension() == ".log") logs.push_back({rel, plan::shipped_file(rel)});
    }
    std::sort(logs.begin(), logs.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    auto run = plan::load_recorded_run(dir.path().filename().string(), traces, logs);
    REQUIRE(run.ok());
    auto ok = plan::align_run(run.value(), report);
    REQUIRE(ok.ok());
  }
  for (const auto& m : report.mismatches)
    UNSCOPED_INFO(m.workload << " rank " << m.rank << " call " << m.call << " " << m.what << ": " << m.rule);
  CHECK(workloads >= 15);
  CHECK(report.total.ops >= 988);
  CHECK(report.mismatches.empty());
  CHECK(report.by_func["Send"].ops >= 38);
  CHECK(report.by_func["AllGather"].ops >= 6);
  CHECK(align({source_path("scenarios/groundtruth")}) == kExitOk);
}

TEST_CASE("align: a recording NCCL did not make is a mismatch and bad input exits 2", "[cli][plan][align]") {
  const fs::path dir = "/tmp/railcheck-align-test";
  fs::remove_all(dir);
  fs::create_directories(dir);
  for (const auto& f : fs::directory_iterator(source_path("scenarios/groundtruth/coalesced_colls"))) {
    const auto name = f.path().filename().string();
    std::string text = plan::shipped_file("scenarios/groundtruth/coalesced_colls/" + name);
    // Move rank 1's last kernel-channel event from channel 1 to channel 0.
    if (name.ends_with("-r1.jsonl")) {
      const auto at = text.rfind("\"channel\":1}");
      REQUIRE(at != std::string::npos);
      text.replace(at, 12, "\"channel\":0}");
    }
    std::ofstream(dir / name) << text;
  }
  CHECK(align({dir.string()}) == kExitViolation);
  CHECK(align({"/nonexistent/recording"}) == kExitBadInput);
  std::ofstream(dir / "railcheck-prof-x-r0.jsonl") << "{\"ev\":\"comm\"}\n";
  CHECK(align({dir.string()}) == kExitBadInput);
  fs::remove_all(dir);
}

}  // namespace railcheck::cli

namespace railcheck::cli {

TEST_CASE("align --predict: the model's own algorithm, protocol, warps and channels match every recording",
          "[cli][plan][align]") {
  plan::AlignmentReport report;
  for (const auto& dir : fs::directory_iterator(source_path("scenarios/groundtruth"))) {
    if (!dir.is_directory()) continue;
    std::vector<plan::NamedText> traces, logs;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      const auto rel = fs::relative(f.path(), RAILCHECK_SOURCE_DIR).string();
      if (f.path().filename().string().starts_with("railcheck-prof-")) traces.push_back({rel, plan::shipped_file(rel)});
      if (f.path().extension() == ".log") logs.push_back({rel, plan::shipped_file(rel)});
    }
    auto run = plan::load_recorded_run(dir.path().filename().string(), traces, logs);
    REQUIRE(run.ok());
    REQUIRE(plan::align_run(run.value(), report, /*predict=*/true).ok());
  }
  for (const auto& m : report.mismatches)
    UNSCOPED_INFO(m.workload << " rank " << m.rank << " call " << m.call << " " << m.what << ": " << m.rule);
  CHECK(report.mismatches.empty());
  for (auto f : plan::kAlignFields) {
    INFO(plan::name(f));
    // Self copies show only their channel count (no proxy op, so no kernel-channel events).
    CHECK(report.by_field[f].ops >= (f == plan::AlignField::ChannelCount ? 100 : 900));
    CHECK(report.by_field[f].matched == report.by_field[f].ops);
  }
  AlignOptions o;
  o.inputs = {source_path("scenarios/groundtruth")};
  o.predict = true;
  CHECK(cmd_align(o) == kExitOk);
}

}  // namespace railcheck::cli

// align --predict from INIT+COLL logs (issue 27, "Done when": channels from logs with their TUNING
// lines removed): every recording's logs are cut to INIT and COLL lines (init_coll_log.hpp), so
// the model computes the tuner's tables from the topology INIT describes, and its algorithm,
// protocol, warps and channels must be NCCL's for every operation of every rank. NCCL_ALGO and
// NCCL_PROTO are not in INIT lines: runs that forced them get them from their env.txt, as
// `railcheck align` does (nccl228_algo_proto_env.hpp).
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>

#include "engine/plan/alignment.hpp"
#include "engine/plan/nccl228_algo_proto_env.hpp"
#include "support/test_files.hpp"
#include "tests/engine/plan/init_coll_log.hpp"
#include "tests/engine/plan/shipped_file.hpp"

namespace fs = std::filesystem;
using namespace railcheck::plan;

TEST_CASE(
    "align --predict from INIT+COLL logs: every recording matches on every field, forced NCCL_ALGO/PROTO from "
    "env.txt",
    "[cli][plan][align][groundtruth]") {
  AlignmentReport defaults, forced;
  int runs = 0, forced_runs = 0;
  for (const auto& dir : fs::directory_iterator(railcheck::test::source_path("scenarios/groundtruth"))) {
    if (!dir.is_directory()) continue;
    std::vector<NamedText> traces, logs;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      const auto rel = fs::relative(f.path(), RAILCHECK_SOURCE_DIR).string();
      if (f.path().filename().string().starts_with("railcheck-prof-")) traces.push_back({rel, shipped_file(rel)});
      if (f.path().extension() == ".log") logs.push_back({rel, init_coll_only(shipped_file(rel))});
    }
    std::sort(logs.begin(), logs.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
    const std::string name = dir.path().filename().string();
    const std::string env = shipped_file(fs::relative(dir.path() / "env.txt", RAILCHECK_SOURCE_DIR).string());
    const bool is_forced = env.find("NCCL_ALGO=") != std::string::npos || env.find("NCCL_PROTO=") != std::string::npos;
    auto run = load_recorded_run(name, traces, logs);
    REQUIRE(run.ok());
    std::vector<NamedLog> named;
    for (const auto& l : logs) named.push_back({l.name, l.text});
    auto applied = apply_algo_proto_env({}, named, NamedLog{"env.txt", env}, run->shape);
    REQUIRE(applied.ok());
    CHECK(applied->notes.size() == (is_forced ? 1u : 0u));
    REQUIRE(align_run(run.value(), is_forced ? forced : defaults, /*predict=*/true).ok());
    ++(is_forced ? forced_runs : runs);
  }
  for (const auto* r : {&defaults, &forced})
    for (const auto& m : r->mismatches)
      UNSCOPED_INFO(m.workload << " rank " << m.rank << " call " << m.call << " " << m.what << ": " << m.rule);
  CHECK(runs >= 19);
  CHECK(defaults.total.ops >= 5000);
  CHECK(defaults.mismatches.empty());
  CHECK(forced_runs >= 11);
  CHECK(forced.total.ops >= 2000);
  CHECK(forced.mismatches.empty());
  for (AlignField f : {AlignField::Algorithm, AlignField::Protocol, AlignField::Channels})
    CHECK(forced.by_field[f].ops > 0);
}

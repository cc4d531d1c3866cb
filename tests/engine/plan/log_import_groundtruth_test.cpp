// The COLL-log importer held against the recordings of real NCCL 2.28.9 (issue 14 item 6): for
// every workload, the launches it reads off rank0.log/rank1.log (opCount, and on rank 0 the
// TUNING lines) are the launches the profiler recorded, the TUNING lines give every rank-0
// collective NCCL's algorithm, protocol and channels, and the 2.28 replay of the logs alone puts
// every logged collective on the channels NCCL logged. Plus what the importer says when the log
// cannot tell launches apart.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <filesystem>

#include "engine/plan/groundtruth.hpp"
#include "engine/plan/nccl_log_import.hpp"
#include "engine/plan/sched_replay.hpp"
#include "tests/engine/plan/shipped_file.hpp"

using namespace railcheck::plan;
namespace fs = std::filesystem;

TEST_CASE("log import: every recording's launches, algorithms and channels come back from its logs",
          "[plan][log][groundtruth]") {
  int workloads = 0, logged = 0;
  for (const auto& dir : fs::directory_iterator(fs::path(RAILCHECK_SOURCE_DIR) / "scenarios" / "groundtruth")) {
    if (!dir.is_directory()) continue;
    ++workloads;
    const std::string name = dir.path().filename().string();
    INFO(name);
    const std::string base = "scenarios/groundtruth/" + name + "/";
    std::vector<LogFile> files;
    for (int r = 0; fs::exists(fs::path(RAILCHECK_SOURCE_DIR) / base / fmt::format("rank{}.log", r)); ++r)
      files.push_back(LogFile{fmt::format("rank{}.log", r), shipped_file(base + fmt::format("rank{}.log", r))});
    auto log = import_nccl_logs(files);
    REQUIRE(log.ok());
    bool has_colls = false;
    for (const auto& f : fs::directory_iterator(dir.path())) {
      const std::string fname = f.path().filename().string();
      if (!fname.starts_with("railcheck-prof-")) continue;
      auto truth = parse_truth_trace(shipped_file(base + fname), fname);
      REQUIRE(truth.ok());
      const auto& groups = log->input.ranks.at(static_cast<std::size_t>(truth->rank)).groups;
      // Same launches, same number of operations in each.
      REQUIRE(groups.size() == truth->group_first_plan.size());
      std::vector<std::size_t> per_launch(groups.size());
      for (const auto& c : truth->calls) ++per_launch[static_cast<std::size_t>(c.group)];
      for (std::size_t g = 0; g < groups.size(); ++g)
        CHECK(groups[g].colls.size() + groups[g].p2ps.size() == per_launch[g]);
      if (truth->rank != 0) continue;
      // Rank 0's collectives carry NCCL's algorithm, protocol and channel range from the TUNING
      // lines, in issue order.
      std::vector<const CollTask*> colls;
      for (const auto& g : groups)
        for (const auto& c : g.colls) colls.push_back(&c);
      std::size_t k = 0;
      for (const auto& call : truth->calls) {
        if (!call.is_coll) continue;
        REQUIRE(k < colls.size());
        const TruthOp& op = truth->ops.at(static_cast<std::size_t>(call.task));
        const CollTask& c = *colls[k++];
        CHECK(algorithm_index(c.algorithm) == algorithm_index(op.algo));
        CHECK(protocol_index(c.protocol) == protocol_index(op.proto));
        CHECK(c.logged_lo == *op.channels.begin());
        CHECK(c.logged_hi == *op.channels.rbegin());
      }
      CHECK(k == colls.size());
      has_colls = k != 0;
    }
    auto r = replay(log->input, policy_by_name("nccl").value(), NcclVersion::V2_28);
    REQUIRE(r.ok());
    const auto a = logged_agreement(r.value());
    INFO(a.first_difference);
    CHECK((a.logged > 0) == has_colls);
    CHECK(a.same == a.logged);
    logged += a.logged;
  }
  CHECK(workloads >= 12);
  CHECK(logged >= 450);
}

namespace {

std::string op_line(const char* op, int op_count, int count) {
  return fmt::format(
      "vm:1:1 [0] NCCL INFO {}: opCount {} sendbuff 0x1 recvbuff 0x1 count {} datatype 7 op 0 root 0 comm 0x5 "
      "[nranks=1] stream 0x9\n",
      op, op_count, count);
}

}  // namespace

TEST_CASE("log import: a TUNING line ends a launch whatever the opCount and P2P/SHM logs are flagged", "[plan][log]") {
  // opCount stays 0 (NCCL 2.28 advances it only for launches with proxy ops), but the TUNING
  // line after the first all-reduce shows it was launched alone.
  const std::string text = "vm:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n" +
                           op_line("AllReduce", 0, 1024) +
                           "vm:1:1 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n" +
                           op_line("AllReduce", 0, 2048) + op_line("AllReduce", 0, 4096);
  auto log = import_nccl_logs({LogFile{"r0.log", text}});
  REQUIRE(log.ok());
  const auto& groups = log->input.ranks.at(0).groups;
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].colls.size() == 1);
  CHECK(groups[0].colls[0].protocol == "LL");
  CHECK(groups[0].colls[0].logged_hi == 0);
  CHECK(groups[1].colls.size() == 2);
  CHECK(groups[1].colls[0].logged_lo == -1);
  std::string notes;
  for (const auto& n : log->notes) notes += n + "\n";
  CHECK_THAT(notes, Catch::Contains("P2P") && Catch::Contains("cannot tell the group boundaries") &&
                        Catch::Contains("1 launch boundaries inside one opCount"));
  auto bad = import_nccl_logs(
      {LogFile{"r0.log", op_line("AllReduce", 0, 8) + "vm:1:1 [0] NCCL INFO AllReduce: 8 Bytes -> Algo RING proto\n"}});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().what, Catch::StartsWith("r0.log:2: malformed TUNING line"));
}

// railcheck replay-sched on the logs of every healthy NCCL 2.28.9 recording (scenarios/groundtruth,
// issue 27 item 1): from the logs alone, with rank 0's TUNING lines and cut to INIT and COLL lines (no TUNING, no
// GRAPH), every policy's verdict is clean (no divergence, no hang), and with the lines the model's channels are the
// ones NCCL logged for every rank's collectives, not rank 0's only.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli/commands.hpp"
#include "engine/plan/nccl_log_import.hpp"
#include "engine/plan/sched_replay.hpp"
#include "support/test_files.hpp"
#include "tests/engine/plan/init_coll_log.hpp"
#include "tests/engine/plan/shipped_file.hpp"

namespace fs = std::filesystem;
using namespace railcheck::plan;

namespace {

std::vector<fs::path> rank_logs(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& f : fs::directory_iterator(dir))
    if (f.path().extension() == ".log") out.push_back(f.path());
  std::sort(out.begin(), out.end());
  return out;
}

int replay_sched_logs(const std::vector<std::string>& logs) {
  railcheck::cli::ReplaySchedOptions o;
  o.inputs = logs;
  return railcheck::cli::cmd_replay_sched(o);
}

}  // namespace

TEST_CASE("replay-sched: every healthy recording replays clean from its logs, with and without TUNING lines",
          "[cli][plan][groundtruth]") {
  int runs = 0, logged = 0;
  for (const auto& name : groundtruth_recordings()) {
    const fs::path dir = fs::path(railcheck::test::source_path("scenarios/groundtruth")) / name;
    INFO(name);
    std::vector<std::string> with, stripped;
    std::vector<LogFile> files;
    const auto tmp = railcheck::test::fresh_dir("replay-groundtruth", name);
    for (const auto& log : rank_logs(dir)) {
      const std::string text = railcheck::test::read_file(log);
      with.push_back(log.string());
      stripped.push_back((tmp / log.filename()).string());
      std::ofstream(stripped.back()) << init_coll_only(text);
      files.push_back(LogFile{log.string(), text});
    }
    REQUIRE(with.size() >= 2);
    CHECK(replay_sched_logs(with) == railcheck::cli::kExitOk);
    CHECK(replay_sched_logs(stripped) == railcheck::cli::kExitOk);
    // Every rank's collectives carry the logged choice, and the model puts them where NCCL did.
    auto log = import_nccl_logs(files);
    REQUIRE(log.ok());
    auto r = replay(log->input, policy_by_name("nccl").value(), NcclVersion::V2_28);
    REQUIRE(r.ok());
    const auto a = logged_agreement(r.value());
    INFO(a.first_difference);
    CHECK(a.same == a.logged);
    logged += a.logged;
    fs::remove_all(tmp);
    ++runs;
  }
  CHECK(runs >= 15);
  CHECK(logged >= 900);  // 456 rank-0 collectives, on both ranks
}

TEST_CASE("replay-sched: two ranks' own TUNING lines that disagree are a divergence, and say so", "[cli][plan]") {
  auto line = [](int rank, const char* tuning) {
    return fmt::format(
        "vm:{0}:{0} [0] NCCL INFO AllReduce: opCount 1 sendbuff 0x1 recvbuff 0x1 count 8192 datatype 7 op 0 root 0 "
        "comm 0x5 [nranks=2] stream 0x9\nvm:{0}:{0} [0] NCCL INFO AllReduce: 32768 Bytes -> Algo RING proto {1}\n",
        rank, tuning);
  };
  const std::string agree = line(1, "LL channel{Lo..Hi}={0..1}");
  auto same = import_nccl_logs({LogFile{"r0.log", agree}, LogFile{"r1.log", line(2, "LL channel{Lo..Hi}={0..1}")}});
  REQUIRE(same.ok());
  auto ok = replay(same->input, policy_by_name("nccl").value(), NcclVersion::V2_28);
  REQUIRE(ok.ok());
  CHECK_FALSE(ok->agreement.first.has_value());
  auto differ =
      import_nccl_logs({LogFile{"r0.log", agree}, LogFile{"r1.log", line(2, "SIMPLE channel{Lo..Hi}={0..0}")}});
  REQUIRE(differ.ok());
  auto bad = replay(differ->input, policy_by_name("nccl").value(), NcclVersion::V2_28);
  REQUIRE(bad.ok());
  REQUIRE(bad->agreement.first.has_value());
  CHECK(bad->agreement.first->kind == Divergence::Kind::LoggedLines);
  CHECK_THAT(render_report(bad.value(), 16, 16), Catch::Contains("two ranks' own TUNING lines disagree") &&
                                                     Catch::Contains("rank 1 logged Algo RING proto SIMPLE"));
}

TEST_CASE("log import: rank 0's TUNING lines give every rank its choices and launch boundaries", "[plan][log]") {
  // P2P connections: opCount never advances, so only rank 0's TUNING lines show the two launches.
  auto op = [](int pid, int count) {
    return fmt::format(
        "vm:{0}:{0} [0] NCCL INFO AllReduce: opCount 0 sendbuff 0x1 recvbuff 0x1 count {1} datatype 7 op 0 root 0 "
        "comm 0x5 [nranks=2] stream 0x9\n",
        pid, count);
  };
  const std::string p2p = "vm:1:1 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/CUMEM/read\n";
  const std::string r0 =
      p2p + op(1, 1024) + "vm:1:1 [0] NCCL INFO AllReduce: 4096 Bytes -> Algo RING proto LL channel{Lo..Hi}={0..0}\n" +
      op(1, 65536) + "vm:1:1 [0] NCCL INFO AllReduce: 262144 Bytes -> Algo RING proto SIMPLE channel{Lo..Hi}={0..1}\n";
  const std::string r1 = op(2, 1024) + op(2, 65536);
  auto log = import_nccl_logs({LogFile{"r0.log", r0}, LogFile{"r1.log", r1}});
  REQUIRE(log.ok());
  for (const auto& rank : log->input.ranks) {
    INFO("rank " << rank.rank);
    REQUIRE(rank.groups.size() == 2);
    CHECK(rank.groups[0].colls.at(0).protocol == "LL");
    CHECK(rank.groups[1].colls.at(0).protocol == "SIMPLE");
    CHECK(rank.groups[1].colls.at(0).logged_hi == 1);
    CHECK(rank.groups[1].colls.at(0).logged_by == 0);
  }
}

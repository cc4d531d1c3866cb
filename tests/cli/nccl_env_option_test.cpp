// `--nccl-env` on align and replay-sched (cli/cmd_align.cpp, cli/cmd_replay_sched.cpp): a run
// recorded under NCCL_PROTO=LL, its logs cut to INIT+COLL and its env.txt gone, is predicted
// right only once NCCL_PROTO reaches the tuner, from the option or from the logs' ENV lines; bad
// text is exit 2 with one line naming the variable and the text.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/cli/railcheck_exe.hpp"
#include "tests/engine/plan/init_coll_log.hpp"

namespace fs = std::filesystem;

namespace {

// scenarios/groundtruth/nvl2_ll without env.txt, logs cut to INIT+COLL, `extra` appended to each log.
fs::path stripped_nvl2_ll(const std::string& extra) {
  const fs::path dir = fs::temp_directory_path() / ("railcheck-nccl-env-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "nvl2_ll");
  for (const auto& f : fs::directory_iterator(fs::path(RAILCHECK_SOURCE_DIR) / "scenarios/groundtruth/nvl2_ll")) {
    const auto name = f.path().filename().string();
    if (name.starts_with("railcheck-prof-")) fs::copy_file(f.path(), dir / "nvl2_ll" / name);
    if (f.path().extension() == ".log")
      std::ofstream(dir / "nvl2_ll" / name) << railcheck::plan::init_coll_only(exe::slurp(f.path())) << extra;
  }
  return dir;
}

}  // namespace

TEST_CASE(
    "the nccl-env option: align --predict and replay-sched take NCCL_PROTO from the option or the logs' ENV lines",
    "[cli][plan][align]") {
  const fs::path dir = stripped_nvl2_ll("");
  CHECK(exe::run_railcheck(dir, "align nvl2_ll --predict").code == 1);  // Simple/LL128 predicted where NCCL ran LL
  const auto given = exe::run_railcheck(dir, "align nvl2_ll --predict --nccl-env 'NCCL_PROTO=LL'");
  CHECK(given.code == 0);
  CHECK_THAT(given.out, Catch::Contains("NCCL_PROTO=LL (from --nccl-env"));
  const auto replay =
      exe::run_railcheck(dir, "replay-sched nvl2_ll/rank0.log nvl2_ll/rank1.log --nccl-env NCCL_PROTO=LL");
  CHECK(replay.code == 0);
  CHECK_THAT(replay.out, Catch::Contains("NCCL_PROTO=LL (from --nccl-env"));
  fs::remove_all(dir);
  const fs::path logged = stripped_nvl2_ll("vm:1:1 [0] NCCL INFO NCCL_PROTO set by environment to LL\n");
  const auto from_log = exe::run_railcheck(logged, "align nvl2_ll --predict");
  CHECK(from_log.code == 0);
  CHECK_THAT(from_log.out, Catch::Contains("NCCL_PROTO=LL (from ") && Catch::Contains("rank0.log:"));
  fs::remove_all(logged);
}

TEST_CASE("the nccl-env option: text NCCL would reject exits 2 naming the variable and the text",
          "[cli][plan][align]") {
  const fs::path dir = stripped_nvl2_ll("");
  for (const std::string cmd : {"align nvl2_ll --predict", "replay-sched nvl2_ll/rank0.log nvl2_ll/rank1.log"}) {
    const auto bad = exe::run_railcheck(dir, cmd + " --nccl-env 'NCCL_PROTO=LL,Simpel'");
    INFO(cmd);
    CHECK(bad.code == 2);
    CHECK_THAT(bad.err, Catch::Contains("NCCL_PROTO=\"LL,Simpel\""));
    CHECK(std::count(bad.err.begin(), bad.err.end(), '\n') == 1);
    // A variable the command does not read: align reads NCCL_ALGO/NCCL_PROTO only, replay-sched
    // every setting of engine/plan/nccl_rank_env.hpp's table, and no other.
    CHECK(exe::run_railcheck(dir, cmd + " --nccl-env 'NCCL_SOCKET_IFNAME=lo'").code == 2);
  }
  CHECK(exe::run_railcheck(dir, "align nvl2_ll --predict --nccl-env 'NCCL_MAX_NCHANNELS=4'").code == 2);
  fs::remove_all(dir);
}

// replay-sched's verdict held against real NCCL 2.28.9 jobs whose ranks disagree (issue 40):
// scenarios/divergence, recorded on 4x H200 by scripts/gpu/divergence_battery.sh, each folder
// labelled by what NCCL really did (progress_<r>.txt: every op started, finished, its values
// checked). The expectation of every case comes from that label, never from the case's name:
//
//   - a job that completed with every value right must be HEALTHY;
//   - a job that hung, failed or returned wrong values must be DIVERGENT (or FAILS), and the
//     collective the verdict names must be the first operation where NCCL went wrong on some rank;
//   - where the ranks' settings differ (env.txt), a `cause:` line names one of those settings;
//     where the ranks issued different operations, the verdict says so.
//
// Each case three ways: the full logs, the logs cut to INIT+ENV+COLL (no TUNING lines: rank 0's
// choices must not stand for a rank with other settings), and the logs without ENV lines with the
// settings from env.txt. Without any settings at all, a broken job must still never be HEALTHY.
#include <fmt/format.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <regex>
#include <set>
#include <sstream>

#include "engine/plan/nccl_log_import.hpp"
#include "engine/plan/sched_replay.hpp"
#include "engine/plan/sched_verdict.hpp"
#include "support/test_files.hpp"
#include "tests/engine/plan/init_coll_log.hpp"

namespace fs = std::filesystem;
using namespace railcheck::plan;

namespace {

// What NCCL did, from the ranks' progress files.
struct Label {
  bool healthy = true;
  int first_bad_op = -1;                  // the first op (workload index) some rank did not finish right
  bool ranks_issued_differently = false;  // the skip/count workloads
};

Label read_label(const fs::path& dir, int nranks) {
  Label l;
  auto note_bad = [&](int op) {
    l.healthy = false;
    l.first_bad_op = l.first_bad_op < 0 ? op : std::min(l.first_bad_op, op);
  };
  for (int r = 0; r < nranks; ++r) {
    std::istringstream in(railcheck::test::read_file(dir / fmt::format("progress_{}.txt", r)));
    std::string last;
    for (std::string line; std::getline(in, line);) {
      if (line.empty()) continue;
      last = line;
      int op = -1;
      if (std::sscanf(line.c_str(), "done %d", &op) == 1 && line.find(" WRONG ") != std::string::npos) note_bad(op);
      if (line.starts_with("skipped ")) l.ranks_issued_differently = true;
    }
    int op = -1;
    if (last != "completed" && std::sscanf(last.c_str(), "start %d", &op) == 1) note_bad(op);
    if (last.empty()) note_bad(0);
  }
  const std::string env = railcheck::test::read_file(dir / "env.txt");
  if (env.find("workload count") != std::string::npos || env.find("workload skip") != std::string::npos)
    l.ranks_issued_differently = true;
  return l;
}

// The workload's op index of collective #k on rank 0 (op 12, the send/recv ring, is not a collective).
int op_of_collective(int k) { return k < 12 ? k : k + 1; }

std::vector<fs::path> logs_of(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".log" && e.path().filename().string().starts_with("rank")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

std::string without_env_lines(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);)
    if (line.find(" set by environment to ") == std::string::npos) out += line + "\n";
  return out;
}

enum class Variant { Full, NoTuning, EnvTxtOnly, NoSettings };

SchedVerdict verdict_of(const fs::path& dir, Variant v) {
  std::vector<LogFile> files;
  for (const auto& p : logs_of(dir)) {
    std::string text = railcheck::test::read_file(p);
    if (v != Variant::Full) text = init_coll_only(text);
    if (v == Variant::EnvTxtOnly || v == Variant::NoSettings) text = without_env_lines(text);
    files.push_back(LogFile{p.string(), std::move(text)});
  }
  RankEnvSources given;
  if (v == Variant::EnvTxtOnly)
    given.env_txt = env_from_env_txt(railcheck::test::read_file(dir / "env.txt"), (dir / "env.txt").string());
  auto log = import_nccl_log_readings(files, given);
  REQUIRE(log.ok());
  REQUIRE(log->each_operation.has_value() == log->as_logged.boundaries_uncertain);
  auto judged = replay_and_judge(log->as_logged.input, log->each_operation ? &*log->each_operation : nullptr,
                                 policy_by_name("nccl").value(), NcclVersion::V2_28);
  REQUIRE(judged.ok());
  REQUIRE(judged->each_operation.has_value() == log->each_operation.has_value());
  return judged->verdict;
}

// The settings env.txt gives some ranks and not others (or with other values).
std::set<std::string> differing_vars(const fs::path& dir, int nranks) {
  const GivenEnv given = env_from_env_txt(railcheck::test::read_file(dir / "env.txt"), "env.txt");
  std::set<std::string> out;
  const RankEnv r0 = given.for_rank(0);
  for (int r = 1; r < nranks; ++r) {
    const RankEnv other = given.for_rank(static_cast<std::uint32_t>(r));
    for (const auto& k : kPlanKnobs) {
      const EnvSetting* a = r0.find(k.var);
      const EnvSetting* b = other.find(k.var);
      if ((a == nullptr) != (b == nullptr) || (a != nullptr && a->value != b->value)) out.insert(std::string(k.var));
    }
  }
  return out;
}

// The workload op the headline names: "collective #N", "before collective #0", or a p2p
// operation "after collective #N" (the op that follows it).
int named_op(const std::string& headline) {
  std::smatch m;
  if (std::regex_search(headline, m, std::regex(R"(after collective #(\d+))")))
    return op_of_collective(std::stoi(m[1])) + 1;
  if (!std::regex_search(headline, m, std::regex(R"(collective #(\d+))"))) return -1;
  return op_of_collective(std::stoi(m[1]));
}

}  // namespace

TEST_CASE(
    "replay-sched verdict: every recorded divergent job is caught at the operation where NCCL went wrong, with "
    "its cause; every healthy one is healthy",
    "[plan][divergence]") {
  const fs::path root = railcheck::test::source_path("scenarios/divergence");
  int cases = 0, broken = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    if (!e.is_directory()) continue;
    const fs::path dir = e.path();
    const int nranks = static_cast<int>(logs_of(dir).size());
    REQUIRE(nranks >= 2);
    const Label label = read_label(dir, nranks);
    const auto vars = differing_vars(dir, nranks);
    ++cases;
    broken += label.healthy ? 0 : 1;
    for (const Variant v : {Variant::Full, Variant::NoTuning, Variant::EnvTxtOnly}) {
      const SchedVerdict verdict = verdict_of(dir, v);
      std::string text;
      for (const auto& l : verdict.lines) text += l + "\n";
      INFO(dir.filename().string() << " variant " << static_cast<int>(v) << "\n" << text);
      if (label.healthy) {
        CHECK(verdict.kind == SchedVerdict::Kind::Healthy);
        continue;
      }
      REQUIRE(verdict.kind == SchedVerdict::Kind::Divergent);
      CHECK(named_op(verdict.lines.front()) == label.first_bad_op);
      if (label.ranks_issued_differently) CHECK(text.find("issued different operations") != std::string::npos);
      if (!vars.empty()) {
        bool named = false;  // a `cause:` line names one of the settings that differ
        for (const auto& line : verdict.lines)
          for (const auto& var : vars)
            named = named || (line.starts_with("cause: ") && line.find(var + "=") != std::string::npos);
        CHECK(named);
      }
    }
    // With no settings at all (no ENV lines, no env.txt) the verdict may not know why, but a job
    // that went wrong is never called healthy.
    if (!label.healthy) CHECK(verdict_of(dir, Variant::NoSettings).kind != SchedVerdict::Kind::Healthy);
  }
  CHECK(cases >= 20);
  CHECK(broken >= 12);
}

TEST_CASE(
    "replay-sched from TUNING-stripped logs: rank 0's predicted algorithm, protocol and channels are the ones "
    "NCCL logged, with the run's own settings",
    "[plan][divergence]") {
  // Rank 0 prints a TUNING line for every collective it schedules (src/enqueue.cc
  // scheduleCollTasksToPlan); the model, given the same logs without those lines, must predict them
  // from rank 0's INIT lines and settings alone. The workload issues every operation alone and waits
  // for it, so each operation is its own launch.
  const fs::path root = railcheck::test::source_path("scenarios/divergence");
  const auto nccl = policy_by_name("nccl").value();
  int compared = 0, cases = 0;
  for (const auto& e : fs::directory_iterator(root)) {
    if (!e.is_directory()) continue;
    std::vector<LogFile> full, stripped;
    for (const auto& p : logs_of(e.path())) {
      const std::string text = railcheck::test::read_file(p);
      full.push_back(LogFile{p.string(), text});
      stripped.push_back(LogFile{p.string(), init_coll_only(text)});
    }
    auto logged = import_nccl_logs(full);
    auto predicted = import_nccl_logs(stripped, LaunchReading::EachOperation);
    REQUIRE(logged.ok());
    REQUIRE(predicted.ok());
    auto r = replay(predicted->input, nccl, NcclVersion::V2_28);
    REQUIRE(r.ok());
    std::vector<const CollTask*> lines;  // rank 0's collectives in issue order, with their TUNING line
    for (const auto& g : logged->input.ranks[0].groups)
      for (const auto& c : g.colls) lines.push_back(&c);
    const auto& placed = r->schedules[0].colls;
    ++cases;
    for (std::size_t k = 0; k < lines.size() && k < placed.size(); ++k) {
      if (lines[k]->logged_by != 0) continue;
      INFO(e.path().filename().string() << " collective #" << k << " " << name(lines[k]->op) << " count "
                                        << lines[k]->count);
      CHECK(algorithm_name(placed[k].algo) == algorithm_name(*algorithm_index(lines[k]->algorithm)));
      CHECK(protocol_name(placed[k].proto) == protocol_name(*protocol_index(lines[k]->protocol)));
      std::vector<std::uint32_t> want;
      for (int ch = lines[k]->logged_lo; ch <= lines[k]->logged_hi; ++ch)
        want.push_back(static_cast<std::uint32_t>(ch));
      auto got = placed[k].channels;
      std::sort(got.begin(), got.end());
      CHECK(got == want);
      ++compared;
    }
  }
  CHECK(cases >= 20);
  CHECK(compared >= 200);
}

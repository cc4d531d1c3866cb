// Every recorded hang (scenarios/triage, real PyTorch 2.11 + NCCL 2.28.9 runs on 2xH200,
// scripts/gpu/fr_hangs.sh) gets the verdict its expected.txt states: the kind, the ranks blamed,
// and the phrases that name the op and the cause. A healthy recording must say "no problem found".
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/test_files.hpp"
#include "triage/fr_calls.hpp"
#include "triage/triage_verdict.hpp"

namespace railcheck::triage {
namespace {

namespace fs = std::filesystem;

struct Expected {
  std::string verdict;
  std::string ranks;  // "1" or "0, 1, 2, 3"; empty: not stated
  std::vector<std::string> mentions;
};

Expected expected_of(const fs::path& dir) {
  Expected e;
  std::ifstream f(dir / "expected.txt");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("verdict: ", 0) == 0) e.verdict = line.substr(9);
    if (line.rfind("ranks: ", 0) == 0) e.ranks = line.substr(7);
    if (line.rfind("mentions: ", 0) == 0) e.mentions.push_back(line.substr(10));
  }
  return e;
}

std::vector<std::string> files_named(const fs::path& dir, const std::string& prefix, const std::string& ext) {
  std::vector<std::string> out;
  for (const auto& f : fs::directory_iterator(dir)) {
    const auto name = f.path().filename().string();
    if (name.rfind(prefix, 0) == 0 && f.path().extension() == ext) out.push_back(f.path().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<plan::LogFile> logs_of(const fs::path& dir) {
  std::vector<plan::LogFile> logs;
  for (const auto& p : files_named(dir, "nccl_rank", ".log")) {
    std::ifstream f(p);
    std::stringstream s;
    s << f.rdbuf();
    logs.push_back(plan::LogFile{p, s.str()});
  }
  return logs;
}

Verdict verdict_of(const std::vector<std::string>& dumps, const fs::path& dir) {
  auto read = read_fr_dumps(dumps);
  INFO((read ? std::string() : read.error().message()));
  REQUIRE(read.ok());
  return triage(read.value(), logs_of(dir));
}

std::string joined(const std::vector<std::uint32_t>& ranks) {
  std::string out;
  for (auto r : ranks) out += (out.empty() ? "" : ", ") + std::to_string(r);
  return out;
}

const fs::path kRecordings = test::source_path("scenarios/triage");

TEST_CASE("triage: every recorded hang and healthy run gets the verdict its expected.txt states", "[triage]") {
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(kRecordings)) {
    if (!fs::exists(entry.path() / "expected.txt")) continue;
    const auto want = expected_of(entry.path());
    const auto v = verdict_of(files_named(entry.path(), "rank_", ""), entry.path());
    const auto text = render(v);
    INFO(entry.path().filename().string() << ":\n" << text);
    CHECK(std::string(name(v.kind)) == want.verdict);
    if (!want.ranks.empty()) CHECK(joined(v.ranks) == want.ranks);
    for (const auto& m : want.mentions) CHECK_THAT(text, Catch::Contains(m));
    ++seen;
  }
  CHECK(seen >= 13);
}

TEST_CASE("triage: a dump's JSON form gives the verdict of its pickle", "[triage]") {
  int seen = 0;
  for (const auto& entry : fs::directory_iterator(kRecordings)) {
    // PyTorch writes no JSON form on a timeout: only runs that ended have one for every rank.
    const auto json = entry.path() / "json";
    if (!fs::is_directory(json)) continue;
    const auto pickles = files_named(entry.path(), "rank_", "");
    const auto jsons = files_named(json, "rank_", ".json");
    if (jsons.size() != pickles.size()) continue;
    const auto from_pickles = verdict_of(pickles, entry.path());
    const auto from_json = verdict_of(jsons, entry.path());
    INFO(entry.path().filename().string() << ":\n" << render(from_json));
    CHECK(from_json.kind == from_pickles.kind);
    CHECK(from_json.ranks == from_pickles.ranks);
    ++seen;
  }
  CHECK(seen >= 4);
}

TEST_CASE("triage: without the NCCL logs the verdict says it assumed the model's communicator", "[triage]") {
  const auto dir = kRecordings / "healthy-r2";
  auto read = read_fr_dumps(files_named(dir, "rank_", ""));
  REQUIRE(read.ok());
  const auto v = triage(read.value(), {});
  CHECK(v.kind == Verdict::Kind::NoProblem);
  CHECK_THAT(render(v), Catch::Contains("no NCCL logs given"));
}

}  // namespace
}  // namespace railcheck::triage

namespace railcheck::triage {
namespace {

TEST_CASE("triage: a subgroup's calls carry its name, not the rank's group counter", "[triage]") {
  // Rank 1 of healthy_groups-r4 is in the world ("0") and the odd subgroup, named "2" (rank 0's
  // even one is "1"); PyTorch's pg_id counts groups per process, so both subgroups have pg_id 1.
  const auto dir = test::source_path("scenarios/triage/healthy_groups-r4");
  auto read = read_fr_dumps({dir + "/rank_1"});
  REQUIRE(read.ok());
  const FrDump& d = read.value().front();
  REQUIRE(d.pg("2") != nullptr);
  CHECK(d.pg("2")->ranks == std::vector<std::uint32_t>{1, 3});
  int in_subgroup = 0;
  for (const auto& e : d.entries) {
    CHECK((e.pg == "0" || e.pg == "2"));
    in_subgroup += e.pg == "2" ? 1 : 0;
  }
  CHECK(in_subgroup == 2);
}

}  // namespace
}  // namespace railcheck::triage

// Bad dumps (tests/data/triage) are one-line exit-2 errors of `railcheck triage`, never a
// traceback, and a pickle that names a class or function is refused before it can run anything.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>

#include "tests/cli/railcheck_exe.hpp"
#include "tests/support/test_files.hpp"

namespace railcheck::triage {
namespace {

namespace fs = std::filesystem;

fs::path scratch(const std::string& name) {
  const auto dir = fs::temp_directory_path() / ("railcheck-triage-" + name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string bad_dump(const std::string& name) { return test::source_path("tests/data/triage/" + name); }

void expect_one_line_refusal(const exe::Ran& r, const std::string& why) {
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err.rfind("railcheck triage: ", 0) == 0);
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  CHECK_THAT(r.err, !Catch::Contains("Traceback"));
  CHECK_THAT(r.err, Catch::Contains(why));
}

TEST_CASE("triage: a pickle naming a function is refused before it runs", "[triage][reader]") {
  const fs::path ran = "/tmp/railcheck-triage-pickle-ran";  // what the pickle's command would create
  fs::remove(ran);
  const auto r = exe::run_railcheck(scratch("evil"), "triage '" + bad_dump("evil_rank_0") + "'");
  expect_one_line_refusal(r, "names posix.system");
  CHECK_FALSE(fs::exists(ran));
}

TEST_CASE("triage: truncated and foreign dumps are one-line errors", "[triage][reader]") {
  const auto dir = scratch("bad");
  expect_one_line_refusal(exe::run_railcheck(dir, "triage '" + bad_dump("truncated_rank_0") + "'"), "truncated");
  expect_one_line_refusal(exe::run_railcheck(dir, "triage '" + bad_dump("list_rank_0") + "'"), "not a dict");
  expect_one_line_refusal(exe::run_railcheck(dir, "triage '" + bad_dump("version3_rank_0") + "'"),
                          "dump version 3.0 is not one this reader knows");
  expect_one_line_refusal(exe::run_railcheck(dir, "triage '" + bad_dump("noentrykeys_rank_0") + "'"), "entry 0 lacks");
  expect_one_line_refusal(exe::run_railcheck(dir, "triage '" + test::source_path("README.md") + "'"),
                          "neither a pickle (protocol 2+) nor JSON");
  fs::copy_file(test::source_path("scenarios/triage/healthy-r2/rank_0"), dir / "dump",
                fs::copy_options::overwrite_existing);
  expect_one_line_refusal(exe::run_railcheck(dir, "triage dump"), "no rank in the file name");
}

TEST_CASE("triage: a folder without dumps and two dumps of one rank are refused", "[triage][reader]") {
  const auto dir = scratch("empty");
  expect_one_line_refusal(exe::run_railcheck(dir, "triage ."), "no dump in it");
  const auto rec = test::source_path("scenarios/triage/healthy-r2");
  expect_one_line_refusal(exe::run_railcheck(dir, "triage '" + rec + "/rank_0' '" + rec + "/json/rank_0.json'"),
                          "are both rank 0");
}

TEST_CASE("triage: a folder's dumps and NCCL logs are found by name and the exit code tells the verdict",
          "[triage][reader]") {
  const auto dir = scratch("folders");
  const auto healthy = exe::run_railcheck(dir, "triage '" + test::source_path("scenarios/triage/healthy-r4") + "'");
  INFO(healthy.err);
  CHECK(healthy.code == 0);
  CHECK_THAT(healthy.out, Catch::StartsWith("verdict: no problem found"));
  CHECK_THAT(healthy.out, Catch::Contains("communicator from the NCCL logs"));
  const auto hung = exe::run_railcheck(dir, "triage '" + test::source_path("scenarios/triage/p2p_cycle-r4") + "'");
  CHECK(hung.code == 1);
  CHECK_THAT(hung.out, Catch::StartsWith("verdict: NCCL-level hang"));
}

}  // namespace
}  // namespace railcheck::triage

namespace railcheck::triage {
namespace {

TEST_CASE("triage: an older dump numbered by seq_id is read", "[triage][reader]") {
  const auto dir = scratch("v21");
  const auto r = exe::run_railcheck(dir, "triage '" + bad_dump("v21_rank_0") + "'");
  INFO(r.err);
  CHECK(r.code == 1);  // rank 1 of its group left no dump
  CHECK_THAT(r.out, Catch::Contains("rank 0: completed every call it issued (last completed #1 all_reduce"));
  CHECK_THAT(r.out, Catch::Contains("rank 1 gave no dump"));
}

}  // namespace
}  // namespace railcheck::triage

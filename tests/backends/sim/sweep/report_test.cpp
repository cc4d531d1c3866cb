#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "backends/sim/sweep/child_pool.hpp"
#include "backends/sim/sweep/report_script.hpp"
#include "support/test_files.hpp"

namespace fs = std::filesystem;
using namespace railcheck::sweep;

namespace {

using railcheck::test::fresh_dir;
using railcheck::test::read_file;

int run_report(const fs::path& results, const fs::path& out) {
  int code = -1;
  auto ran =
      run_children({ChildJob{report_command(results.string(), {"--out", out.string()}), (out.string() + ".log")}}, 1,
                   [&](std::size_t, int c) { code = c; });
  REQUIRE(ran);
  return code;
}

}  // namespace

TEST_CASE("the report script turns a small result set into figures and one self-contained HTML file") {
  const fs::path dir = fresh_dir("report-test", "ok");
  std::ofstream rows(dir / "results.jsonl");
  for (int rto : {100, 1000})
    for (int window : {50, 500})
      for (int seed : {1, 2})
        rows << nlohmann::json{{"point", fmt::format("rto={},window={},seed={}", rto, window, seed)},
                               {"params",
                                {{"engine.rto_ms", std::to_string(rto)}, {"window_ms", std::to_string(window)}}},
                               {"seed", seed},
                               {"outcome", "delivered"},
                               {"scenario", "tiny"},
                               {"failovers", window > rto ? 1 : 0},
                               {"false_alarms", 0},
                               {"fault_ms", 10.0},
                               {"detected_ms", window > rto ? nlohmann::json(10.0 + rto) : nlohmann::json()},
                               {"end_ms", 200.0},
                               {"lost", 0}}
                    .dump()
             << "\n";
  rows.close();
  const fs::path out = dir / "report";
  REQUIRE(run_report(dir, out) == 0);
  for (const char* png : {"failover_rate.png", "detected_ms.png", "end_ms.png", "lost.png"}) {
    INFO(png);
    CHECK(fs::file_size(out / png) > 1000);
  }
  const std::string html = read_file(out / "report.html");
  CHECK_THAT(html, Catch::Contains("data:image/png;base64,"));
  CHECK_THAT(html, Catch::Contains("delivered 8"));
  CHECK(html.find("src='failover_rate.png'") == std::string::npos);  // images inlined, not linked
  fs::remove_all(dir);
}

TEST_CASE("the report script rejects a malformed results file with its line and exit status 2") {
  const fs::path dir = fresh_dir("report-test", "bad");
  std::ofstream(dir / "results.jsonl") << R"({"point":"a","params":{},"seed":1,"outcome":"delivered"})"
                                       << "\n"
                                       << "{not json\n";
  const fs::path out = dir / "report";
  CHECK(run_report(dir, out) == 2);
  CHECK_THAT(read_file(out.string() + ".log"), Catch::Contains("results.jsonl:2: not JSON"));
  CHECK_FALSE(fs::exists(out / "report.html"));
  fs::remove_all(dir);
}

TEST_CASE("the report folds qp_timeout and qp_retry_cnt into the hardware retry window axis") {
  const fs::path dir = fresh_dir("report-test", "window");
  std::ofstream rows(dir / "results.jsonl");
  for (int t : {12, 14})
    for (int retry : {5, 7})
      rows << nlohmann::json{{"point", fmt::format("t={},retry={}", t, retry)},
                             {"params",
                              {{"engine.qp_timeout", std::to_string(t)},
                               {"engine.qp_retry_cnt", std::to_string(retry)},
                               {"engine.rto_ms", "1000"}}},
                             {"seed", 1},
                             {"outcome", "delivered"},
                             {"failovers", 0},
                             {"end_ms", 200.0}}
                  .dump()
           << "\n";
  rows.close();
  const fs::path out = dir / "report";
  int code = -1;
  REQUIRE(run_children({ChildJob{report_command(dir.string(), {"--out", out.string(), "--x", "hw_window_ms", "--lines",
                                                               "engine.rto_ms"}),
                                 out.string() + ".log"}},
                       1, [&](std::size_t, int c) { code = c; }));
  INFO(read_file(out.string() + ".log"));
  REQUIRE(code == 0);
  // t 12, retry 5: 4.096 us x 4096 x 6 = 101 ms; t 14, retry 7: 537 ms. The two source axes are
  // folded into x, not listed as averaged.
  const std::string html = read_file(out / "report.html");
  CHECK_THAT(html, Catch::Contains("x: hw_window_ms"));
  CHECK_THAT(html, Catch::Contains("averaged over: seed<"));
  fs::remove_all(dir);
}

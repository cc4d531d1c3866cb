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

namespace {

// Rows of two axes (x: engine.qp_timeout, lines: engine.rto_ms) and, if named, a true/false third,
// whose detection is `detect(t, rto, third)` ms after the fault, written as the sweep writes them:
// with the point's index, its id naming the axes in the sweep file's order, params sorted by name.
template <typename Detect>
void write_rows(const fs::path& dir, Detect detect, const std::string& extra_axis = {}) {
  std::ofstream rows(dir / "results.jsonl");
  int index = 0;
  for (const char* extra : {"false", "true"}) {
    if (extra_axis.empty() && std::string(extra) == "true") break;
    for (int t : {12, 14, 16})
      for (int rto : {500, 1000}) {
        nlohmann::json params{{"engine.qp_timeout", std::to_string(t)}, {"engine.rto_ms", std::to_string(rto)}};
        std::string id = fmt::format("engine.qp_timeout={},engine.rto_ms={},", t, rto);
        if (!extra_axis.empty()) {
          params[extra_axis] = extra;
          id += fmt::format("{}={},", extra_axis, extra);
        }
        rows << nlohmann::json{{"index", index++},
                               {"point", id + "seed=1"},
                               {"params", params},
                               {"seed", 1},
                               {"outcome", "delivered"},
                               {"scenario", "tiny"},
                               {"failovers", 1},
                               {"fault_ms", 10.0},
                               {"detected_ms", 10.0 + detect(t, rto, std::string(extra) == "true")},
                               {"end_ms", 200.0},
                               {"lost", 0}}
                    .dump()
             << "\n";
      }
  }
}

std::string report_output(const fs::path& dir, int& code) {
  const fs::path out = dir / "report";
  code = run_report(dir, out);
  return read_file(out.string() + ".log");
}

}  // namespace

// Issue 41: rto-calibration drew seven figures of flat lines (the liveness detector decided every
// run) and nothing said so. A figure whose every series is constant says it is, on stdout, in its
// title and in report.html, so it is not read as a finding about the swept axes.
TEST_CASE("the report says when every series of a figure is constant, and only then") {
  const fs::path dir = fresh_dir("report-test", "flat");
  SECTION("detection 15.85 ms at every qp_timeout and RTO: flagged") {
    write_rows(dir, [](int, int, bool) { return 15.85; });
    int code = -1;
    const std::string log = report_output(dir, code);
    INFO(log);
    REQUIRE(code == 0);
    CHECK_THAT(log, Catch::Contains("detected_ms: every series is constant over engine.qp_timeout (15.85)"));
    CHECK_THAT(log, Catch::Contains("failover_rate: every series is constant"));
    CHECK_THAT(read_file(dir / "report" / "report.html"), Catch::Contains("<p class='flat'>every series is constant"));
  }
  SECTION("detection that grows with the retry window: not flagged") {
    write_rows(dir, [](int t, int, bool) { return 0.0246 * (1 << t); });
    int code = -1;
    const std::string log = report_output(dir, code);
    INFO(log);
    REQUIRE(code == 0);
    CHECK_THAT(log, !Catch::Contains("detected_ms: every series is constant"));
    CHECK_THAT(log, Catch::Contains("failover_rate: every series is constant"));  // failovers: 1 in every row
  }
  SECTION("each series constant, at a value of its own: flagged as the lines' doing, not x's") {
    write_rows(dir, [](int, int rto, bool) { return rto == 500 ? 20.0 : 30.0; });
    int code = -1;
    const std::string log = report_output(dir, code);
    INFO(log);
    REQUIRE(code == 0);
    CHECK_THAT(log, Catch::Contains("detected_ms: every series is constant over engine.qp_timeout (20, 30): "
                                    "engine.qp_timeout does not move this metric; only engine.rto_ms does"));
  }
  SECTION("one series varies, the other is constant: not flagged") {
    write_rows(dir, [](int t, int rto, bool) { return rto == 500 ? 20.0 : 0.0246 * (1 << t); });
    int code = -1;
    const std::string log = report_output(dir, code);
    INFO(log);
    REQUIRE(code == 0);
    CHECK_THAT(log, !Catch::Contains("detected_ms: every series"));
  }
  fs::remove_all(dir);
}

TEST_CASE("the report draws a true/false axis as panels and names the panel whose series are constant") {
  const fs::path dir = fresh_dir("report-test", "panels");
  // Detector off: detection follows the retry window; on: 15.85 ms whatever the window.
  write_rows(
      dir, [](int t, int, bool on) { return on ? 15.85 : 0.0246 * (1 << t); }, "engine.liveness");
  int code = -1;
  const std::string log = report_output(dir, code);
  INFO(log);
  REQUIRE(code == 0);
  CHECK_THAT(log, Catch::Contains("detected_ms: every series is constant where engine.liveness = true"));
  CHECK_THAT(log, !Catch::Contains("detected_ms: every series is constant over"));
  const std::string html = read_file(dir / "report" / "report.html");
  // The axes in the sweep file's order (the point id's), not the params' sorted one, which would put
  // engine.liveness on x.
  CHECK_THAT(html, Catch::Contains(
                       "x: engine.qp_timeout; lines: engine.rto_ms; panels: engine.liveness; averaged over: seed<"));
  fs::remove_all(dir);
}

// Issue 41: a sweep marks each point validated or not. Validated means the scenario's fault family
// is one `railcheck validate` holds against the netns lab, on the lab's calibrated TCP link; the
// report says that much and no more.
TEST_CASE("the report says which runs are of a fault family railcheck validate holds in the lab") {
  const fs::path dir = fresh_dir("report-test", "lab");
  write_rows(
      dir, [](int, int, bool) { return 15.85; }, "engine.liveness");
  fs::create_directories(dir / "points");
  const std::string common =
      "name = 'tiny'\n[topology]\nranks = 2\nrails = 2\nnic = 'cx7-400g'\n"
      "[[faults.link_down]]\nrank = 0\nrail = 0\nat_ms = 10.0\n";
  for (int i = 0; i < 12; ++i) {
    // Points 0-5: a link down alone; 6-11: with a slow receiver, which the lab cannot make.
    const std::string workload = i < 6 ? "" : "[workload]\nslow_ranks = [1]\nreceiver_hold_ms = 5.0\n";
    std::ofstream(dir / "points" / fmt::format("p{:06}.toml", i))
        << "# sweep tiny, point " << i << "\n# base scenario: tiny.toml\n"
        << common << workload;
  }
  int code = -1;
  const std::string log = report_output(dir, code);
  INFO(log);
  REQUIRE(code == 0);
  CHECK_THAT(log, Catch::Contains("6 runs validated family (link down): railcheck validate holds the engine's outcome, "
                                  "counts and detection in the netns lab, on its calibrated tcp;ofi_rxm link, not "
                                  "cx7-400g's timings"));
  CHECK_THAT(log, Catch::Contains("6 runs not validated: the netns lab does not run a slow receiver"));
  CHECK_THAT(read_file(dir / "report" / "report.html"), Catch::Contains("<h2>Validated in the lab?</h2>"));

  SECTION("without the points' scenarios it says it cannot tell") {
    fs::remove_all(dir / "points");
    const std::string bare = report_output(dir, code);
    INFO(bare);
    REQUIRE(code == 0);
    CHECK_THAT(bare, Catch::Contains("12 runs validation unknown: no point scenarios in"));
  }
  fs::remove_all(dir);
}

// Bad input never crashes, hangs or lies (issue 20; reproducers in tests/data/fuzz-repro/, their
// README lists F1..F17). Each case runs the real `railcheck` executable in a fresh folder and
// checks the exit code, that stderr is one line naming what was wrong, that no raw bytes are
// echoed, and that nothing (no libinfinipath *.btr backtrace file) is left behind.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/cli/railcheck_exe.hpp"

namespace fs = std::filesystem;
using exe::Ran;
using exe::run_railcheck;

namespace {

const fs::path kRepro = fs::path(RAILCHECK_SOURCE_DIR) / "tests/data/fuzz-repro";

// Runs `railcheck <args>` in an empty folder under a 60 s limit (a hang is exit 124), and checks
// that nothing but its output is left there.
Ran run_in_fresh_dir(const std::string& args, std::string limits = "") {
  static int n = 0;
  const fs::path dir = fs::temp_directory_path() / ("railcheck-bad-input-" + std::to_string(::getpid()) + "-" +
                                                   std::to_string(n++));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const Ran r = run_railcheck(dir, args, std::move(limits));
  for (const auto& e : fs::directory_iterator(dir)) {
    INFO("left behind: " << e.path());
    CHECK((e.path().filename() == "out.txt" || e.path().filename() == "err.txt"));
  }
  fs::remove_all(dir);
  return r;
}

std::size_t lines(const std::string& s) {
  std::size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

bool printable(const std::string& s) {
  for (unsigned char c : s)
    if (c != '\n' && (c < 0x20 || c >= 0x7f)) return false;
  return true;
}

// Exit 2 with one printable line on stderr that contains `names`.
void bad_input(const std::string& args, const std::string& names, const std::string& limits = "") {
  INFO("railcheck " << args);
  const Ran r = run_in_fresh_dir(args, limits);
  INFO("stderr: " << r.err);
  CHECK(r.code == 2);
  CHECK(lines(r.err) == 1);
  CHECK(r.err.find(names) != std::string::npos);
  CHECK(printable(r.err));
}

std::string repro(const std::string& name) { return "'" + (kRepro / name).string() + "'"; }

}  // namespace

TEST_CASE("every subcommand taking a file: missing, unreadable and a directory are one line, exit 2", "[cli]") {
  // /proc/self/mem exists and opens, and reading it at offset 0 fails even for root.
  for (const std::string cmd : {"run", "check", "replay", "route weights", "route moe", "replay-sched", "sweep",
                                "report", "budget", "align"}) {
    bad_input(cmd + " /nonexistent/x.toml", "/nonexistent/x.toml");
    bad_input(cmd + " /proc/self/mem", "/proc/self/mem");
    if (cmd != "report") bad_input(cmd + " /", "/");  // report takes a sweep's folder: says it has no results
  }
}

TEST_CASE("option errors are one line and exit 2, never CLI11's own codes", "[cli]") {
  bad_input("", "subcommand");                                             // F13: was 106
  bad_input("tunables extra", "extra");                                    // F13: was 109
  bad_input("budget --paths -1 --preset cx7-400g", "--paths");             // F13: was 104
  bad_input("budget --paths 1 --paths 2 --preset cx7-400g", "--paths");    // F13: was 114
  bad_input("budget --preset cx7-400g --max-cqe -1", "--max-cqe");         // F11: was 2^64-1, exit 0
  bad_input("conform --sizes -1", "--sizes");                              // F4: was std::length_error
  bad_input("conform --sizes 18446744073709551615", "--sizes");            // was std::length_error, exit 70
  bad_input("budget --preset cx7-400g --channels 4294967295", "channels"); // products wrapped, exit 0
  bad_input("imm transfer --page-kib 18014398509481984", "--page-kib");    // F3: was SIGFPE
  bad_input("imm transfer --mib 1 --page-kib 2048", "--page-kib 2048");    // F15: was "write of 0 bytes"
  bad_input("imm transfer --mib 1000000 --page-kib 1", "65536", "ulimit -v 6291456;");  // F6: was bad_alloc
  const Ran help = run_in_fresh_dir("--help");
  CHECK(help.code == 0);
  CHECK(help.out.find("70 internal error") != std::string::npos);
}

TEST_CASE("NCCL logs: long lines, huge numbers and binary garbage", "[cli]") {
  // F1: a 200 KB line of '#' segfaulted std::regex; the one real line still replays: rank 1 has
  // no lines, so the replay reports the hang (exit 1, a correct verdict, not a crash).
  const Ran f1 = run_in_fresh_dir("replay-sched " + repro("segv-long-line.log"));
  CHECK(f1.code == 1);
  CHECK(f1.out.find("HANG") != std::string::npos);
  bad_input("replay-sched " + repro("abort-datatype-out-of-range.log"), "abort-datatype-out-of-range.log:1:");  // F2
  bad_input("replay-sched " + repro("abort-count-out-of-range.log"), "abort-count-out-of-range.log:5: count");
  bad_input("replay-sched " + repro("abort-init-rank-out-of-range.log"), "rank 99999999999999999999");
  bad_input("replay-sched " + repro("wrap-init-rank-4294967296.log"), "rank 4294967296 is outside");  // F11
  bad_input("replay-sched " + repro("unclear-init-rank-2147483648.log"), "rank 2147483648 is outside");  // F15
  bad_input("replay-sched " + repro("binary-garbage.log"), "not a JSON object: ");  // F15, issue 18.3: escaped
  bad_input("replay-sched " + repro("empty.log"), "is empty");                     // F10
}

TEST_CASE("scenario and sweep numbers have ranges: no inf, nan, wrap or unbounded platform", "[cli]") {
  bad_input("run " + repro("abort-link-gbps-inf.toml"), "topology.link_gbps");  // F5: SimGrid abort
  bad_input("run " + repro("abort-rails-4294967295.toml"), "topology.rails", "ulimit -v 6291456;");  // F6
  bad_input("run " + repro("abort-ranks-1e9.toml"), "topology.ranks", "ulimit -v 6291456;");
  bad_input("run " + repro("slow-ranks-1e5.toml"), "topology.ranks", "ulimit -v 6291456;");
  bad_input("run " + repro("hang-rails-1e6.toml"), "topology.rails");  // F7: hung
  bad_input("sweep " + repro("hang-sweep-range-from-nan.toml") + " --out sw -j 1", "range.from",
            "ulimit -v 6291456;");  // F16
}

TEST_CASE("no false success: empty traces, unwritten files, ignored options, unbounded searches", "[cli]") {
  bad_input("replay " + repro("trace-no-steps.json"), "no steps");  // F10: was exit 0
  // F9: said "wrote /proc/x.toml"; the replay's verdict is printed, then the write fails.
  bad_input("replay " + repro("ce.json") + " --sim-scenario /proc/x.toml", "/proc/x.toml");
  // F12: --rank past the ranks printed no table and exited 0.
  bad_input("route moe '" + std::string(RAILCHECK_SOURCE_DIR) + "/scenarios/routing/deepseek-v3-moe-decode.toml' --rank 100000",
            "--rank 100000");
  // An option the search cannot use is refused, not ignored.
  bad_input("check '" + std::string(RAILCHECK_SOURCE_DIR) + "/verify/models/standard-naive.toml' --mode dfs --walks 5",
            "--walks applies to --mode random only");
  // F8: random mode ignored --max-states; 2^64-1 walks now stop there, inconclusive (exit 3).
  const Ran f8 = run_in_fresh_dir("check '" + std::string(RAILCHECK_SOURCE_DIR) +
                           "/verify/models/standard-naive.toml' --mode random --walks 18446744073709551615 "
                           "--max-depth 5 --max-states 1000 --trace ce.json");
  CHECK(f8.code == 3);
  // A wall-time bound holds in every search mode: inconclusive (exit 3), and it says which bound.
  for (const char* mode : {"dfs", "bfs", "random --walks 18446744073709551615"}) {
    INFO("mode " << mode);
    const Ran timed = run_in_fresh_dir("check '" + std::string(RAILCHECK_SOURCE_DIR) + "/verify/models/stress-resync.toml' --mode " +
                                mode + " --max-seconds 0.001 --trace ce.json");
    CHECK(timed.code == 3);
    CHECK_THAT(timed.out, Catch::Contains("stopped at max_seconds"));
  }
  bad_input("check '" + std::string(RAILCHECK_SOURCE_DIR) + "/verify/models/standard-naive.toml' --max-seconds nan",
            "--max-seconds");
  bad_input("check '" + std::string(RAILCHECK_SOURCE_DIR) + "/verify/models/standard-naive.toml' --max-seconds 0",
            "--max-seconds");
  // --threads: at least 1, a number, and only for the breadth-first search.
  const std::string naive = "check '" + std::string(RAILCHECK_SOURCE_DIR) + "/verify/models/standard-naive.toml'";
  bad_input(naive + " --mode bfs --threads 0", "--threads 0: give at least 1");
  bad_input(naive + " --mode bfs --threads two", "--threads");
  bad_input(naive + " --threads 2", "--threads 2 needs --mode bfs");
  bad_input("check '" + std::string(RAILCHECK_SOURCE_DIR) + "/verify/models/zerobuf_sma.toml' --mode dfs --threads 4",
            "--threads 4 needs --mode bfs");
}

TEST_CASE("inputs the fuzz campaigns found (tests/data/fuzz-found/)", "[cli]") {
  const fs::path found = fs::path(RAILCHECK_SOURCE_DIR) / "tests/data/fuzz-found";
  // A number past double's range made nlohmann throw out_of_range, which nothing caught.
  bad_input("replay '" + (found / "fuzz_trace-number-overflow.json").string() + "'", "not JSON");
  // A float where an integer belongs: nlohmann's get<int>() cast 1.1e22 to int (undefined
  // behaviour, UBSan in fuzz_trace); json_integer refuses it, naming the field.
  bad_input("replay '" + (found / "fuzz_trace-float-integer.json").string() + "'", "paths: expected an integer");
  bad_input("replay '" + (found / "fuzz_trace-float-version.json").string() + "'", "not a railcheck failover trace");
  // A two-shot LL model whose op list was refused: the piece-size check divided by its (empty)
  // length (fuzz_check_spec, UBSan: division by zero).
  bad_input("check '" + (found / "fuzz_check_spec-ll2-refused-op-list.toml").string() + "'",
            "ll.ops: expected one of");
}

TEST_CASE("railcheck report: one line, never a Python traceback", "[cli]") {
  if (std::system("python3 -c 'import matplotlib' 2>/dev/null") != 0) {
    WARN("no python3 matplotlib: railcheck report is not tested here");
    return;
  }
  bad_input("report " + repro("report-nonutf8"), "not UTF-8");           // F14
  bad_input("report " + repro("report-string-numbers"), "expected a number");
  bad_input("report " + repro("report-deep"), "nested too deeply");
  // A good results file, an output folder that cannot be made.
  const fs::path dir = fs::temp_directory_path() / ("railcheck-bad-input-report-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "results.jsonl") << R"({"point":0,"params":{"engine.rto_ms":100},"seed":1,"outcome":"delivered","failovers":0})"
                                       << "\n";
  bad_input("report '" + dir.string() + "' --out /proc/railcheck-report", "/proc/railcheck-report");
  // --panels reaches the script, which names the axes there are.
  bad_input("report '" + dir.string() + "' --out '" + (dir / "r").string() + "' --panels engine.liveness",
            "--panels engine.liveness: not an axis of this sweep (axes: engine.rto_ms)");
  fs::remove_all(dir);
}

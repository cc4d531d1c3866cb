#include <fmt/format.h>

#include <filesystem>

#include "backends/sim/sweep/child_pool.hpp"
#include "backends/sim/sweep/report_script.hpp"
#include "cli/commands.hpp"

namespace railcheck::cli {
namespace {

namespace fs = std::filesystem;

int run_script(const std::vector<std::string>& argv) {
  int code = kExitBadInput;
  auto ran = sweep::run_children({sweep::ChildJob{argv, ""}}, 1, [&](std::size_t, int c) { code = c; });
  if (!ran) {
    fmt::print(stderr, "railcheck: {}\n", ran.error().message());
    return kExitBadInput;
  }
  // The scripts exit 2 on malformed input and 70 on their own bug, each with one line.
  return code == 0 ? kExitOk : code == kExitInternal ? kExitInternal : kExitBadInput;
}

}  // namespace

int cmd_report(const ReportOptions& o) {
  // Results of the maxComms study (command = "budget") are a heatmap, not metric curves.
  const fs::path jsonl = fs::is_directory(o.results) ? fs::path(o.results) / "results.jsonl" : fs::path(o.results);
  if (sweep::holds_budget_rows(jsonl.string())) {
    const fs::path out = o.out.empty() ? jsonl.parent_path() / "report" : fs::path(o.out);
    std::error_code ec;
    fs::create_directories(out, ec);
    if (ec) {
      fmt::print(stderr, "railcheck: cannot create {}: {}\n", out.string(), ec.message());
      return kExitBadInput;
    }
    return run_script(sweep::maxcomms_heatmap_command(jsonl.string(), (out / "maxcomms.png").string()));
  }
  std::vector<std::string> extra;
  if (!o.out.empty()) extra.insert(extra.end(), {"--out", o.out});
  if (!o.x.empty()) extra.insert(extra.end(), {"--x", o.x});
  if (!o.lines.empty()) extra.insert(extra.end(), {"--lines", o.lines});
  if (!o.panels.empty()) extra.insert(extra.end(), {"--panels", o.panels});
  return run_script(sweep::report_command(o.results, extra));
}

}  // namespace railcheck::cli

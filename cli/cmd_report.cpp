#include <fmt/format.h>

#include "backends/sim/sweep/child_pool.hpp"
#include "backends/sim/sweep/report_script.hpp"
#include "cli/commands.hpp"

namespace railcheck::cli {

int cmd_report(const ReportOptions& o) {
  std::vector<std::string> extra;
  if (!o.out.empty()) extra.insert(extra.end(), {"--out", o.out});
  if (!o.x.empty()) extra.insert(extra.end(), {"--x", o.x});
  if (!o.lines.empty()) extra.insert(extra.end(), {"--lines", o.lines});
  int code = kExitBadInput;
  auto ran = sweep::run_children({sweep::ChildJob{sweep::report_command(o.results, extra), ""}}, 1,
                                 [&](std::size_t, int c) { code = c; });
  if (!ran) {
    fmt::print(stderr, "railcheck: {}\n", ran.error().message());
    return kExitBadInput;
  }
  // The script exits 2 on malformed input with its own message; anything else is a failure of it.
  return code == 0 ? kExitOk : kExitBadInput;
}

}  // namespace railcheck::cli

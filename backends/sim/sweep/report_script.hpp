#pragma once
// Where `railcheck report` finds its matplotlib scripts and which Python runs them.
#include <string>
#include <vector>

namespace railcheck::sweep {

// The command line that turns sweep results into PNGs and an HTML report:
// <python> <source>/reports/railcheck_report.py <results> <extra...>. RAILCHECK_PYTHON picks the
// interpreter; otherwise Debian's /usr/bin/python3 (where python3-matplotlib installs) when
// present, else python3 on PATH.
std::vector<std::string> report_command(const std::string& results, const std::vector<std::string>& extra);

// The maxComms study's heatmap (reports/maxcomms_heatmap.py), same interpreter choice.
std::vector<std::string> maxcomms_heatmap_command(const std::string& results_jsonl, const std::string& out_png);

// True when the first row of a results.jsonl is a `railcheck budget` point (it has "opened").
bool holds_budget_rows(const std::string& results_jsonl);

}  // namespace railcheck::sweep

#pragma once
// Where `railcheck report` finds its matplotlib script and which Python runs it.
#include <string>
#include <vector>

namespace railcheck::sweep {

// The command line that turns sweep results into PNGs and an HTML report:
// <python> <source>/reports/railcheck_report.py <results> <extra...>. RAILCHECK_PYTHON picks the
// interpreter; otherwise Debian's /usr/bin/python3 (where python3-matplotlib installs) when
// present, else python3 on PATH.
std::vector<std::string> report_command(const std::string& results, const std::vector<std::string>& extra);

}  // namespace railcheck::sweep

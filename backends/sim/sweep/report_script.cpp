#include "backends/sim/sweep/report_script.hpp"

#include <cstdlib>
#include <filesystem>

namespace railcheck::sweep {

std::vector<std::string> report_command(const std::string& results, const std::vector<std::string>& extra) {
  std::string python = "/usr/bin/python3";
  if (const char* env = std::getenv("RAILCHECK_PYTHON"); env != nullptr && *env != '\0')
    python = env;
  else if (!std::filesystem::exists(python))
    python = "/usr/bin/env";
  std::vector<std::string> argv{python};
  if (python == "/usr/bin/env") argv.emplace_back("python3");
  argv.emplace_back(std::string(RAILCHECK_REPORTS_DIR) + "/railcheck_report.py");
  argv.push_back(results);
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

}  // namespace railcheck::sweep

#include "backends/sim/sweep/report_script.hpp"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

namespace railcheck::sweep {
namespace {

std::vector<std::string> python_script(const std::string& script) {
  std::string python = "/usr/bin/python3";
  if (const char* env = std::getenv("RAILCHECK_PYTHON"); env != nullptr && *env != '\0')
    python = env;
  else if (!std::filesystem::exists(python))
    python = "/usr/bin/env";
  std::vector<std::string> argv{python};
  if (python == "/usr/bin/env") argv.emplace_back("python3");
  argv.emplace_back(std::string(RAILCHECK_REPORTS_DIR) + "/" + script);
  return argv;
}

}  // namespace

std::vector<std::string> report_command(const std::string& results, const std::vector<std::string>& extra) {
  std::vector<std::string> argv = python_script("railcheck_report.py");
  argv.push_back(results);
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

std::vector<std::string> maxcomms_heatmap_command(const std::string& results_jsonl, const std::string& out_png) {
  std::vector<std::string> argv = python_script("maxcomms_heatmap.py");
  argv.push_back(results_jsonl);
  argv.push_back(out_png);
  return argv;
}

bool holds_budget_rows(const std::string& results_jsonl) {
  std::ifstream in(results_jsonl);
  std::string line;
  if (!std::getline(in, line)) return false;
  const auto row = nlohmann::json::parse(line, nullptr, false);
  return row.is_object() && row.contains("opened");
}

}  // namespace railcheck::sweep

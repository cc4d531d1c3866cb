#pragma once
// The text of a file shipped in the source tree (scenarios/sched/...), and the recorded
// workloads of scenarios/groundtruth, for tests.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace railcheck::plan {

inline std::string shipped_file(const std::string& rel) {
  std::ifstream f(std::string(RAILCHECK_SOURCE_DIR) + "/" + rel);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The names of the recordings under scenarios/groundtruth (one folder each), sorted.
inline std::vector<std::string> groundtruth_recordings() {
  std::vector<std::string> out;
  for (const auto& d :
       std::filesystem::directory_iterator(std::string(RAILCHECK_SOURCE_DIR) + "/scenarios/groundtruth"))
    if (d.is_directory()) out.push_back(d.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace railcheck::plan

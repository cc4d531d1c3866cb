#pragma once
// The source tree's top-level folders, as the layout tests see them: every folder at the root
// but hidden ones and build trees (a folder named build* or holding a CMakeCache.txt).
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace railcheck::test {

inline std::vector<std::string> top_level_folders(const std::filesystem::path& root) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory() || name.empty() || name[0] == '.' || name.rfind("build", 0) == 0) continue;
    if (std::filesystem::exists(e.path() / "CMakeCache.txt")) continue;
    out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The subfolders of one folder, sorted.
inline std::vector<std::string> subfolders(const std::filesystem::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.is_directory()) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace railcheck::test

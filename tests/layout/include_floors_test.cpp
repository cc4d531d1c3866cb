// The floors of the tree (docs/architecture.md): engine/ is the ground floor and includes only
// engine/; models/ reads files and presets for the engine; backends/ drive the engine and never
// reach the checker or the CLI; verify/ drives the engine without any backend; swarm/ runs a
// backend under the checker's mutations; triage/ reads a job's recordings for the engine. Every
// `#include "top/..."` of every source file is checked against this table, so a header that
// reaches upward fails CI with the file, the line and the rule it breaks.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "top_level_folders.hpp"

namespace fs = std::filesystem;

namespace {

// Which top-level folders the files under each folder may include.
const std::map<std::string, std::set<std::string>> kFloors = {
    {"engine", {"engine"}},
    {"models", {"engine", "models"}},
    {"backends", {"engine", "models", "backends"}},
    {"verify", {"engine", "models", "verify"}},
    // The swarm runs the SimGrid driver under the checker's mutations (docs/swarm.md).
    {"swarm", {"engine", "models", "backends", "verify", "swarm"}},
    // Triage reads what a job recorded and replays it on the engine's scheduler model.
    {"triage", {"engine", "models", "triage"}},
    {"cli", {"engine", "models", "backends", "verify", "swarm", "triage", "cli"}},
    {"fuzz", {"engine", "models", "backends", "verify", "fuzz"}},
    // The plugin-overhead bench drives the plugin with the tests' NCCL-proxy stand-in.
    {"bench", {"engine", "models", "backends", "verify", "cli", "bench", "tests"}},
};

// Every violation as "file:line: includes X (engine/ may include only ...)".
std::vector<std::string> violations_under(const fs::path& root, const std::string& top) {
  static const std::regex include_line(R"(^\s*#\s*include\s+"([a-z_]+)/)");
  std::vector<std::string> out;
  const auto& allowed = kFloors.at(top);
  for (const auto& entry : fs::recursive_directory_iterator(root / top)) {
    const auto ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".cpp" && ext != ".hpp" && ext != ".h" && ext != ".cu" && ext != ".c"))
      continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      std::smatch m;
      if (line.size() > 400 || !std::regex_search(line, m, include_line)) continue;
      const std::string target = m[1];
      if (!kFloors.contains(target) && target != "tests") continue;  // a third-party folder
      if (allowed.contains(target)) continue;
      std::ostringstream msg;
      msg << fs::relative(entry.path(), root).string() << ":" << n << ": includes " << target << "/ (" << top
          << "/ may include only";
      for (const auto& a : allowed) msg << " " << a << "/";
      msg << ")";
      out.push_back(msg.str());
    }
  }
  return out;
}

}  // namespace

TEST_CASE("no source file includes a folder above its floor", "[layout]") {
  const fs::path root = RAILCHECK_SOURCE_DIR;
  for (const auto& [top, allowed] : kFloors) {
    if (!fs::exists(root / top)) continue;
    INFO("folder " << top);
    const auto bad = violations_under(root, top);
    for (const auto& v : bad) UNSCOPED_INFO(v);
    CHECK(bad.empty());
  }
}

TEST_CASE("every top-level folder with C++ sources has a floor", "[layout]") {
  // A new folder of sources would otherwise go unchecked: its includes name no floor.
  const fs::path root = RAILCHECK_SOURCE_DIR;
  for (const auto& top : railcheck::test::top_level_folders(root)) {
    if (top == "tests") continue;  // tests reach every floor they test
    bool has_sources = false;
    for (const auto& e : fs::recursive_directory_iterator(root / top)) {
      const auto ext = e.path().extension().string();
      if (e.is_regular_file() && (ext == ".cpp" || ext == ".hpp" || ext == ".cu")) {
        has_sources = true;
        break;
      }
    }
    INFO("folder " << top << "/ has C++ sources: add it to kFloors and to docs/architecture.md's Floors");
    CHECK((!has_sources || kFloors.contains(top)));
  }
}

TEST_CASE("the floor check catches an upward include", "[layout]") {
  // A scratch tree with one engine file that reaches into models/: the check must name it.
  const fs::path root = fs::temp_directory_path() / "railcheck-include-floors-test";
  fs::remove_all(root);
  fs::create_directories(root / "engine" / "plan");
  std::ofstream(root / "engine" / "plan" / "bad.cpp") << "#include <vector>\n"
                                                      << "#include \"engine/core/ids.hpp\"\n"
                                                      << "#include \"models/toml_reader.hpp\"\n";
  const auto bad = violations_under(root, "engine");
  fs::remove_all(root);
  REQUIRE(bad.size() == 1);
  CHECK(bad[0].find("engine/plan/bad.cpp:3: includes models/") != std::string::npos);
}

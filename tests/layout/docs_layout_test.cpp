// README's Layout and docs/architecture.md are where a newcomer learns the tree: every top-level
// folder and every engine/ subfolder must be in both, so a folder added without a word fails
// here, naming the folder and the document.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "top_level_folders.hpp"

namespace fs = std::filesystem;

namespace {

std::string read_doc(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// README's "## Layout" section (up to the next "## ").
std::string layout_section(const std::string& readme) {
  const auto start = readme.find("\n## Layout\n");
  if (start == std::string::npos) return "";
  const auto end = readme.find("\n## ", start + 1);
  return readme.substr(start, end == std::string::npos ? std::string::npos : end - start);
}

// `path` named as a path in `text`, not inside a longer name: "docs/" (or "backends/sim", a
// path under it) for a folder ending in '/'; "engine/plan" whole, not "engine/planner".
bool names_path(const std::string& text, const std::string& path) {
  const std::string tail = path.back() == '/' ? "" : "($|[^A-Za-z0-9_])";
  const std::regex re("(^|[^A-Za-z0-9_/])" + path + tail);
  return std::regex_search(text, re);
}

// Every folder the documents must name: "x/" for each top-level folder, "engine/x" for each
// engine/ subfolder.
std::vector<std::string> folders_to_document(const fs::path& root) {
  std::vector<std::string> out;
  for (const auto& top : railcheck::test::top_level_folders(root)) out.push_back(top + "/");
  for (const auto& sub : railcheck::test::subfolders(root / "engine")) out.push_back("engine/" + sub);
  return out;
}

std::vector<std::string> missing_from(const std::string& text, const std::vector<std::string>& paths) {
  std::vector<std::string> out;
  for (const auto& p : paths)
    if (!names_path(text, p)) out.push_back(p);
  return out;
}

}  // namespace

TEST_CASE("README's Layout names every top-level folder and every engine/ subfolder", "[layout][docs]") {
  const fs::path root = RAILCHECK_SOURCE_DIR;
  const std::string layout = layout_section(read_doc(root / "README.md"));
  REQUIRE_FALSE(layout.empty());
  const auto missing = missing_from(layout, folders_to_document(root));
  for (const auto& m : missing) UNSCOPED_INFO("README.md Layout does not name " << m);
  CHECK(missing.empty());
}

TEST_CASE("docs/architecture.md names every top-level folder and every engine/ subfolder", "[layout][docs]") {
  const fs::path root = RAILCHECK_SOURCE_DIR;
  const std::string arch = read_doc(root / "docs" / "architecture.md");
  REQUIRE_FALSE(arch.empty());
  const auto missing = missing_from(arch, folders_to_document(root));
  for (const auto& m : missing) UNSCOPED_INFO("docs/architecture.md does not name " << m);
  CHECK(missing.empty());
}

TEST_CASE("the docs layout check names a folder the documents leave out", "[layout][docs]") {
  // A scratch tree with engine/ holding one named and one unnamed protocol folder, and one
  // unnamed top-level folder; a build tree and a hidden folder are not the source's.
  const fs::path root = fs::temp_directory_path() / "railcheck-docs-layout-test";
  fs::remove_all(root);
  for (const char* d : {"engine/core", "engine/newproto", "tools", "build-asan", ".git", "out/CMakeFiles"})
    fs::create_directories(root / d);
  std::ofstream(root / "out" / "CMakeCache.txt") << "";
  const std::string doc = "engine/core   time\nengine/  the engine\nengine/newprotocol  not it\n";
  const auto missing = missing_from(doc, folders_to_document(root));
  fs::remove_all(root);
  CHECK(missing == std::vector<std::string>{"tools/", "engine/newproto"});
  CHECK(names_path("| `swarm/` | x |", "swarm/"));
  CHECK_FALSE(names_path("see verify/swarm/ here", "swarm/"));
  CHECK(names_path("scenarios/ sweeps/ files", "sweeps/"));
  CHECK(names_path("backends/sim   SimGrid driver", "backends/"));
}

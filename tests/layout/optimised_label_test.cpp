// Which tree runs which test (docs/ci.md, "Each test where it finds most"): the sanitizer tree
// runs every case, the optimised tree (`ctest -L optimised`) every case of a source that is
// different there, checks the release allocator or says it needs that build. tests/CMakeLists.txt
// picks them with Catch2's file-name tags; this checks what CTest was actually given: each such
// source's cases carry the label, and no other Catch2 case does. A case that lost the label would
// run its full-size variant nowhere.
#include <catch2/catch.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>

namespace fs = std::filesystem;

namespace {

// Catch2's --list-test-names-only exits with the number of cases it listed, so only the other
// commands' exit status is checked.
std::string output_of(const std::string& command, bool check_exit = true) {
  std::string out;
  FILE* pipe = popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, pipe)) > 0;) out.append(buf, n);
  const int status = pclose(pipe);
  if (check_exit) CHECK(status == 0);
  return out;
}

std::string quoted(const std::string& s) { return "'" + s + "'"; }  // no quote in our paths or specs

// Whether a test source says it differs in the optimised tree, by the markers tests/CMakeLists.txt
// reads (spelled in two pieces here so this file does not match them itself).
bool differs_in_optimised_tree(const fs::path& src) {
  std::ifstream in(src);
  std::stringstream text;
  text << in.rdbuf();
  const std::string prefix = "RAILCHECK_";
  for (const char* marker : {"SANITIZE", "EXPECT_JEMALLOC", "OPTIMISED_TREE"})
    if (text.str().find(prefix + marker) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("the optimised tree's label is on every case of a source that differs there, and on no other case",
          "[layout][ci]") {
  const fs::path tests = fs::path(RAILCHECK_SOURCE_DIR) / "tests";
  const fs::path bin_dir = RAILCHECK_BINARY_DIR;
  const auto listing = nlohmann::json::parse(
      output_of(quoted(RAILCHECK_CTEST) + " --test-dir " + quoted(bin_dir.string()) + " --show-only=json-v1"));
  std::map<std::string, bool> labelled;  // Catch2 cases CTest knows: name -> has "optimised"
  for (const auto& t : listing["tests"]) {
    if (!t.contains("command") || t["command"][0].get<std::string>().find("/railcheck_tests_") == std::string::npos)
      continue;
    bool optimised = false;
    for (const auto& p : t.value("properties", nlohmann::json::array()))
      if (p["name"] == "LABELS")
        for (const auto& l : p["value"]) optimised = optimised || l == "optimised";
    labelled[t["name"].get<std::string>()] = optimised;
  }
  REQUIRE(labelled.size() > 100);

  std::set<std::string> expected;  // every case of every source that differs
  for (const auto& e : fs::recursive_directory_iterator(tests)) {
    const std::string name = e.path().filename().string();
    if (!e.is_regular_file() || name.size() < 9 || name.substr(name.size() - 9) != "_test.cpp") continue;
    if (!differs_in_optimised_tree(e.path())) continue;
    std::string area = fs::relative(e.path().parent_path(), tests).string();
    for (char& c : area)
      if (c == '/') c = '_';
    const fs::path binary = bin_dir / "tests" / ("railcheck_tests_" + area);
    if (!fs::exists(binary)) continue;  // a tree that does not build this binary (no CUDA here)
    std::istringstream names(output_of(quoted(binary.string()) + " -# " +
                                       quoted("~[.][#" + e.path().stem().string() + "]") +
                                       " --list-test-names-only",
                                       false));
    for (std::string line; std::getline(names, line);)
      if (!line.empty()) expected.insert(line);
  }
  REQUIRE(!expected.empty());
  for (const auto& [name, optimised] : labelled) {
    INFO(name);
    CHECK(optimised == (expected.count(name) == 1));
  }
  for (const auto& name : expected) {
    INFO(name << " (a case of a source that differs in the optimised tree)");
    CHECK(labelled.count(name) == 1);
  }
}

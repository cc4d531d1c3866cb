// Every TEST_CASE runs under CTest. catch_discover_tests (Catch2 2.x) splits a discovered name at
// ';', so a test named "a; b" is registered as "a", whose filter matches no test case: Catch
// prints "No test cases matched" and CTest counts it as passed without running it. Names must
// not hold ';' (a ',' is escaped and fine).
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

// Every "file:line: name" under `root` whose TEST_CASE name holds a ';'.
std::vector<std::string> names_ctest_would_skip(const fs::path& root) {
  static const std::regex test_case(R"(TEST_CASE\s*\(\s*"((?:[^"\\]|\\.)*)\")");
  std::vector<std::string> out;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cpp") continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      std::smatch m;
      if (line.size() > 400 || !std::regex_search(line, m, test_case)) continue;
      if (m[1].str().find(';') != std::string::npos)
        out.push_back(fs::relative(entry.path(), root).string() + ":" + std::to_string(n) + ": " + m[1].str());
    }
  }
  return out;
}

}  // namespace

TEST_CASE("no test case name holds a semicolon, which CTest would cut and never run", "[layout]") {
  const auto bad = names_ctest_would_skip(fs::path(RAILCHECK_SOURCE_DIR) / "tests");
  for (const auto& b : bad) UNSCOPED_INFO(b);
  CHECK(bad.empty());
}

TEST_CASE("the test-name check finds a semicolon in a name", "[layout]") {
  const fs::path root = fs::temp_directory_path() / "railcheck-test-names-test";
  fs::remove_all(root);
  fs::create_directories(root / "area");
  std::ofstream(root / "area" / "x_test.cpp") << "TEST_CASE(\"fine, with a comma\") {}\n"
                                              << "TEST_CASE(\"cut here; never run\", \"[tag]\") {}\n";
  const auto bad = names_ctest_would_skip(root);
  fs::remove_all(root);
  REQUIRE(bad.size() == 1);
  CHECK(bad[0] == "area/x_test.cpp:2: cut here; never run");
}

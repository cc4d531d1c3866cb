// The railcheck executable runs on the allocator it was built for: jemalloc wherever the build
// found it (CMakeLists.txt, RAILCHECK_JEMALLOC), glibc's malloc otherwise, a sanitizer's in the
// sanitizer trees. A link that dropped jemalloc (an --as-needed linker) would still build and
// pass every other test while the checker ran up to twice slower; this is where that shows.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "cli/allocator.hpp"
#include "tests/cli/railcheck_exe.hpp"

namespace fs = std::filesystem;

TEST_CASE("railcheck --version names the allocator it runs on: jemalloc where the build linked it") {
  const fs::path dir = fs::temp_directory_path() / ("railcheck-allocator-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const exe::Ran r = exe::run_railcheck(dir, "--version");
  fs::remove_all(dir);
  INFO(r.out << r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("railcheck 0.1.0 (allocator: ") != std::string::npos);
#ifdef RAILCHECK_EXPECT_JEMALLOC
  CHECK(r.out.find("(allocator: jemalloc)") != std::string::npos);
#else
  CHECK(r.out.find("jemalloc") == std::string::npos);
#endif
}

TEST_CASE("the allocator check answers jemalloc exactly when jemalloc is loaded") {
  // The test binaries never link jemalloc (only the executables do), so this process has it only
  // when someone preloads it.
  const char* preload = std::getenv("LD_PRELOAD");
  const bool preloaded = preload != nullptr && std::string(preload).find("jemalloc") != std::string::npos;
  CHECK((railcheck::cli::allocator_name() == "jemalloc") == preloaded);
}

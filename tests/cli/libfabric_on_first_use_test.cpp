// libfabric is loaded on first use (backends/hw/libfabric/libfabric_loader.cpp): a command that
// never talks to a provider does not load it, and one that does names the cause when it cannot.
// The proof uses a broken libfabric.so.1 first on the library path: a linked libfabric would stop
// every command at process start ("error while loading shared libraries").
#include <unistd.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <filesystem>
#include <fstream>

#include "tests/cli/railcheck_exe.hpp"

namespace fs = std::filesystem;

namespace {
fs::path folder_with_broken_libfabric() {
  const fs::path dir = fs::temp_directory_path() / ("railcheck-broken-libfabric-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "libfabric.so.1") << "not a shared object\n";
  return dir;
}
}  // namespace

TEST_CASE("a command that needs no provider runs with a broken libfabric on the library path", "[cli][libfabric]") {
  const fs::path dir = folder_with_broken_libfabric();
  const auto r = exe::run_railcheck(dir, "tunables", "", "env LD_LIBRARY_PATH='" + dir.string() + "'");
  INFO(r.err);
  CHECK(r.code == 0);
  CHECK(r.out.find("HA_NCCL_QP_TIMEOUT") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("a command that needs a provider says libfabric could not be loaded, in one line, exit 2",
          "[cli][libfabric]") {
  const fs::path dir = folder_with_broken_libfabric();
  const auto r = exe::run_railcheck(dir, "conform --provider 'tcp;ofi_rxm' --sizes 64", "",
                                    "env LD_LIBRARY_PATH='" + dir.string() + "'");
  INFO(r.out << r.err);
  CHECK(r.code == 2);
  CHECK(r.err.find("libfabric.so.1 could not be loaded") != std::string::npos);
  CHECK(r.err.find((dir / "libfabric.so.1").string()) != std::string::npos);  // dlopen's own reason
  CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
  fs::remove_all(dir);
}

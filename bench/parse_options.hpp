#pragma once
// How the benches with CLI11 options read them: --help prints and exits 0; a bad option is one
// line on stderr and exit 2, as `railcheck` and the --quick benches (quick_flag.hpp) do (CLI11
// alone would exit 101..114).
#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>

namespace railcheck::bench {

// The exit code main() returns at once, or nothing when the options were read.
inline std::optional<int> parse_options(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "%s: %s (--help lists the options)\n", argv[0], e.what());
    return 2;
  }
  return std::nullopt;
}

}  // namespace railcheck::bench

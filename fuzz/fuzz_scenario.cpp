// Scenario TOML (models/scenario.hpp): every input is a scenario or one error, never a crash.
#include "fuzz/fuzz_input.hpp"
#include "models/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto sc = railcheck::load_scenario_string(railcheck::fuzz::as_text(data, size), "fuzz.toml");
  if (!sc) (void)sc.error().message();
  return 0;
}

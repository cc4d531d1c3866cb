// Routing specs of `railcheck route weights|moe` (backends/sim/routing/route_spec.hpp).
#include "backends/sim/routing/route_spec.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string path = railcheck::fuzz::as_file(data, size, ".toml");
  (void)railcheck::sim::load_weights_spec(path);
  (void)railcheck::sim::load_moe_spec(path);
  return 0;
}

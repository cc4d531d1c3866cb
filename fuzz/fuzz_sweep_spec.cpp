// Sweep files (backends/sim/sweep/): the loader, then the expansion into points and each point's
// scenario text, since a range's values are only made there.
#include "backends/sim/sweep/sweep_points.hpp"
#include "backends/sim/sweep/sweep_spec.hpp"
#include "fuzz/fuzz_input.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace railcheck::sweep;
  auto spec = load_sweep_string(railcheck::fuzz::as_text(data, size), "fuzz.toml", "/nonexistent-fuzz-dir");
  if (!spec) return 0;
  const auto points = expand(spec.value());
  std::size_t n = 0;
  for (const auto& p : points) {
    if (++n > 64) break;
    (void)point_scenario(spec.value(), p);
  }
  return 0;
}

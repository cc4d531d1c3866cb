// Short text fields read from the environment or the command line: the NCCL plugin's fault plan
// (HA_NCCL_FAULT_PLAN, backends/hw/nccl), a bootstrap socket address (backends/hw/bootstrap),
// a sweep shard "K/N", a checker step and a mutation name (verify/). The first byte picks.
#include <string>

#include "backends/hw/bootstrap/socket_address.hpp"
#include "backends/hw/nccl/fault_plan.hpp"
#include "backends/sim/sweep/sweep_points.hpp"
#include "fuzz/fuzz_input.hpp"
#include "verify/choice.hpp"
#include "verify/mutation.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string_view text = railcheck::fuzz::as_text(data + 1, size - 1);
  switch (data[0] % 5) {
    case 0:
      if (auto p = railcheck::nccl::parse_fault_plan(text); p && p.value()) (void)railcheck::nccl::describe(*p.value());
      break;
    case 1:
      (void)railcheck::hw::parse_socket_address(text);
      break;
    case 2:
      (void)railcheck::sweep::parse_shard(text);
      break;
    case 3:
      if (auto c = railcheck::verify::parse_choice(text)) (void)railcheck::verify::to_string(*c);
      break;
    case 4:
      (void)railcheck::verify::parse_mutation(text);
      break;
  }
  return 0;
}

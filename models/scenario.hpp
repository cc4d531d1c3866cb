#pragma once
// A scenario: topology, workload, faults and engine tunables, read from TOML. A run is a pure
// function of (Scenario, seed).
#include <cstdint>
#include <string>
#include <vector>

#include "engine/core/result.hpp"
#include "engine/core/time.hpp"
#include "engine/failover/ha_tunables.hpp"
#include "models/fault_profile.hpp"
#include "models/nic_preset.hpp"

namespace railcheck {

struct Topology {
  std::uint32_t ranks = 2;
  std::uint32_t rails = 2;           // NICs per rank, one switch per rail
  std::uint32_t paths_per_conn = 2;  // primary + standbys; <= rails
  NicPreset nic;                     // from [topology] nic = "<preset>", fields overridable
};

enum class TrafficPattern : std::uint8_t {
  Bidirectional,   // ranks exchange with their ring neighbours in both directions
  Unidirectional,  // rank r sends to rank r+1 only
};

struct Workload {
  TrafficPattern pattern = TrafficPattern::Bidirectional;
  std::uint64_t message_bytes = 1 << 20;
  std::uint32_t messages = 64;   // per connection
  std::uint32_t window = 8;      // outstanding isends (and pre-posted irecvs) per connection
  std::uint32_t channels = 1;    // connections per (rank, peer, direction); channel c's primary is rail c % rails
  std::uint32_t recv_group = 1;  // buffers per grouped irecv (1 = plain receive)
  Nanos start{};                 // when the stream starts (after the handshake)
  Nanos receiver_hold{};         // slow receiver: wait this long before re-posting each irecv
  std::vector<std::uint32_t> slow_ranks;  // ranks that apply receiver_hold (empty = none)
};

struct Scenario {
  std::string name;
  std::string description;
  std::string source_path;  // file it came from, for messages
  std::uint64_t seed = 1;
  Topology topology;
  Workload workload;
  FaultProfile faults;
  HaTunables engine;
  Nanos time_limit = sec(60);  // simulated time after which the run stops and reports a hang
};

// Parse and validate. Errors name the file, the line and what was expected, e.g.
//   scenarios/x.toml:12: workload.messages: expected a positive integer, got -3
Result<Scenario> load_scenario_file(const std::string& path);
Result<Scenario> load_scenario_string(std::string_view toml_text, const std::string& name_for_errors);

}  // namespace railcheck

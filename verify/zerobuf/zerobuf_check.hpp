#pragma once
// `railcheck check` and `railcheck replay` for the zero-buffer worlds: model files
// (verify/models/zerobuf_*.toml), the search, and counterexample traces that replay step by step.
//
// Model file:
//   name = "zerobuf-allreduce"
//   world = "zerobuf-flags"            # or "zerobuf-sma", "zerobuf-ll", "zerobuf-direct"
//   mutation = "none"                  # flag_, sma_, ll_, direct_mutation_names()
//   invariants = ["no-flag-aba"]       # optional subset
//   [flags]   ranks = 3, iterations = 2, ops = ["all-reduce"], dead_ranks = 0, in_place = false
//   [sma]     streams = 2, ops = 6, live_max = 3, capture = true, borrow = true
//   [ll], [direct]                     the fast paths' worlds: fast_path_spec.hpp
//   [search]  mode = "dfs", max_states = ..., max_depth = ...
//
// Trace file (JSON): { "railcheck_trace": 1, "world": "zerobuf-flags", "model": {...},
//   "invariant": "...", "message": "...", "steps": ["between r0", "step r1", ...] }
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"
#include "verify/explorer.hpp"
#include "verify/zerobuf/direct_world.hpp"
#include "verify/zerobuf/flag_world.hpp"
#include "verify/zerobuf/ll_world.hpp"
#include "verify/zerobuf/sma_world.hpp"

namespace railcheck::verify::zerobuf {

enum class WorldKind : std::uint8_t { Flags, Sma, Ll, Direct };
inline constexpr WorldKind kZerobufWorlds[] = {WorldKind::Flags, WorldKind::Sma, WorldKind::Ll, WorldKind::Direct};

struct ZerobufSpec {
  WorldKind world = WorldKind::Flags;
  FlagModel flags;
  SmaModel sma;
  LlModel ll;
  DirectModel direct;
  SearchLimits limits;
  std::vector<std::string> invariants;  // empty: all
};

// True when a TOML or JSON text names a zero-buffer world (world = "zerobuf-...").
bool names_zerobuf_world(std::string_view text);
Result<ZerobufSpec> load_zerobuf_spec_string(std::string_view text, const std::string& name_for_errors);
Result<ZerobufSpec> load_zerobuf_spec_file(const std::string& path);
std::string describe(const ZerobufSpec& s);
// The model's `name` (the file's stem when it has none).
const std::string& model_name(const ZerobufSpec& s);
std::string_view world_name(WorldKind k);
// "name  description" lines of the world's invariants.
std::vector<std::string> invariant_lines(WorldKind k);

struct ZerobufOutcome {
  SearchStats stats;
  std::optional<std::string> invariant, message;
  std::vector<std::string> steps;  // the counterexample's choices, from the initial state
};
// Error: an invariant name the world does not have.
Result<ZerobufOutcome> check_zerobuf(const ZerobufSpec& spec,
                                     const std::function<void(const SearchStats&)>& progress = {});

std::string write_zerobuf_trace(const ZerobufSpec& spec, const ZerobufOutcome& o);
struct ZerobufTrace {
  ZerobufSpec spec;
  std::vector<std::string> steps;
  std::string invariant, message;
};
Result<ZerobufTrace> read_zerobuf_trace(std::string_view text, const std::string& name_for_errors);

struct ZerobufReplay {
  std::vector<std::string> lines;  // numbered steps with what each did
  std::optional<std::string> invariant, message;
  std::size_t steps_run = 0;
};
// Error: a step that is not possible there (the engine or the world changed since the trace).
Result<ZerobufReplay> replay_zerobuf(const ZerobufTrace& t);

}  // namespace railcheck::verify::zerobuf

// Model files of the ImmCounter world (imm_world.hpp).
#include <fmt/format.h>

#include <filesystem>

#include "models/toml_reader.hpp"
#include "verify/check_spec.hpp"
#include "verify/imm/imm_world.hpp"

namespace railcheck::imm {

Result<ImmModelSpec> load_imm_model(std::string_view text, const std::string& file) {
  auto doc = parse_toml(text, file, "see docs/verify.md for the model file format");
  if (!doc) return doc.error();
  TomlReader reader(file);
  TomlTable root(reader, &doc.value(), "");
  root.allow_only({"name", "world", "policy", "invariants", "bounds", "search"});
  ImmModelSpec spec;
  spec.model.name = root.text("name").value_or(std::filesystem::path(file).stem().string());
  if (auto p = root.text("policy")) {
    if (auto policy = parse_replay_policy(*p)) {
      spec.model.policy = *policy;
    } else {
      root.fail("policy", "\"naive\", \"probe\" or \"resync\"", fmt::format("\"{}\"", *p));
    }
  }
  TomlTable b = root.table("bounds");
  b.allow_only({"writes", "failover"});
  // Up to (2N)! orders per fate assignment and 4^N assignments: 6 writes is already ~10^12.
  spec.model.writes = b.whole<std::uint32_t>("writes", {1, 6}).value_or(spec.model.writes);
  spec.model.failover = verify::read_flag(b, "failover").value_or(spec.model.failover);
  verify::read_search_table(root.table("search"), spec.limits);
  std::vector<std::string> known;
  for (const auto& inv : imm_invariants()) known.push_back(inv.name);
  spec.invariants = verify::read_invariant_names(root, known);
  if (reader.failed()) return *reader.error();
  return spec;
}

std::string to_model_toml(const ImmModel& m) {
  return fmt::format("name = \"{}\"\nworld = \"imm\"\npolicy = \"{}\"\n\n[bounds]\nwrites = {}\nfailover = {}\n",
                     m.name, to_string(m.policy), m.writes, m.failover);
}

std::string describe(const ImmModel& m) {
  return fmt::format("{} WRITE_IMMs counted by one ImmCounter, {}, every arrival order and expectation point", m.writes,
                     m.failover
                         ? fmt::format("one failover with every fate of every write and {} replay", to_string(m.policy))
                         : std::string("no failover"));
}

}  // namespace railcheck::imm

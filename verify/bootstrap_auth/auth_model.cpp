// Model files of the authenticated bootstrap world (auth_model.hpp).
#include "verify/bootstrap_auth/auth_model.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "models/toml_reader.hpp"
#include "verify/check_spec.hpp"

namespace railcheck::bootstrap {

Result<AuthModelSpec> load_auth_model(std::string_view text, const std::string& file) {
  auto doc = parse_toml(text, file, "see docs/verify.md for the model file format");
  if (!doc) return doc.error();
  TomlReader reader(file);
  TomlTable root(reader, &doc.value(), "");
  root.allow_only({"name", "world", "authenticated", "invariants", "bounds", "search"});
  AuthModelSpec spec;
  spec.model.name = root.text("name").value_or(std::filesystem::path(file).stem().string());
  spec.model.config.authenticated = verify::read_flag(root, "authenticated").value_or(true);
  TomlTable b = root.table("bounds");
  b.allow_only({"ranks", "attacks"});
  // The world asserts 1..4 ranks; past 3 ranks with an attack the state count is beyond a run.
  spec.model.config.ranks = b.whole<std::uint32_t>("ranks", {1, 4}).value_or(spec.model.config.ranks);
  spec.model.config.attacks = b.whole<std::uint32_t>("attacks", {0, 4}).value_or(spec.model.config.attacks);
  verify::read_search_table(root.table("search"), spec.limits);
  std::vector<std::string> known;
  for (const auto& inv : auth_world_invariants()) known.push_back(inv.name);
  spec.invariants = verify::read_invariant_names(root, known);
  if (reader.failed()) return *reader.error();
  return spec;
}

std::string to_model_toml(const AuthModel& m) {
  return fmt::format(
      "name = \"{}\"\nworld = \"bootstrap-auth\"\nauthenticated = {}\n\n[bounds]\nranks = {}\nattacks = {}\n", m.name,
      m.config.authenticated, m.config.ranks, m.config.attacks);
}

std::string describe(const AuthModel& m) {
  return fmt::format(
      "the bootstrap's root and {} rank(s) {}, every delivery order, an attacker with {} frame(s) to replay, alter, "
      "forge or bring from another job",
      m.config.ranks, m.config.authenticated ? "under the job key (wire v2)" : "WITHOUT a key (wire v1)",
      m.config.attacks);
}

}  // namespace railcheck::bootstrap

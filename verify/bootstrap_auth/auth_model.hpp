#pragma once
// Model files of the authenticated bootstrap world (auth_world.hpp), for `railcheck check`
// (world = "bootstrap-auth", docs/verify.md):
//
//   name = "bootstrap-auth-3ranks"
//   world = "bootstrap-auth"
//   authenticated = true      # false: wire v1, no key (the checker must find the attack)
//   [bounds]
//   ranks = 3                 # 1..4
//   attacks = 1               # the attacker's budget of injected frames, 0..4
//   [search]                  # as every world's
#include <string>
#include <string_view>
#include <vector>

#include "engine/core/result.hpp"
#include "verify/bootstrap_auth/auth_world.hpp"
#include "verify/explorer.hpp"

namespace railcheck::bootstrap {

struct AuthModel {
  std::string name = "bootstrap-auth";
  AuthWorldConfig config;
};

struct AuthModelSpec {
  AuthModel model;
  verify::SearchLimits limits;
  std::vector<std::string> invariants;  // names; empty = all
};

Result<AuthModelSpec> load_auth_model(std::string_view text, const std::string& file);
std::string to_model_toml(const AuthModel& m);
std::string describe(const AuthModel& m);

}  // namespace railcheck::bootstrap

#include "engine/failover/ha_tunables.hpp"

#include <algorithm>
#include <catch2/catch.hpp>
#include <cctype>
#include <map>
#include <string>
#include <vector>

using namespace railcheck;

namespace {
Result<bool> apply(HaTunables& t, const std::map<std::string, std::string>& env) {
  std::vector<std::string> names;
  for (const auto& [k, v] : env) names.push_back(k);
  return apply_environment(
      t, [&](const char* n) { return env.count(n) != 0 ? env.at(n).c_str() : nullptr; }, names);
}
}  // namespace

TEST_CASE("HA_NCCL_* variables configure the engine", "[tunables]") {
  HaTunables t;
  REQUIRE(apply(t, {{"HA_NCCL_QP_TIMEOUT", "12"},
                    {"HA_NCCL_RTO_MS", "2500"},
                    {"HA_NCCL_REPLAY_POLICY", "probe"},
                    {"HA_NCCL_ENABLE_BACKUP", "0"},
                    {"NCCL_DEBUG", "INFO"}})
              .ok());
  CHECK(t.qp.timeout == 12);
  CHECK(t.soft_rto == ms(2500));
  CHECK(t.replay == ReplayPolicy::Probe);
  CHECK_FALSE(t.enable_backup);
}

TEST_CASE("a bad HA_NCCL_* variable is an error naming it", "[tunables]") {
  HaTunables t;
  auto typo = apply(t, {{"HA_NCCL_RTO_MSS", "10"}});
  REQUIRE_FALSE(typo.ok());
  CHECK_THAT(typo.error().what, Catch::Contains("unknown variable HA_NCCL_RTO_MSS"));
  auto range = apply(t, {{"HA_NCCL_QP_RETRY_CNT", "9"}});
  REQUIRE_FALSE(range.ok());
  CHECK_THAT(range.error().what, Catch::Contains("HA_NCCL_QP_RETRY_CNT"));
  auto nan = apply(t, {{"HA_NCCL_HEARTBEAT_MS", "fast"}});
  REQUIRE_FALSE(nan.ok());
  CHECK_THAT(nan.error().what, Catch::Contains("not a number"));
}

TEST_CASE("every tunable has a distinct key and HA_NCCL_ variable and its default is in range", "[tunables]") {
  const HaTunables defaults;
  std::vector<std::string> keys;
  std::vector<std::string> envs;
  for (const auto& row : tunable_table()) {
    INFO(row.key);
    CHECK(std::string(row.env).rfind("HA_NCCL_", 0) == 0);
    const auto v = get_tunable(defaults, row.key);
    REQUIRE(v);
    CHECK(*v >= row.min);
    CHECK(*v <= row.max);
    HaTunables copy;
    CHECK(set_tunable(copy, row.key, *v).ok());  // every key round-trips through the setter
    keys.emplace_back(row.key);
    envs.emplace_back(row.env);
  }
  std::sort(keys.begin(), keys.end());
  std::sort(envs.begin(), envs.end());
  CHECK(std::adjacent_find(keys.begin(), keys.end()) == keys.end());
  CHECK(std::adjacent_find(envs.begin(), envs.end()) == envs.end());
}

TEST_CASE("each tunable's one line sets and reads its own field, and only that one", "[tunables]") {
  // The struct, set_tunable and get_tunable all expand RAILCHECK_HA_TUNABLES: setting a key to its
  // minimum and to its maximum reads back that value and leaves every other key at its default.
  const HaTunables defaults;
  for (const auto& row : tunable_table()) {
    for (const double v : {row.min, row.max}) {
      INFO(row.key << " = " << v);
      HaTunables t;
      REQUIRE(set_tunable(t, row.key, v).ok());
      const auto read = get_tunable(t, row.key);
      REQUIRE(read);
      CHECK(*read == Approx(v));
      for (const auto& other : tunable_table())
        if (other.key != row.key) CHECK(get_tunable(t, other.key) == get_tunable(defaults, other.key));
    }
  }
  CHECK_FALSE(get_tunable(defaults, "no_such_key"));
}

TEST_CASE("each HA_NCCL_ variable is HA_NCCL_ and its key in capitals", "[tunables]") {
  for (const auto& row : tunable_table()) {
    std::string expected = "HA_NCCL_";
    for (const char c : row.key) expected += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    CHECK(row.env == expected);
  }
}

TEST_CASE("a tunable's docs row holds its default, range, unit, variable and meaning", "[tunables][docs]") {
  const TunableInfo* rto = find_tunable("rto_max_ms");
  REQUIRE(rto != nullptr);
  CHECK(tunable_doc_row(*rto) ==
        "| `rto_max_ms` | 5000 | 1 .. 600000 | ms | `HA_NCCL_RTO_MAX_MS` | cap for adaptive RTO widening (seed 16.7); "
        "must not be below the soft RTO |");
  CHECK_THAT(tunable_doc_row(*find_tunable("rto_backoff")), Catch::StartsWith("| `rto_backoff` | 1.5 | 1 .. 10 |"));
}

#include "backends/hw/nccl/plugin_config.hpp"

#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "backends/hw/nccl/fault_plan.hpp"

using namespace railcheck;
using namespace railcheck::nccl;

namespace {
Result<PluginConfig> read(const std::map<std::string, std::string>& env) {
  std::vector<std::string> names;
  for (const auto& [k, v] : env) names.push_back(k);
  return read_plugin_config([&](const char* n) { return env.count(n) != 0 ? env.at(n).c_str() : nullptr; }, names);
}
}  // namespace

TEST_CASE("plugin settings and engine tunables come from one environment", "[nccl][config]") {
  auto c = read({{"HA_NCCL_PROVIDER", "shm"},
                 {"HA_NCCL_RAIL_GROUPS", "2"},
                 {"HA_NCCL_RAILS_PER_GROUP", "3"},
                 {"HA_NCCL_SPEED_MBPS", "25000"},
                 {"HA_NCCL_RTO_MS", "1500"},
                 {"HA_NCCL_MAX_RECVS", "4"}});
  REQUIRE(c.ok());
  CHECK(c->provider == "shm");
  CHECK(c->rail_groups == 2);
  CHECK(c->rails_per_group == 3);
  CHECK(c->speed_mbps == 25000);
  CHECK(c->engine.soft_rto == ms(1500));
  CHECK(c->engine.max_recvs == 4);
  CHECK(c->engine.enable_backup);
}

TEST_CASE("defaults hold with no HA_NCCL_* variable set", "[nccl][config]") {
  auto c = read({});
  REQUIRE(c.ok());
  CHECK(c->provider == "auto");  // net where libfabric has it, else tcp;ofi_rxm (resolve_provider)
  CHECK(c->stage_bytes == 65536);  // below NCCL's 128 KiB p2p chunk: no copy of those (issue 42)
  CHECK(c->rail_groups == 1);
  CHECK(c->rails_per_group == 2);
  CHECK(c->max_requests == 32);
  for (const auto& row : plugin_setting_table()) CHECK(row.env.rfind("HA_NCCL_", 0) == 0);
}

TEST_CASE("one rail per group turns the standby off", "[nccl][config]") {
  auto c = read({{"HA_NCCL_RAILS_PER_GROUP", "1"}});
  REQUIRE(c.ok());
  CHECK_FALSE(c->engine.enable_backup);
}

TEST_CASE("bad HA_NCCL_* values are errors that name the variable and the range", "[nccl][config]") {
  auto range = read({{"HA_NCCL_RAIL_GROUPS", "0"}});
  REQUIRE_FALSE(range.ok());
  CHECK_THAT(range.error().message(), Catch::Contains("HA_NCCL_RAIL_GROUPS=0") && Catch::Contains("1 .. 16"));
  auto word = read({{"HA_NCCL_MAX_REQUESTS", "lots"}});
  REQUIRE_FALSE(word.ok());
  CHECK_THAT(word.error().what, Catch::Contains("not a number"));
  auto frac = read({{"HA_NCCL_RAILS_PER_GROUP", "1.5"}});
  REQUIRE_FALSE(frac.ok());
  CHECK_THAT(frac.error().what, Catch::Contains("whole number"));
  auto preset = read({{"HA_NCCL_NIC_PRESET", "cx9-9000g"}});
  REQUIRE_FALSE(preset.ok());
  CHECK_THAT(preset.error().message(), Catch::Contains("cx7-400g"));
  // A typo is not silently ignored: the engine's table rejects names neither table knows.
  auto typo = read({{"HA_NCCL_RAIL_GROUP", "2"}});
  REQUIRE_FALSE(typo.ok());
  CHECK_THAT(typo.error().what, Catch::Contains("HA_NCCL_RAIL_GROUP"));
  // Engine rows keep their own checks.
  auto engine = read({{"HA_NCCL_QP_RETRY_CNT", "8"}});
  REQUIRE_FALSE(engine.ok());
  CHECK_THAT(engine.error().what, Catch::Contains("HA_NCCL_QP_RETRY_CNT"));
}

TEST_CASE("RAILCHECK_NCCL_FAULT parses both triggers and the comm limit", "[nccl][fault]") {
  auto none = parse_fault_plan("");
  REQUIRE(none.ok());
  CHECK_FALSE(none->has_value());
  auto msgs = parse_fault_plan("cut-primary-after-msgs=40");
  REQUIRE(msgs.ok());
  CHECK(msgs.value().value() == FaultPlan{FaultTrigger::AfterMessages, 40, 0});
  auto ms_plan = parse_fault_plan("cut-primary-after-ms=250,comms=2");
  REQUIRE(ms_plan.ok());
  CHECK(ms_plan.value().value() == FaultPlan{FaultTrigger::AfterMillis, 250, 2});
  CHECK(describe(ms_plan.value().value()) == "cut the primary rail 250 ms after connect on the first 2 send comms");
}

TEST_CASE("malformed RAILCHECK_NCCL_FAULT values are errors quoting the text", "[nccl][fault]") {
  for (const char* bad :
       {"cut-primary-after-msgs=", "cut-primary-after-msgs=0", "cut-primary-after-msgs=-3", "cut-primary-after-msgs=4x",
        "cut-standby-after-msgs=3", "cut-primary-after-ms=5,comms=0", "cut-primary-after-ms=5,rails=1"}) {
    auto r = parse_fault_plan(bad);
    INFO(bad);
    REQUIRE_FALSE(r.ok());
    CHECK_THAT(r.error().what, Catch::Contains(std::string("RAILCHECK_NCCL_FAULT=") + bad));
  }
}

TEST_CASE("a fault clock fires once at its threshold", "[nccl][fault]") {
  FaultClock by_count(FaultPlan{FaultTrigger::AfterMessages, 3, 0});
  CHECK_FALSE(by_count.due(2, 100000));
  CHECK(by_count.due(3, 0));
  CHECK(by_count.fired());
  CHECK_FALSE(by_count.due(4, 0));
  FaultClock by_time(FaultPlan{FaultTrigger::AfterMillis, 50, 0});
  CHECK_FALSE(by_time.due(1000, 49));
  CHECK(by_time.due(0, 50));
}

TEST_CASE("a fault clock past its threshold waits for every standby to be ready, then fires once", "[nccl][fault]") {
  FaultClock clock(FaultPlan{FaultTrigger::AfterMessages, 3, 0});
  bool ready = false;
  int asked = 0;
  auto standbys = [&] {
    ++asked;
    return ready;
  };
  CHECK_FALSE(clock.due(2, 0, standbys));
  CHECK(asked == 0);  // asked only once the threshold is reached (it builds every rail's stats)
  CHECK_FALSE(clock.due(3, 0, standbys));
  CHECK_FALSE(clock.due(9, 0, standbys));
  CHECK_FALSE(clock.fired());
  ready = true;
  CHECK(clock.due(10, 0, standbys));
  CHECK(clock.fired());
  CHECK_FALSE(clock.due(11, 0, standbys));
}

TEST_CASE("HA_NCCL_RAIL_ADDRS gives each group its rails' bind addresses", "[nccl][config]") {
  auto one = read({{"HA_NCCL_RAIL_ADDRS", "127.0.0.1"}});
  REQUIRE(one.ok());
  CHECK(rail_addresses_of(one.value(), 0) == std::vector<std::string>{"127.0.0.1", "127.0.0.1"});
  auto per_group =
      read({{"HA_NCCL_RAIL_GROUPS", "2"}, {"HA_NCCL_RAIL_ADDRS", "169.254.1.1,169.254.2.1,10.0.0.1,10.0.0.2"}});
  REQUIRE(per_group.ok());
  CHECK(rail_addresses_of(per_group.value(), 1) == std::vector<std::string>{"10.0.0.1", "10.0.0.2"});
  CHECK(rail_addresses_of(read({}).value(), 0).empty());
  auto count = read({{"HA_NCCL_RAIL_ADDRS", "127.0.0.1,127.0.0.2,127.0.0.3"}});
  REQUIRE_FALSE(count.ok());
  CHECK_THAT(count.error().what, Catch::Contains("3 addresses for 1 groups of 2 rails"));
  auto bad = read({{"HA_NCCL_RAIL_ADDRS", "127.0.0.1,localhost"}});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().what, Catch::Contains("'localhost' is not an IPv4 address"));
}

TEST_CASE("HA_NCCL_OPTIONAL_RECV_COMPLETION takes auto, honour or decline and nothing else", "[nccl][config]") {
  for (const char* mode : {"auto", "honour", "decline"}) {
    auto c = read({{"HA_NCCL_OPTIONAL_RECV_COMPLETION", mode}});
    REQUIRE(c.ok());
    CHECK(c->optional_recv_completion == mode);
  }
  auto bad = read({{"HA_NCCL_OPTIONAL_RECV_COMPLETION", "on"}});
  REQUIRE_FALSE(bad.ok());
  CHECK_THAT(bad.error().what, Catch::Contains("HA_NCCL_OPTIONAL_RECV_COMPLETION=on: unknown mode"));
  CHECK_THAT(bad.error().hint, Catch::Contains("auto, honour, decline"));
}

TEST_CASE("issue 42's settings: staged sends, background progress and ofi_rxm's eager size", "[nccl][config]") {
  auto d = read({});
  REQUIRE(d.ok());
  CHECK(d->stage_bytes == 65536);
  CHECK(d->progress_us == 1000);
  CHECK(d->rxm_eager_bytes == 0);
  auto c = read({{"HA_NCCL_STAGE_BYTES", "0"}, {"HA_NCCL_PROGRESS_US", "250"}, {"HA_NCCL_RXM_EAGER_BYTES", "65536"}});
  REQUIRE(c.ok());
  CHECK(c->stage_bytes == 0);
  CHECK(c->progress_us == 250);
  CHECK(c->rxm_eager_bytes == 65536);
  auto frac = read({{"HA_NCCL_STAGE_BYTES", "4096.5"}});
  REQUIRE_FALSE(frac.ok());
  CHECK_THAT(frac.error().what, Catch::Contains("whole number"));
  auto big = read({{"HA_NCCL_STAGE_BYTES", "8388608"}});
  REQUIRE_FALSE(big.ok());
  CHECK_THAT(big.error().message(), Catch::Contains("0 .. 4194304"));
}

TEST_CASE("streams per comm and the stripe size are read with their ranges", "[nccl][config][stripe]") {
  auto d = read({});
  REQUIRE(d.ok());
  CHECK(d->streams == 1);  // Socket's own choice on a host whose NIC has no cloud vendor id
  CHECK(d->stripe_bytes == 65536);
  auto c = read({{"HA_NCCL_STREAMS", "3"}, {"HA_NCCL_STRIPE_BYTES", "262144"}});
  REQUIRE(c.ok());
  CHECK(c->streams == 3);
  CHECK(c->stripe_bytes == 262144);
  auto four = read({{"HA_NCCL_STREAMS", "4"}});
  REQUIRE_FALSE(four.ok());
  CHECK_THAT(four.error().message(), Catch::Contains("1 .. 3"));  // three handles fill NCCL's 128 bytes
}

TEST_CASE("HA_NCCL_RXM_EAGER_BYTES sets ofi_rxm's eager size and SAR limit and caps staging at the SAR limit",
          "[nccl][config]") {
  const auto none = [](const char*) -> const char* { return nullptr; };
  // rxm's own sizes: nothing set, staging up to HA_NCCL_STAGE_BYTES, which a larger SAR limit
  // than rxm's 128 KiB would not cap.
  auto d = read({{"HA_NCCL_PROVIDER", "tcp;ofi_rxm"}, {"HA_NCCL_STAGE_BYTES", "1048576"}});
  REQUIRE(d.ok());
  const RxmSizes own = rxm_sizes(d.value(), none);
  using Var = std::pair<std::string, std::string>;
  // Only the receive buffers per connection, which the plugin always bounds (memory per rail).
  CHECK(own.set == std::vector<Var>{{"FI_OFI_RXM_MSG_RX_SIZE", "32"}});
  CHECK(own.staged_bytes == 131072);
  // 64 KiB: no SAR left (rendezvous above the eager size), staging up to 64 KiB.
  auto c = read({{"HA_NCCL_PROVIDER", "tcp;ofi_rxm"}, {"HA_NCCL_STAGE_BYTES", "1048576"},
                 {"HA_NCCL_RXM_EAGER_BYTES", "65536"}});
  REQUIRE(c.ok());
  const RxmSizes set = rxm_sizes(c.value(), none);
  CHECK(set.set == std::vector<Var>{{"FI_OFI_RXM_BUFFER_SIZE", "65536"},
                                    {"FI_OFI_RXM_SAR_LIMIT", "65536"},
                                    {"FI_OFI_RXM_MSG_RX_SIZE", "32"}});
  CHECK(set.staged_bytes == 65536);
  // A variable the environment sets is left alone, and its SAR limit is the one that caps staging.
  const RxmSizes user = rxm_sizes(c.value(), [](const char* n) -> const char* {
    if (std::string_view{n} == "FI_OFI_RXM_MSG_RX_SIZE") return "128";
    return std::string_view{n} == "FI_OFI_RXM_SAR_LIMIT" ? "32768" : nullptr;
  });
  CHECK(user.set == std::vector<Var>{{"FI_OFI_RXM_BUFFER_SIZE", "65536"}});
  CHECK_THAT(user.note, Catch::Contains("FI_OFI_RXM_MSG_RX_SIZE=128 (from the environment)"));
  CHECK(user.staged_bytes == 32768);
  CHECK_THAT(user.note, Catch::Contains("FI_OFI_RXM_SAR_LIMIT=32768 (from the environment)"));
  // Not rxm: nothing of rxm's, staging as configured.
  auto shm = read({{"HA_NCCL_PROVIDER", "shm"}, {"HA_NCCL_RXM_EAGER_BYTES", "65536"}, {"HA_NCCL_STAGE_BYTES", "1048576"}});
  REQUIRE(shm.ok());
  const RxmSizes s = rxm_sizes(shm.value(), none);
  CHECK(s.set.empty());
  CHECK(s.staged_bytes == 1048576);
}

TEST_CASE("HA_NCCL_PROVIDER=auto takes net where libfabric has it, else tcp over ofi_rxm, and a named provider is kept",
          "[nccl][config]") {
  const auto has = [](std::vector<std::string> names) {
    return [names](const std::string& p) { return std::find(names.begin(), names.end(), p) != names.end(); };
  };
  const ProviderChoice with_net = resolve_provider("auto", has({"net", "tcp;ofi_rxm"}));
  CHECK(with_net.provider == "net");
  CHECK_THAT(with_net.why, Catch::Contains("auto"));
  const ProviderChoice without = resolve_provider("auto", has({"tcp;ofi_rxm"}));
  CHECK(without.provider == "tcp;ofi_rxm");
  CHECK_THAT(without.why, Catch::Contains("no net provider"));
  // A named provider is not second-guessed: libfabric is not even asked.
  bool asked = false;
  const ProviderChoice named = resolve_provider("tcp;ofi_rxm", [&asked](const std::string&) {
    asked = true;
    return true;
  });
  CHECK(named.provider == "tcp;ofi_rxm");
  CHECK_FALSE(asked);
}

TEST_CASE("with HA_NCCL_PROVIDER=auto both candidates' variables are set before libfabric starts", "[nccl][config]") {
  const auto none = [](const char*) -> const char* { return nullptr; };
  using Var = std::pair<std::string, std::string>;
  auto a = read({});
  REQUIRE(a.ok());
  const auto both = provider_variables(a.value(), none);
  const auto holds = [&both](const Var& v) { return std::find(both.begin(), both.end(), v) != both.end(); };
  CHECK(holds({"FI_NET_TX_SIZE", "4096"}));
  CHECK(holds({"FI_NET_MAX_SAVED", "0"}));
  CHECK(holds({"FI_OFI_RXM_MSG_RX_SIZE", "32"}));
  // A named provider gets its own only.
  auto net = read({{"HA_NCCL_PROVIDER", "net"}});
  REQUIRE(net.ok());
  const auto own = provider_variables(net.value(), none);
  CHECK(own == rxm_sizes(net.value(), none).set);
  CHECK(std::none_of(own.begin(), own.end(), [](const Var& v) { return v.first.rfind("FI_OFI_RXM", 0) == 0; }));
}

TEST_CASE("the net provider gets queues deep enough for one comm unless the environment sets them", "[nccl][config]") {
  const auto none = [](const char*) -> const char* { return nullptr; };
  auto c = read({{"HA_NCCL_PROVIDER", "net"}, {"HA_NCCL_RXM_EAGER_BYTES", "65536"}});
  REQUIRE(c.ok());
  using Var = std::pair<std::string, std::string>;
  const RxmSizes s = rxm_sizes(c.value(), none);
  // Nothing of ofi_rxm's (it is not in the stack); net's 256-entry default would fit no comm.
  CHECK(s.set ==
        std::vector<Var>{{"FI_NET_TX_SIZE", "4096"}, {"FI_NET_RX_SIZE", "4096"}, {"FI_NET_MAX_SAVED", "0"}});
  CHECK(s.staged_bytes == 65536);
  const RxmSizes user = rxm_sizes(c.value(), [](const char* n) -> const char* {
    return std::string_view{n} == "FI_NET_RX_SIZE" ? "1024" : nullptr;
  });
  CHECK(user.set == std::vector<Var>{{"FI_NET_TX_SIZE", "4096"}, {"FI_NET_MAX_SAVED", "0"}});
  CHECK_THAT(user.note, Catch::Contains("FI_NET_RX_SIZE=1024 (from the environment)"));
}

TEST_CASE("each plugin setting's one line declares its field, its default and its reader", "[nccl][config]") {
  // RAILCHECK_PLUGIN_SETTINGS makes the struct, the table and the parser: a value in range set
  // through the environment reads back as the setting's default text would show it.
  const std::map<std::string, std::pair<std::string, std::string>> given = {
      {"HA_NCCL_PROVIDER", {"auto", "efa"}},
      {"HA_NCCL_RAIL_GROUPS", {"1", "16"}},
      {"HA_NCCL_RAILS_PER_GROUP", {"2", "1"}},
      {"HA_NCCL_SPEED_MBPS", {"0", "25000"}},
      {"HA_NCCL_LATENCY_US", {"0", "2.5"}},
      {"HA_NCCL_NIC_PRESET", {"", "cx7-400g"}},
      {"HA_NCCL_RAIL_ADDRS", {"", "127.0.0.1"}},
      {"HA_NCCL_MAX_REQUESTS", {"32", "8"}},
      {"HA_NCCL_STAGE_BYTES", {"65536", "0"}},
      {"HA_NCCL_RXM_EAGER_BYTES", {"0", "65536"}},
      {"HA_NCCL_STREAMS", {"1", "3"}},
      {"HA_NCCL_STRIPE_BYTES", {"65536", "4096"}},
      {"HA_NCCL_OPTIONAL_RECV_COMPLETION", {"auto", "honour"}},
      {"HA_NCCL_PROGRESS_US", {"1000", "0"}},
  };
  REQUIRE(plugin_setting_table().size() == given.size());  // a new line needs a row here too
  for (const auto& row : plugin_setting_table()) {
    INFO(row.env);
    const std::string env(row.env);
    REQUIRE(given.count(env) == 1);
    CHECK(plugin_setting_default(row.env) == given.at(env).first);
    auto c = read({{env, given.at(env).second}});
    REQUIRE(c.ok());
    CHECK(c->provider == (env == "HA_NCCL_PROVIDER" ? "efa" : "auto"));
    CHECK(c->rail_groups == (env == "HA_NCCL_RAIL_GROUPS" ? 16u : 1u));
    CHECK(c->rails_per_group == (env == "HA_NCCL_RAILS_PER_GROUP" ? 1u : 2u));
    CHECK(c->speed_mbps == (env == "HA_NCCL_SPEED_MBPS" ? 25000u : 0u));
    CHECK(c->latency_us == (env == "HA_NCCL_LATENCY_US" ? 2.5 : 0.0));
    CHECK(c->nic_preset == (env == "HA_NCCL_NIC_PRESET" ? "cx7-400g" : ""));
    CHECK(c->rail_addresses.size() == (env == "HA_NCCL_RAIL_ADDRS" ? 1u : 0u));
    CHECK(c->max_requests == (env == "HA_NCCL_MAX_REQUESTS" ? 8u : 32u));
    CHECK(c->stage_bytes == (env == "HA_NCCL_STAGE_BYTES" ? 0u : 65536u));
    CHECK(c->rxm_eager_bytes == (env == "HA_NCCL_RXM_EAGER_BYTES" ? 65536u : 0u));
    CHECK(c->streams == (env == "HA_NCCL_STREAMS" ? 3u : 1u));
    CHECK(c->stripe_bytes == (env == "HA_NCCL_STRIPE_BYTES" ? 4096u : 65536u));
    CHECK(c->optional_recv_completion == (env == "HA_NCCL_OPTIONAL_RECV_COMPLETION" ? "honour" : "auto"));
    CHECK(c->progress_us == (env == "HA_NCCL_PROGRESS_US" ? 0u : 1000u));
  }
  CHECK(plugin_setting_default("HA_NCCL_NO_SUCH") == "");
}

TEST_CASE("docs/nccl-plugin.md lists every plugin setting with its default", "[nccl][config][docs]") {
  std::ifstream in(std::string(RAILCHECK_SOURCE_DIR) + "/docs/nccl-plugin.md");
  REQUIRE(in);
  const std::string docs((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (const auto& row : plugin_setting_table()) {
    INFO(row.env);
    const std::string fallback = plugin_setting_default(row.env);
    if (row.unit == std::string_view{"name"} || row.unit == std::string_view{"list"})
      CHECK_THAT(docs, Catch::Contains(fmt::format("| `{}` |", row.env)));
    else
      CHECK_THAT(docs, Catch::Contains(fmt::format("| `{}` | {} |", row.env, fallback)));
  }
}

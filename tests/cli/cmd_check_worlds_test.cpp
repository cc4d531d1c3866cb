// railcheck check / replay on the plan, ImmCounter and authenticated-bootstrap worlds, through the
// real executable and the shipped model files (verify/models/plan-*.toml, imm-*.toml,
// bootstrap-auth-*.toml): the exit codes, the counterexample trace and its replay, the bounds
// and the random mode of the failover world.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/cli/railcheck_exe.hpp"

namespace fs = std::filesystem;
using exe::Ran;
using exe::slurp;

namespace {

std::string quoted_model(const std::string& name) {
  return "'" + std::string(RAILCHECK_SOURCE_DIR) + "/verify/models/" + name + ".toml'";
}

// A fresh folder per test case, removed at the end.
struct Folder {
  fs::path dir;
  explicit Folder(const std::string& tag)
      : dir(fs::temp_directory_path() / ("railcheck-worlds-" + std::to_string(::getpid()) + "-" + tag)) {
    fs::remove_all(dir);
    fs::create_directories(dir);
  }
  ~Folder() { fs::remove_all(dir); }
  Ran run(const std::string& args) const {
    INFO("railcheck " << args);
    return exe::run_railcheck(dir, args);
  }
};

bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// `check` exits 1 with a trace that `replay` reproduces: the same invariant, exit 1.
void violation_replays(const Folder& f, const std::string& name, const std::string& invariant,
                       const std::string& extra = "") {
  const Ran c = f.run("check " + quoted_model(name) + " --trace cx.json " + extra);
  INFO(c.out << c.err);
  REQUIRE(c.code == 1);
  CHECK(has(c.out, "VIOLATION of " + invariant + ": "));
  CHECK(has(c.out, "trace written to cx.json; replay it with: railcheck replay cx.json"));
  REQUIRE(fs::exists(f.dir / "cx.json"));
  const auto trace = nlohmann::json::parse(slurp(f.dir / "cx.json"));
  CHECK(trace.at("invariant") == invariant);
  const Ran r = f.run("replay cx.json");
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  CHECK(has(r.out, "VIOLATION of " + invariant + " after step " + std::to_string(trace.at("steps").size()) + ": "));
}

}  // namespace

TEST_CASE("plan-channels: nccl exhausts the bound clean, all 6336 communicators", "[cli][worlds]") {
  const Folder f("nccl");
  const Ran r = f.run("check " + quoted_model("plan-channels-nccl") + " --json out.json");
  INFO(r.out << r.err);
  CHECK(r.code == 0);
  CHECK(has(r.out, "bound exhausted: no invariant violated"));
  const auto j = nlohmann::json::parse(slurp(f.dir / "out.json"));
  CHECK(j.at("world") == "plan-channels");
  CHECK(j.at("exhausted") == true);
  CHECK(j.at("end_states") == (16 + 512) * 6 * 2);  // pair patterns x collective sequences x FIFO depths
  CHECK_FALSE(fs::exists(f.dir / "counterexample.trace.json"));
}

TEST_CASE("plan-channels: passsm diverges on two ranks, and the trace replays it", "[cli][worlds]") {
  const Folder f("passsm");
  violation_replays(f, "plan-channels-passsm", "channel-agreement");
  // The shortest counterexample: 2 ranks, one self copy, one collective on one channel.
  const Ran b = f.run("check " + quoted_model("plan-channels-passsm") + " --mode bfs --trace bfs.json");
  CHECK(b.code == 1);
  const auto steps = nlohmann::json::parse(slurp(f.dir / "bfs.json")).at("steps");
  CHECK(steps.front() == "ranks 2");
  CHECK(has(b.out, "\"ev\":\"send\",\"peer\":1"));  // the schedule trace for replay-sched
  // --policy overrides the model's scheduling policy: nccl is clean on the same bound.
  CHECK(f.run("check " + quoted_model("plan-channels-passsm") + " --policy nccl").code == 0);
  // Replay has no --policy for these worlds (the steps depend on it).
  CHECK(f.run("replay bfs.json --policy nccl").code == 2);
}

TEST_CASE("plan-lifecycle: NCCL's polling rule is clean, polling anywhere reclaims a plan in use", "[cli][worlds]") {
  const Folder f("lifecycle");
  const Ran clean = f.run("check " + quoted_model("plan-lifecycle"));
  INFO(clean.out << clean.err);
  CHECK(clean.code == 0);
  CHECK(has(clean.out, "bound exhausted"));
  violation_replays(f, "plan-lifecycle-poll-anywhere", "plan-lifecycle", "--mode bfs");
  CHECK(nlohmann::json::parse(slurp(f.dir / "cx.json")).at("steps").size() == 8);
}

TEST_CASE("imm: resync is clean over every fate and order of 4 writes, the seed's naive rule double-counts",
          "[cli][worlds]") {
  const Folder f("imm");
  const Ran clean = f.run("check " + quoted_model("imm-resync"));
  INFO(clean.out << clean.err);
  CHECK(clean.code == 0);
  CHECK(has(clean.out, "bound exhausted"));
  violation_replays(f, "imm-naive", "fires-exactly-once");
  // --policy overrides the model's replay policy.
  CHECK(f.run("check " + quoted_model("imm-resync") + " --policy naive --trace n.json").code == 1);
}

TEST_CASE("bootstrap-auth: with the key every attack is refused, without it a forged frame is taken",
          "[cli][worlds][auth]") {
  const Folder f("auth");
  const Ran clean = f.run("check " + quoted_model("bootstrap-auth-2ranks") + " --json out.json");
  INFO(clean.out << clean.err);
  CHECK(clean.code == 0);
  CHECK(has(clean.out, "bound exhausted: no invariant violated"));
  const auto j = nlohmann::json::parse(slurp(f.dir / "out.json"));
  CHECK(j.at("world") == "bootstrap-auth");
  CHECK(j.at("exhausted") == true);
  // Wire v1: the breadth-first search's shortest attack is one injected frame and its delivery.
  violation_replays(f, "bootstrap-auth-no-key", "no-attacker-frame-taken");
  CHECK(nlohmann::json::parse(slurp(f.dir / "cx.json")).at("steps").size() <= 3);
  CHECK(f.run("check " + quoted_model("bootstrap-auth-2ranks") + " --policy naive").code == 2);
}

TEST_CASE("plan and imm worlds: the failover world's bounds, random mode and bad-input exits", "[cli][worlds]") {
  const Folder f("bounds");
  CHECK(f.run("check " + quoted_model("plan-channels-nccl") + " --max-states 100").code == 3);
  CHECK(f.run("check " + quoted_model("plan-channels-nccl") + " --max-depth 5").code == 3);
  const Ran timed = f.run("check " + quoted_model("imm-resync") + " --max-seconds 0.001");
  CHECK(timed.code == 3);
  CHECK(has(timed.out, "stopped at max_seconds"));
  // Random walks: a seed finds the violation and the same seed finds the same trace.
  const Ran w1 = f.run("check " + quoted_model("plan-channels-passsm") + " --mode random --seed 5 --trace w1.json");
  const Ran w2 = f.run("check " + quoted_model("plan-channels-passsm") + " --mode random --seed 5 --trace w2.json");
  REQUIRE(w1.code == 1);
  CHECK(has(w1.out, "found by random walk"));
  CHECK(slurp(f.dir / "w1.json") == slurp(f.dir / "w2.json"));
  CHECK(f.run("check " + quoted_model("plan-channels-nccl") + " --mode random --walks 20").code == 0);
  // Bad input: one line, exit 2.
  const Ran seed = f.run("check " + quoted_model("imm-naive") + " --seed 3");
  CHECK(seed.code == 2);
  CHECK(has(seed.err, "--seed applies to --mode random only"));
  CHECK(f.run("check " + quoted_model("plan-channels-nccl") + " --policy fastest").code == 2);
  std::ofstream(f.dir / "bad.toml") << "world = \"imm\"\n[bounds]\nwrites = 9\n";
  const Ran bad = f.run("check bad.toml");
  CHECK(bad.code == 2);
  CHECK(has(bad.err, "bad.toml:3: bounds.writes"));
  // A trace whose steps no longer fit its world: exit 2, naming the step.
  REQUIRE(f.run("check " + quoted_model("imm-naive") + " --trace t.json").code == 1);
  auto t = nlohmann::json::parse(slurp(f.dir / "t.json"));
  t["steps"][0] = "write 0 vanished";
  std::ofstream(f.dir / "t.json") << t.dump();
  const Ran r = f.run("replay t.json");
  CHECK(r.code == 2);
  CHECK(has(r.err, "step 1 \"write 0 vanished\" is not possible here"));
  // A trace's model goes through the model-file loader: out of range is bad input naming it.
  t["model_toml"] = "world = \"imm\"\n[bounds]\nwrites = 9\n";
  std::ofstream(f.dir / "t.json") << t.dump();
  const Ran m = f.run("replay t.json");
  CHECK(m.code == 2);
  CHECK(has(m.err, "t.json model_toml:3: bounds.writes"));
}

// The shipped traces (verify/traces/) still fit their worlds: a change to a world's steps or to
// the engine code under it that loses the violation shows here.
TEST_CASE("the shipped plan and imm traces replay to their violation", "[cli][worlds]") {
  const Folder f("traces");
  for (const auto& [name, invariant] :
       {std::pair{"plan-channels-passsm", "channel-agreement"},
        std::pair{"plan-lifecycle-poll-anywhere", "plan-lifecycle"}, std::pair{"imm-naive", "fires-exactly-once"}}) {
    const Ran r = f.run("replay '" + std::string(RAILCHECK_SOURCE_DIR) + "/verify/traces/" + name + ".trace.json'");
    INFO(name << "\n" << r.out << r.err);
    CHECK(r.code == 1);
    CHECK(has(r.out, std::string("VIOLATION of ") + invariant + " after step "));
  }
}

// The profiler plugin driven the way NCCL 2.28.9 drives it (src/plugin/profiler.cc), from a
// dlopen of the built .so: one communicator's init, a group with a collective and a p2p pair in
// one plan, their proxy ops and kernel channels, finalize; then the bad sequences NCCL or a
// broken build could produce. The JSON lines it writes are read back and checked.
#include <dlfcn.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdarg>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "backends/hw/nccl_profiler/profiler_abi.hpp"

namespace abi = railcheck::nccl_profiler_abi;
namespace fs = std::filesystem;

namespace {

int g_warns = 0;
void logger(abi::LogLevel level, unsigned long /*flags*/, const char* /*file*/, int /*line*/, const char* /*fmt*/,
            ...) {
  if (level == abi::kLogWarn) ++g_warns;
}

struct Loaded {
  void* lib = nullptr;
  abi::ProfilerV5* table = nullptr;
  Loaded() {
    lib = dlopen(RAILCHECK_NCCL_PROFILER_PATH, RTLD_NOW | RTLD_LOCAL);
    if (lib != nullptr) table = static_cast<abi::ProfilerV5*>(dlsym(lib, "ncclProfiler_v5"));
  }
  // Never dlclose: the plugin's atexit handler lives in it (NCCL never unloads it either).
};

Loaded& plugin() {
  static Loaded l;
  return l;
}

fs::path out_dir() {
  static fs::path dir = [] {
    fs::path d = fs::temp_directory_path() / ("railcheck-prof-test-" + std::to_string(::getpid()));
    fs::create_directories(d);
    ::setenv("RAILCHECK_PROFILER_DIR", d.c_str(), 1);
    return d;
  }();
  return dir;
}

std::vector<std::string> read_lines(const fs::path& p) {
  std::vector<std::string> out;
  std::ifstream in(p);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

bool has(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines) {
    if (l.find(needle) != std::string::npos) return true;
  }
  return false;
}

}  // namespace

TEST_CASE("profiler plugin: exports only the v5 table", "[nccl_profiler]") {
  out_dir();
  Loaded& p = plugin();
  REQUIRE(p.lib != nullptr);
  REQUIRE(p.table != nullptr);
  CHECK(std::string(p.table->name) == "railcheck");
  CHECK(dlsym(p.lib, "ncclProfiler_v4") == nullptr);
}

TEST_CASE("profiler plugin: one plan with a collective and a p2p pair, recorded and linked", "[nccl_profiler]") {
  fs::path dir = out_dir();
  abi::ProfilerV5* t = plugin().table;
  REQUIRE(t != nullptr);
  void* ctx = nullptr;
  int mask = 0;
  REQUIRE(t->init(&ctx, 0xabc1ULL, &mask, "c", 2, 2, 1, logger) == abi::kSuccess);
  REQUIRE(ctx != nullptr);
  CHECK((mask & abi::kKernelCh) != 0);
  CHECK((mask & abi::kProxyStep) == 0);  // one event per step would be far too many

  abi::EventDescr d{};
  void* group_api = nullptr;
  d.type = abi::kGroupApi;
  d.group_api.group_depth = 1;
  REQUIRE(t->start_event(ctx, &group_api, &d) == abi::kSuccess);
  REQUIRE(group_api != nullptr);

  void* coll_api = nullptr;
  d = {};
  d.type = abi::kCollApi;
  d.parent_obj = group_api;
  d.coll_api.func = "AllReduce";
  d.coll_api.count = 8192;
  d.coll_api.datatype = "ncclFloat32";
  REQUIRE(t->start_event(ctx, &coll_api, &d) == abi::kSuccess);
  void* p2p_api = nullptr;
  d = {};
  d.type = abi::kP2pApi;
  d.parent_obj = group_api;
  d.p2p_api.func = "Send";
  d.p2p_api.count = 100;
  d.p2p_api.datatype = "ncclInt8";
  REQUIRE(t->start_event(ctx, &p2p_api, &d) == abi::kSuccess);
  t->record_event_state(group_api, abi::kStateEndGroupApiStart, nullptr);

  void* launch = nullptr;
  d = {};
  d.type = abi::kKernelLaunch;
  d.parent_obj = group_api;
  REQUIRE(t->start_event(ctx, &launch, &d) == abi::kSuccess);
  void* plan = nullptr;
  d = {};
  d.type = abi::kGroup;
  REQUIRE(t->start_event(ctx, &plan, &d) == abi::kSuccess);

  void* coll = nullptr;
  d = {};
  d.type = abi::kColl;
  d.parent_obj = coll_api;
  d.rank = 1;
  d.coll.seq_number = 7;
  d.coll.func = "AllReduce";
  d.coll.count = 8192;
  d.coll.datatype = "ncclFloat32";
  d.coll.n_channels = 2;
  d.coll.n_warps = 16;
  d.coll.algo = "RING";
  d.coll.proto = "LL";
  d.coll.parent_group = plan;
  REQUIRE(t->start_event(ctx, &coll, &d) == abi::kSuccess);
  void* p2p = nullptr;
  d = {};
  d.type = abi::kP2p;
  d.parent_obj = p2p_api;
  d.p2p.func = "Send";
  d.p2p.count = 100;
  d.p2p.datatype = "ncclInt8";
  d.p2p.peer = 0;
  d.p2p.n_channels = 1;
  d.p2p.parent_group = plan;
  REQUIRE(t->start_event(ctx, &p2p, &d) == abi::kSuccess);

  std::vector<void*> kids;
  for (int ch = 0; ch < 2; ++ch) {
    void* op = nullptr;
    d = {};
    d.type = abi::kProxyOp;
    d.parent_obj = coll;
    d.proxy_op.channel_id = static_cast<std::uint8_t>(ch);
    d.proxy_op.peer = 0;
    d.proxy_op.is_send = 1;
    REQUIRE(t->start_event(ctx, &op, &d) == abi::kSuccess);
    kids.push_back(op);
    void* kch = nullptr;
    d = {};
    d.type = abi::kKernelCh;
    d.parent_obj = coll;
    d.kernel_ch.channel_id = static_cast<std::uint8_t>(ch);
    REQUIRE(t->start_event(ctx, &kch, &d) == abi::kSuccess);
    abi::EventStateArgs a{};
    a.kernel_ch.p_timer = 5;
    CHECK(t->record_event_state(kch, abi::kStateKernelChStop, &a) == abi::kSuccess);
    kids.push_back(kch);
  }
  int warns_before = g_warns;
  for (void* k : kids) CHECK(t->stop_event(k) == abi::kSuccess);
  for (void* h : {coll, p2p, plan, launch, coll_api, p2p_api, group_api}) CHECK(t->stop_event(h) == abi::kSuccess);
  CHECK(g_warns == warns_before);
  REQUIRE(t->finalize(ctx) == abi::kSuccess);

  auto lines = read_lines(dir / "railcheck-prof-000000000000abc1-r1.jsonl");
  REQUIRE(lines.size() >= 12);
  CHECK(has(lines, "\"ev\":\"comm\""));
  CHECK(has(lines, "\"rank\":1,\"nranks\":2"));
  CHECK(has(lines, "\"ev\":\"coll\""));
  CHECK(has(lines, "\"func\":\"AllReduce\",\"count\":8192,\"dtype\":\"ncclFloat32\",\"root\":0,\"nchannels\":2"));
  CHECK(has(lines, "\"algo\":\"RING\",\"proto\":\"LL\""));
  CHECK(has(lines, "\"peer\":0,\"nchannels\":1"));
  CHECK(has(lines, "\"ev\":\"kernel_ch\""));
  CHECK(has(lines, "\"channel\":1}"));
  CHECK(has(lines, "\"ev\":\"end\",\"dropped_events\":0"));
  // The coll names its plan and its API parent by id; the kernel channels name the coll.
  std::string coll_line;
  for (const auto& l : lines) {
    if (l.find("\"ev\":\"coll\"") != std::string::npos) coll_line = l;
  }
  REQUIRE(!coll_line.empty());
  CHECK(coll_line.find("\"parent\":0") == std::string::npos);
  CHECK(coll_line.find("\"plan\":0") == std::string::npos);
}

TEST_CASE("profiler plugin: bad sequences warn and never crash", "[nccl_profiler]") {
  out_dir();
  abi::ProfilerV5* t = plugin().table;
  REQUIRE(t != nullptr);
  void* ctx = nullptr;
  int mask = 0;
  REQUIRE(t->init(&ctx, 0xbad2ULL, &mask, nullptr, 1, 2, 0, logger) == abi::kSuccess);
  REQUIRE(ctx != nullptr);

  int w = g_warns;
  int dummy = 0;
  CHECK(t->stop_event(&dummy) == abi::kSuccess);  // stop without start: a handle we never gave
  CHECK(t->stop_event(nullptr) == abi::kSuccess);
  CHECK(t->record_event_state(&dummy, abi::kStateKernelChStop, nullptr) == abi::kSuccess);

  abi::EventDescr d{};
  void* h = &dummy;
  d.type = abi::kProxyStep;  // not asked for
  CHECK(t->start_event(ctx, &h, &d) == abi::kSuccess);
  CHECK(h == nullptr);
  d.type = 1ULL << 40;  // unknown
  h = &dummy;
  CHECK(t->start_event(ctx, &h, &d) == abi::kSuccess);
  CHECK(h == nullptr);
  d.type = abi::kColl | abi::kP2p;  // two types at once
  CHECK(t->start_event(ctx, &h, &d) == abi::kSuccess);
  CHECK(h == nullptr);
  CHECK(t->start_event(&dummy, &h, &d) == abi::kSuccess);  // a context we never gave
  CHECK(h == nullptr);
  d = {};
  d.type = abi::kColl;
  d.coll.func = "All\"Reduce";  // strings JSON cannot take as they are
  d.coll.datatype = nullptr;
  REQUIRE(t->start_event(ctx, &h, &d) == abi::kSuccess);
  REQUIRE(h != nullptr);
  CHECK(t->stop_event(h) == abi::kSuccess);
  int before_second_stop = g_warns;
  CHECK(t->stop_event(h) == abi::kSuccess);  // stopped twice
  CHECK(g_warns == before_second_stop + 1);
  CHECK(g_warns >= w + 7);

  REQUIRE(t->finalize(ctx) == abi::kSuccess);
  int before = g_warns;
  CHECK(t->finalize(ctx) == abi::kSuccess);  // finalize twice
  CHECK(g_warns == before + 1);
  CHECK(t->finalize(nullptr) == abi::kSuccess);
  void* after = &dummy;
  d.type = abi::kGroup;
  CHECK(t->start_event(ctx, &after, &d) == abi::kSuccess);  // event after finalize
  CHECK(after == nullptr);

  auto lines = read_lines(out_dir() / "railcheck-prof-000000000000bad2-r0.jsonl");
  REQUIRE(lines.size() == 3);  // comm, the one coll, end
  CHECK(lines[1].find("\"func\":\"?\"") != std::string::npos);
  CHECK(lines[1].find("\"dtype\":\"\"") != std::string::npos);
}

#pragma once
// Our own declarations of NCCL's profiler plugin ABI, version 5: the newest NCCL 2.28.9 looks
// up (src/plugin/profiler/profiler_v5.cc dlsyms "ncclProfiler_v5" first, then v4 .. v1).
// Checked member by member against NVIDIA/nccl tag v2.28.9-1:
// ext-profiler/example/nccl/profiler.h (event type bits, state codes), profiler_v5.h (the
// descriptor union, state arguments, the function table) and common.h (the logger). The
// static_asserts pin the x86-64 (LP64) layout NCCL writes; a moved member fails to compile.
//
// Who starts what (src/plugin/profiler.cc, v2.28.9-1):
//   GroupApi      ncclGroupStart/End at depth 0, parent none
//   CollApi/P2pApi one per user call, parent = the GroupApi handle
//   KernelLaunch  one per plan, parent = the GroupApi handle (ncclProfilerStartKernelLaunchEvent)
//   Group         one per plan (ncclProfilerStartGroupEvent(plan)): a plan boundary
//   Coll/P2p      one per task of the plan, parent = its CollApi/P2pApi handle,
//                 coll.parentGroup / p2p.parentGroup = the plan's Group handle
//   ProxyOp       one per proxy sub-op, parent = the task (Coll/P2p) handle, with channelId
//   KernelCh      one per channel the kernel ran the task on, parent = the task handle
//                 (started from the proxy thread, so only where a proxy op exists: net transport)
#include <cstddef>
#include <cstdint>
#include <sys/types.h>

namespace railcheck::nccl_profiler_abi {

enum Result : int { kSuccess = 0, kInternalError = 3, kInvalidArgument = 4 };

// ncclDebugLogLevel (common.h) and the logger NCCL hands to init.
enum LogLevel : int { kLogNone = 0, kLogVersion = 1, kLogWarn = 2, kLogInfo = 3 };
using Logger = void (*)(LogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...);
constexpr unsigned long kSubsysAll = ~0UL;

// Event type bits (profiler.h enum: ncclProfileGroup .. ncclProfileKernelLaunch).
constexpr std::uint64_t kGroup = 1U << 0;
constexpr std::uint64_t kColl = 1U << 1;
constexpr std::uint64_t kP2p = 1U << 2;
constexpr std::uint64_t kProxyOp = 1U << 3;
constexpr std::uint64_t kProxyStep = 1U << 4;
constexpr std::uint64_t kProxyCtrl = 1U << 5;
constexpr std::uint64_t kKernelCh = 1U << 6;
constexpr std::uint64_t kNetPlugin = 1U << 7;
constexpr std::uint64_t kGroupApi = 1U << 8;
constexpr std::uint64_t kCollApi = 1U << 9;
constexpr std::uint64_t kP2pApi = 1U << 10;
constexpr std::uint64_t kKernelLaunch = 1U << 11;

// ncclProfilerEventState_t values we look at.
constexpr int kStateKernelChStop = 22;
constexpr int kStateEndGroupApiStart = 23;
constexpr int kStateBeginGroupApiEnd = 24;

// The members of ncclProfilerEventDescr_v5_t's union, one type each (ISO C++ allows no type
// declared inside an anonymous union; clang warns, -Wnested-anon-types). Same layout.
struct GroupApiDescr {
  bool graph_captured;
  int group_depth;
};
struct CollApiDescr {
  const char* func;
  std::size_t count;
  const char* datatype;
  int root;
  void* stream;
  bool graph_captured;
};
struct P2pApiDescr {
  const char* func;
  std::size_t count;
  const char* datatype;
  void* stream;
  bool graph_captured;
};
struct KernelLaunchDescr {
  void* stream;
};
struct CollDescr {
  std::uint64_t seq_number;
  const char* func;
  const void* send_buff;
  void* recv_buff;
  std::size_t count;
  int root;
  const char* datatype;
  std::uint8_t n_channels;
  std::uint8_t n_warps;
  const char* algo;
  const char* proto;
  void* parent_group;
};
struct P2pDescr {
  const char* func;
  void* buff;
  const char* datatype;
  std::size_t count;
  int peer;
  std::uint8_t n_channels;
  void* parent_group;
};
struct ProxyOpDescr {
  pid_t pid;
  std::uint8_t channel_id;
  int peer;
  int n_steps;
  int chunk_size;
  int is_send;
};
struct ProxyStepDescr {
  int step;
};
struct KernelChDescr {
  std::uint8_t channel_id;
  std::uint64_t p_timer;
};
struct NetPluginDescr {
  std::int64_t id;
  void* data;
};

// ncclProfilerEventDescr_v5_t
struct EventDescr {
  std::uint64_t type;
  void* parent_obj;
  int rank;
  union {
    GroupApiDescr group_api;
    CollApiDescr coll_api;
    P2pApiDescr p2p_api;
    KernelLaunchDescr kernel_launch;
    CollDescr coll;
    P2pDescr p2p;
    ProxyOpDescr proxy_op;
    ProxyStepDescr proxy_step;
    KernelChDescr kernel_ch;
    NetPluginDescr net_plugin;
  };
};

// ncclProfilerEventStateArgs_v5_t
union EventStateArgs {
  struct {
    std::size_t trans_size;
  } proxy_step;
  struct {
    int appended_proxy_ops;
  } proxy_ctrl;
  struct {
    void* data;
  } net_plugin;
  struct {
    std::uint64_t p_timer;
  } kernel_ch;
};

// ncclProfiler_v5_t
struct ProfilerV5 {
  const char* name;
  Result (*init)(void** context, std::uint64_t comm_id, int* activation_mask, const char* comm_name, int n_nodes,
                 int nranks, int rank, Logger logfn);
  Result (*start_event)(void* context, void** handle, EventDescr* descr);
  Result (*stop_event)(void* handle);
  Result (*record_event_state)(void* handle, int state, EventStateArgs* args);
  Result (*finalize)(void* context);
};

static_assert(sizeof(void*) == 8, "LP64 only");
static_assert(offsetof(EventDescr, parent_obj) == 8);
static_assert(offsetof(EventDescr, rank) == 16);
static_assert(offsetof(EventDescr, coll) == 24);
static_assert(offsetof(EventDescr, coll.count) == 24 + 32);
static_assert(offsetof(EventDescr, coll.root) == 24 + 40);
static_assert(offsetof(EventDescr, coll.datatype) == 24 + 48);
static_assert(offsetof(EventDescr, coll.n_channels) == 24 + 56);
static_assert(offsetof(EventDescr, coll.algo) == 24 + 64);
static_assert(offsetof(EventDescr, coll.parent_group) == 24 + 80);
static_assert(offsetof(EventDescr, p2p.peer) == 24 + 32);
static_assert(offsetof(EventDescr, p2p.n_channels) == 24 + 36);
static_assert(offsetof(EventDescr, p2p.parent_group) == 24 + 40);
static_assert(offsetof(EventDescr, proxy_op.channel_id) == 24 + 4);
static_assert(offsetof(EventDescr, proxy_op.is_send) == 24 + 20);
static_assert(offsetof(EventDescr, kernel_ch.p_timer) == 24 + 8);
static_assert(sizeof(EventDescr) == 24 + 88);
static_assert(sizeof(EventStateArgs) == 8);
static_assert(offsetof(ProfilerV5, finalize) == 40);

}  // namespace railcheck::nccl_profiler_abi

// libnccl-profiler-railcheck.so: records what NCCL really scheduled, as JSON lines (format in
// docs/plan.md, "Ground truth"). Everything is preallocated at the first init (event slots and
// line slots, sizes from RAILCHECK_PROFILER_MAX_EVENTS / _MAX_LINES); the hot path claims a slot
// with one atomic add and formats into it, never locks or allocates. What does not fit is
// counted and reported as a "dropped" line. Lines are written at finalize (per communicator) and
// at exit for communicators never finalized. Anything unexpected (an unknown event type, a stop
// on a handle we never gave, a second finalize) is a WARN through NCCL's logger and an ignored
// call, never a crash.
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "backends/hw/nccl_profiler/profiler_abi.hpp"

namespace abi = railcheck::nccl_profiler_abi;

namespace {

constexpr std::size_t kLineBytes = 320;
constexpr int kMaxContexts = 64;
constexpr std::uint64_t kRecorded = abi::kGroup | abi::kColl | abi::kP2p | abi::kProxyOp | abi::kKernelCh |
                                    abi::kGroupApi | abi::kCollApi | abi::kP2pApi | abi::kKernelLaunch;

struct Context {
  std::atomic<int> state{0};  // 0 unused, 1 live, 2 finalized
  std::uint64_t comm_id = 0;
  int rank = -1;
  int nranks = 0;
  int n_nodes = 0;
  abi::Logger log = nullptr;
  int index = 0;
};

struct Event {
  std::atomic<int> state{0};  // 0 unused, 1 started, 2 stopped
  std::uint32_t id = 0;
  std::uint64_t type = 0;
  Context* ctx = nullptr;
};

struct Line {
  std::atomic<int> ready{0};
  int ctx = -1;
  char text[kLineBytes];
};

struct Store {
  Event* events = nullptr;
  std::size_t n_events = 0;
  Line* lines = nullptr;
  std::size_t n_lines = 0;
  std::atomic<std::size_t> next_event{0};
  std::atomic<std::size_t> next_line{0};
  std::atomic<std::uint64_t> dropped_events{0};
  std::atomic<std::uint64_t> dropped_lines{0};
  Context contexts[kMaxContexts];
  std::atomic<int> next_context{0};
  std::mutex init_mutex;  // init and finalize only, never on the event path
  bool ready = false;
};

Store& store() {
  static Store s;
  return s;
}

// The logger of the latest init, for warnings about handles that name no context.
std::atomic<abi::Logger> g_last_log{nullptr};

void warn(const Context* ctx, const char* fmt, ...) {
  char msg[256];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  abi::Logger log = (ctx != nullptr && ctx->log != nullptr) ? ctx->log : g_last_log.load(std::memory_order_relaxed);
  if (log != nullptr) {
    log(abi::kLogWarn, abi::kSubsysAll, __FILE__, __LINE__, "railcheck profiler: %s", msg);
  } else {
    std::fprintf(stderr, "railcheck profiler WARN: %s\n", msg);
  }
}

std::size_t env_size(const char* name, std::size_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  unsigned long long n = std::strtoull(v, &end, 10);
  if (end == v || *end != '\0' || n == 0 || n > (1ULL << 26)) return fallback;
  return static_cast<std::size_t>(n);
}

void flush_context(Context& ctx);

void flush_all_at_exit() {
  Store& s = store();
  for (int i = 0; i < s.next_context.load() && i < kMaxContexts; ++i) {
    Context& c = s.contexts[i];
    int live = 1;
    if (c.state.compare_exchange_strong(live, 2)) flush_context(c);
  }
}

bool ensure_store() {
  Store& s = store();
  if (s.ready) return true;
  s.n_events = env_size("RAILCHECK_PROFILER_MAX_EVENTS", 1U << 18);
  s.n_lines = env_size("RAILCHECK_PROFILER_MAX_LINES", 1U << 17);
  s.events = new (std::nothrow) Event[s.n_events];
  s.lines = new (std::nothrow) Line[s.n_lines];
  if (s.events == nullptr || s.lines == nullptr) {
    delete[] s.events;
    delete[] s.lines;
    s.events = nullptr;
    s.lines = nullptr;
    return false;
  }
  std::atexit(flush_all_at_exit);
  s.ready = true;
  return true;
}

// JSON-safe copy of a string NCCL gives us (function, datatype, algorithm names).
const char* safe(const char* s) {
  if (s == nullptr) return "";
  for (const char* p = s; *p != '\0'; ++p) {
    if (*p == '"' || *p == '\\' || static_cast<unsigned char>(*p) < 0x20) return "?";
    if (p - s > 64) return "?";
  }
  return s;
}

void emit(Context* ctx, const char* fmt, ...) {
  Store& s = store();
  std::size_t i = s.next_line.fetch_add(1, std::memory_order_relaxed);
  if (i >= s.n_lines) {
    s.dropped_lines.fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Line& line = s.lines[i];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(line.text, kLineBytes, fmt, ap);
  va_end(ap);
  line.ctx = ctx->index;
  line.ready.store(1, std::memory_order_release);
}

// The id of a handle we gave out, 0 for null or anything else (another plugin's, garbage).
std::uint32_t id_of(const void* handle) {
  Store& s = store();
  if (handle == nullptr || s.events == nullptr) return 0;
  auto p = reinterpret_cast<std::uintptr_t>(handle);
  auto lo = reinterpret_cast<std::uintptr_t>(s.events);
  auto hi = reinterpret_cast<std::uintptr_t>(s.events + s.n_events);
  if (p < lo || p >= hi || (p - lo) % sizeof(Event) != 0) return 0;
  return static_cast<const Event*>(handle)->id;
}

Event* event_of(void* handle) {
  Store& s = store();
  if (handle == nullptr || s.events == nullptr) return nullptr;
  auto p = reinterpret_cast<std::uintptr_t>(handle);
  auto lo = reinterpret_cast<std::uintptr_t>(s.events);
  auto hi = reinterpret_cast<std::uintptr_t>(s.events + s.n_events);
  if (p < lo || p >= hi || (p - lo) % sizeof(Event) != 0) return nullptr;
  return static_cast<Event*>(handle);
}

void flush_context(Context& ctx) {
  Store& s = store();
  const char* dir = std::getenv("RAILCHECK_PROFILER_DIR");
  char path[512];
  std::snprintf(path, sizeof path, "%s/railcheck-prof-%016llx-r%d.jsonl", (dir != nullptr && *dir != '\0') ? dir : ".",
                static_cast<unsigned long long>(ctx.comm_id), ctx.rank);
  std::FILE* f = std::fopen(path, "w");
  if (f == nullptr) {
    warn(&ctx, "cannot write %s", path);
    return;
  }
  std::fprintf(f,
               "{\"ev\":\"comm\",\"format\":\"railcheck-nccl-profiler\",\"version\":1,\"profiler_api\":5,"
               "\"comm_id\":\"%016llx\",\"rank\":%d,\"nranks\":%d,\"nnodes\":%d}\n",
               static_cast<unsigned long long>(ctx.comm_id), ctx.rank, ctx.nranks, ctx.n_nodes);
  std::size_t n = s.next_line.load();
  if (n > s.n_lines) n = s.n_lines;
  for (std::size_t i = 0; i < n; ++i) {
    if (s.lines[i].ready.load(std::memory_order_acquire) != 0 && s.lines[i].ctx == ctx.index) {
      std::fprintf(f, "%s\n", s.lines[i].text);
    }
  }
  std::fprintf(f, "{\"ev\":\"end\",\"dropped_events\":%llu,\"dropped_lines\":%llu}\n",
               static_cast<unsigned long long>(s.dropped_events.load()),
               static_cast<unsigned long long>(s.dropped_lines.load()));
  std::fclose(f);
}

abi::Result init(void** context, std::uint64_t comm_id, int* activation_mask, const char* /*comm_name*/, int n_nodes,
                 int nranks, int rank, abi::Logger logfn) {
  if (context == nullptr || activation_mask == nullptr) return abi::kInvalidArgument;
  Store& s = store();
  std::lock_guard<std::mutex> lock(s.init_mutex);
  *context = nullptr;
  if (!ensure_store()) {
    warn(nullptr, "out of memory for the event store; recording nothing");
    *activation_mask = 0;
    return abi::kSuccess;
  }
  int i = s.next_context.load();
  if (i >= kMaxContexts) {
    warn(nullptr, "more than %d communicators; recording nothing for comm %016llx", kMaxContexts,
         static_cast<unsigned long long>(comm_id));
    *activation_mask = 0;
    return abi::kSuccess;
  }
  Context& c = s.contexts[i];
  c.comm_id = comm_id;
  c.rank = rank;
  c.nranks = nranks;
  c.n_nodes = n_nodes;
  c.log = logfn;
  if (logfn != nullptr) g_last_log.store(logfn, std::memory_order_relaxed);
  c.index = i;
  c.state.store(1);
  s.next_context.store(i + 1);
  *context = &c;
  *activation_mask = static_cast<int>(kRecorded);
  if (logfn != nullptr) {
    logfn(abi::kLogInfo, 1, __FILE__, __LINE__, "railcheck profiler: recording comm %016llx rank %d of %d",
          static_cast<unsigned long long>(comm_id), rank, nranks);
  }
  return abi::kSuccess;
}

Context* context_of(void* context) {
  Store& s = store();
  auto p = reinterpret_cast<std::uintptr_t>(context);
  auto lo = reinterpret_cast<std::uintptr_t>(&s.contexts[0]);
  auto hi = reinterpret_cast<std::uintptr_t>(&s.contexts[kMaxContexts]);
  if (context == nullptr || p < lo || p >= hi || (p - lo) % sizeof(Context) != 0) return nullptr;
  return static_cast<Context*>(context);
}

abi::Result start_event(void* context, void** handle, abi::EventDescr* d) {
  if (handle == nullptr) return abi::kSuccess;
  *handle = nullptr;
  Context* ctx = context_of(context);
  if (ctx == nullptr || ctx->state.load(std::memory_order_relaxed) != 1 || d == nullptr) {
    warn(ctx, "startEvent on an unknown or finalized context; ignored");
    return abi::kSuccess;
  }
  if ((d->type & kRecorded) == 0 || (d->type & (d->type - 1)) != 0) {
    warn(ctx, "startEvent with event type 0x%llx we did not ask for; ignored", static_cast<unsigned long long>(d->type));
    return abi::kSuccess;
  }
  Store& s = store();
  std::size_t i = s.next_event.fetch_add(1, std::memory_order_relaxed);
  if (i >= s.n_events) {
    s.dropped_events.fetch_add(1, std::memory_order_relaxed);
    return abi::kSuccess;
  }
  Event& e = s.events[i];
  e.id = static_cast<std::uint32_t>(i + 1);
  e.type = d->type;
  e.ctx = ctx;
  e.state.store(1, std::memory_order_release);
  *handle = &e;
  std::uint32_t parent = id_of(d->parent_obj);
  switch (d->type) {
    case abi::kGroupApi:
      emit(ctx, "{\"ev\":\"group_api\",\"id\":%u,\"depth\":%d,\"graph\":%s}", e.id, d->group_api.group_depth,
           d->group_api.graph_captured ? "true" : "false");
      break;
    case abi::kCollApi:
      emit(ctx, "{\"ev\":\"coll_api\",\"id\":%u,\"parent\":%u,\"func\":\"%s\",\"count\":%zu,\"dtype\":\"%s\",\"root\":%d}",
           e.id, parent, safe(d->coll_api.func), d->coll_api.count, safe(d->coll_api.datatype), d->coll_api.root);
      break;
    case abi::kP2pApi:
      emit(ctx, "{\"ev\":\"p2p_api\",\"id\":%u,\"parent\":%u,\"func\":\"%s\",\"count\":%zu,\"dtype\":\"%s\"}", e.id, parent,
           safe(d->p2p_api.func), d->p2p_api.count, safe(d->p2p_api.datatype));
      break;
    case abi::kKernelLaunch:
      emit(ctx, "{\"ev\":\"kernel_launch\",\"id\":%u,\"parent\":%u}", e.id, parent);
      break;
    case abi::kGroup:
      emit(ctx, "{\"ev\":\"plan\",\"id\":%u}", e.id);
      break;
    case abi::kColl:
      emit(ctx,
           "{\"ev\":\"coll\",\"id\":%u,\"parent\":%u,\"plan\":%u,\"seq\":%llu,\"func\":\"%s\",\"count\":%zu,"
           "\"dtype\":\"%s\",\"root\":%d,\"nchannels\":%u,\"nwarps\":%u,\"algo\":\"%s\",\"proto\":\"%s\"}",
           e.id, parent, id_of(d->coll.parent_group), static_cast<unsigned long long>(d->coll.seq_number),
           safe(d->coll.func), d->coll.count, safe(d->coll.datatype), d->coll.root, d->coll.n_channels,
           d->coll.n_warps, safe(d->coll.algo), safe(d->coll.proto));
      break;
    case abi::kP2p:
      emit(ctx,
           "{\"ev\":\"p2p\",\"id\":%u,\"parent\":%u,\"plan\":%u,\"func\":\"%s\",\"count\":%zu,\"dtype\":\"%s\","
           "\"peer\":%d,\"nchannels\":%u}",
           e.id, parent, id_of(d->p2p.parent_group), safe(d->p2p.func), d->p2p.count, safe(d->p2p.datatype),
           d->p2p.peer, d->p2p.n_channels);
      break;
    case abi::kProxyOp:
      emit(ctx,
           "{\"ev\":\"proxy_op\",\"id\":%u,\"parent\":%u,\"channel\":%u,\"peer\":%d,\"nsteps\":%d,\"chunk\":%d,"
           "\"send\":%s}",
           e.id, parent, d->proxy_op.channel_id, d->proxy_op.peer, d->proxy_op.n_steps, d->proxy_op.chunk_size,
           d->proxy_op.is_send != 0 ? "true" : "false");
      break;
    case abi::kKernelCh:
      emit(ctx, "{\"ev\":\"kernel_ch\",\"id\":%u,\"parent\":%u,\"channel\":%u}", e.id, parent, d->kernel_ch.channel_id);
      break;
    default:
      break;
  }
  return abi::kSuccess;
}

abi::Result stop_event(void* handle) {
  Event* e = event_of(handle);
  if (e == nullptr) {
    if (handle != nullptr) warn(nullptr, "stopEvent on a handle this plugin never gave; ignored");
    return abi::kSuccess;
  }
  int started = 1;
  if (!e->state.compare_exchange_strong(started, 2, std::memory_order_acq_rel)) {
    warn(e->ctx, "stopEvent on event %u that is not running; ignored", e->id);
    return abi::kSuccess;
  }
  // Plan and launch ends are boundaries worth a line; the rest are implied by the next plan.
  if (e->ctx != nullptr && e->ctx->state.load(std::memory_order_relaxed) == 1 &&
      (e->type == abi::kGroup || e->type == abi::kKernelLaunch || e->type == abi::kGroupApi)) {
    emit(e->ctx, "{\"ev\":\"stop\",\"id\":%u}", e->id);
  }
  return abi::kSuccess;
}

abi::Result record_event_state(void* handle, int state, abi::EventStateArgs* /*args*/) {
  Event* e = event_of(handle);
  if (e == nullptr) {
    if (handle != nullptr) warn(nullptr, "recordEventState on a handle this plugin never gave; ignored");
    return abi::kSuccess;
  }
  if (e->state.load(std::memory_order_acquire) != 1) {
    warn(e->ctx, "recordEventState(%d) on event %u that is not running; ignored", state, e->id);
  }
  return abi::kSuccess;
}

abi::Result finalize(void* context) {
  Context* ctx = context_of(context);
  if (ctx == nullptr) {
    warn(nullptr, "finalize on an unknown context; ignored");
    return abi::kSuccess;
  }
  std::lock_guard<std::mutex> lock(store().init_mutex);
  int live = 1;
  if (!ctx->state.compare_exchange_strong(live, 2)) {
    warn(ctx, "finalize on comm %016llx rank %d twice; ignored", static_cast<unsigned long long>(ctx->comm_id),
         ctx->rank);
    return abi::kSuccess;
  }
  flush_context(*ctx);
  return abi::kSuccess;
}

}  // namespace

extern "C" {
__attribute__((visibility("default"))) abi::ProfilerV5 ncclProfiler_v5 = {
    "railcheck", init, start_event, stop_event, record_event_state, finalize};
}

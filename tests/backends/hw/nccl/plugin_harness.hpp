#pragma once
// A stand-in for NCCL's proxy: loads libnccl-net-railcheck.so with dlopen, resolves its
// ncclNetPlugin_v8 / ncclNetPlugin_v11 table and drives it the way NCCL does (init with a
// logger, devices, getProperties, listen, connect/accept loops that retry on a NULL comm,
// regMr on host buffers, isend / grouped irecv with tags, test polling, close*).
// Version differences (int vs size_t sizes, the v11 context) are absorbed here so one driver
// exercises both tables.
#include <dlfcn.h>

#include <cstdlib>

#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backends/hw/nccl/net_abi.hpp"
#include "backends/hw/nccl/plugin_config.hpp"

namespace railcheck::nccl_harness {

namespace abi = railcheck::nccl_abi;

// The net provider reads FI_NET_TX_SIZE, FI_NET_RX_SIZE and FI_NET_MAX_SAVED once, when
// libfabric starts in a process. NCCL loads the plugin before anything of libfabric has run, so the
// plugin's init sets them in time; a test binary runs tcp;ofi_rxm and shm cases in the same process
// first, whose libfabric start the harness's forked children inherit. So what the plugin would set
// (rxm_sizes) is set here, before main, whatever order the cases run in; an environment that sets
// them already is left alone.
inline const bool kNetQueueDepthSet = [] {
  const std::string depth = std::to_string(railcheck::nccl::kNetQueueDepth);
  ::setenv("FI_NET_TX_SIZE", depth.c_str(), 0);
  ::setenv("FI_NET_RX_SIZE", depth.c_str(), 0);
  ::setenv("FI_NET_MAX_SAVED", "0", 0);
  return true;
}();

// How a harness child process ends (the parent reads it as the case's verdict).
constexpr int kExitOk = 0;
constexpr int kExitMismatch = 1;
constexpr int kExitCallFailed = 2;
constexpr int kExitLogMissing = 3;
constexpr int kExitProviderMissing = 77;

// Every line the plugin logs, as NCCL would print it.
inline std::mutex g_log_mu;
inline std::vector<std::string> g_log;

inline void capture_log(abi::LogLevel level, unsigned long /*flags*/, const char* /*file*/, int /*line*/,
                        const char* fmt, ...) {
  char buf[2048];
  va_list ap;
  va_start(ap, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  std::lock_guard lock(g_log_mu);
  g_log.push_back(std::string(level == abi::kLogWarn ? "WARN " : "INFO ") + buf);
}

inline bool log_has(const std::string& needle) {
  std::lock_guard lock(g_log_mu);
  for (const auto& l : g_log)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

inline std::string log_text() {
  std::lock_guard lock(g_log_mu);
  std::string out;
  for (const auto& l : g_log) out += l + "\n";
  return out;
}

// The job key the harness's ranks share, as a launcher would set it (docs/security.md): used
// when the test set none of RAILCHECK_JOB_KEY_FILE, RAILCHECK_JOB_KEY, RAILCHECK_JOB_AUTH.
inline constexpr const char* kHarnessJobKey = "plugin harness job key: 32 bytes or more";
inline void default_job_key() {
  if (std::getenv("RAILCHECK_JOB_KEY_FILE") == nullptr && std::getenv("RAILCHECK_JOB_KEY") == nullptr &&
      std::getenv("RAILCHECK_JOB_AUTH") == nullptr)
    ::setenv("RAILCHECK_JOB_KEY", kHarnessJobKey, 1);
}

class Plugin {
 public:
  Plugin(const char* path, int version) {
    default_job_key();
    lib_ = ::dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (lib_ == nullptr) throw std::runtime_error(std::string("dlopen: ") + ::dlerror());
    if (version == 8)
      v8_ = static_cast<const abi::NetV8*>(::dlsym(lib_, "ncclNetPlugin_v8"));
    else
      v11_ = static_cast<const abi::NetV11*>(::dlsym(lib_, "ncclNetPlugin_v11"));
    if (v8_ == nullptr && v11_ == nullptr)
      throw std::runtime_error("ncclNetPlugin_v" + std::to_string(version) + " not exported");
  }
  Plugin(const Plugin&) = delete;
  Plugin& operator=(const Plugin&) = delete;
  ~Plugin() {
    if (v11_ != nullptr && ctx_ != nullptr) v11_->finalize(ctx_);
    // Not dlclose'd: like NCCL, which keeps a loaded plugin for the process's life.
  }

  const char* name() const { return v8_ ? v8_->name : v11_->name; }
  int init() {
    if (v8_) return v8_->init(capture_log);
    return v11_->init(&ctx_, 0x5eed, nullptr, capture_log, nullptr);
  }
  int devices(int* n) const { return v8_ ? v8_->devices(n) : v11_->devices(n); }
  // The fields both versions share.
  int properties(int dev, abi::PropertiesV8* out) const {
    if (v8_) return v8_->get_properties(dev, out);
    abi::PropertiesV11 p{};
    const int r = v11_->get_properties(dev, &p);
    *out = abi::PropertiesV8{p.name, p.pci_path, p.guid,      p.ptr_support, p.reg_is_global,   p.speed,
                             p.port, p.latency,  p.max_comms, p.max_recvs,   p.net_device_type, p.net_device_version};
    return r;
  }
  int listen(int dev, void* handle, void** lc) {
    return v8_ ? v8_->listen(dev, handle, lc) : v11_->listen(ctx_, dev, handle, lc);
  }
  int connect(int dev, void* handle, void** sc) {
    return v8_ ? v8_->connect(dev, handle, sc, nullptr) : v11_->connect(ctx_, dev, handle, sc, nullptr);
  }
  int accept(void* lc, void** rc) { return v8_ ? v8_->accept(lc, rc, nullptr) : v11_->accept(lc, rc, nullptr); }
  int reg_mr(void* comm, void* data, std::size_t size, int type, void** mh) {
    return v8_ ? v8_->reg_mr(comm, data, size, type, mh) : v11_->reg_mr(comm, data, size, type, mh);
  }
  int dereg_mr(void* comm, void* mh) { return v8_ ? v8_->dereg_mr(comm, mh) : v11_->dereg_mr(comm, mh); }
  int isend(void* sc, void* data, std::size_t size, int tag, void* mh, void** req) {
    if (v8_) return v8_->isend(sc, data, static_cast<int>(size), tag, mh, req);
    return v11_->isend(sc, data, size, tag, mh, nullptr, req);
  }
  int irecv(void* rc, int n, void** data, std::size_t* sizes, int* tags, void** mhs, void** req) {
    if (v8_) {
      int small[abi::kMaxRequests];
      for (int i = 0; i < n; ++i) small[i] = static_cast<int>(sizes[i]);
      return v8_->irecv(rc, n, data, small, tags, mhs, req);
    }
    void* phandles[abi::kMaxRequests] = {};
    return v11_->irecv(rc, n, data, sizes, tags, mhs, phandles, req);
  }
  int iflush(void* rc, int n, void** data, int* sizes, void** mhs, void** req) {
    return v8_ ? v8_->iflush(rc, n, data, sizes, mhs, req) : v11_->iflush(rc, n, data, sizes, mhs, req);
  }
  int test(void* req, int* done, int* sizes) {
    return v8_ ? v8_->test(req, done, sizes) : v11_->test(req, done, sizes);
  }
  int close_send(void* c) { return v8_ ? v8_->close_send(c) : v11_->close_send(c); }
  int close_recv(void* c) { return v8_ ? v8_->close_recv(c) : v11_->close_recv(c); }
  int close_listen(void* c) { return v8_ ? v8_->close_listen(c) : v11_->close_listen(c); }

 private:
  void* lib_ = nullptr;
  const abi::NetV8* v8_ = nullptr;
  const abi::NetV11* v11_ = nullptr;
  void* ctx_ = nullptr;
};

}  // namespace railcheck::nccl_harness

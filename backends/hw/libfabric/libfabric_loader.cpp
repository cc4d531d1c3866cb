// libfabric is loaded on first use (dlopen), not linked.
//
// Why: Debian's libfabric1 links libpsm_infinipath, whose libinfinipath.so.4 calibrates a cycle
// counter in a load-time constructor: about 700 usleep(125 us) calls pinned to CPU 0, 0.2-0.25 s
// of wall time in every process that merely links libfabric (`strace -c`: 702 clock_nanosleep at
// start, 2026-11-29). Every test process, every `railcheck` the tests start and every
// `railcheck run` that never touches a NIC paid it. Loaded here, it is paid only by a process that
// asks libfabric something.
//
// The only functions of libfabric that are real exported symbols the project calls (every other
// fi_* call is an inline in its headers, dispatched through the ops tables of the objects these
// return) are the six below; they are defined here with libfabric's own signatures and forward to the library's
// definitions, bound by the symbol version our headers were compiled against (what the linker
// would have recorded). Everything else in the backend is unchanged. In the NCCL plugin these
// definitions stay private (exports.map exports only the plugin tables).
//
// If the library cannot be loaded, fi_getinfo / fi_fabric / fi_dupinfo fail with -FI_ENOSYS and
// fi_strerror says why (dlopen's own message), so "provider not available" errors name the cause.
#include "backends/hw/libfabric/libfabric_loader.hpp"

#include <dlfcn.h>
#include <rdma/fabric.h>
#include <rdma/fi_errno.h>

#include <mutex>
#include <string>

namespace {

// libfabric's soname on every distribution the project builds on (Debian 12, Ubuntu 24.04).
constexpr const char* kSoname = "libfabric.so.1";

struct LibfabricApi {
  int (*getinfo)(uint32_t, const char*, const char*, uint64_t, const fi_info*, fi_info**) = nullptr;
  void (*freeinfo)(fi_info*) = nullptr;
  fi_info* (*dupinfo)(const fi_info*) = nullptr;
  int (*fabric)(fi_fabric_attr*, fid_fabric**, void*) = nullptr;
  const char* (*strerror)(int) = nullptr;
  uint32_t (*version)() = nullptr;
  std::string load_error;  // empty when every function above was bound
};

template <typename Fn>
bool bind_symbol(void* lib, Fn& fn, const char* name, const char* version, std::string& error) {
  void* sym = dlvsym(lib, name, version);
  if (sym == nullptr) {
    error = std::string(kSoname) + " has no " + name + "@" + version;
    return false;
  }
  fn = reinterpret_cast<Fn>(sym);
  return true;
}

const LibfabricApi& libfabric_api() {
  static LibfabricApi loaded;
  static std::once_flag once;
  std::call_once(once, [] {
    // RTLD_GLOBAL: libfabric loads its provider plugins (dlopen'd DSOs) which resolve fi_* back
    // into it; they find it in the global scope, as when it is linked. Never closed: providers
    // keep threads and atexit handlers of their own.
    void* lib = dlopen(kSoname, RTLD_NOW | RTLD_GLOBAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      loaded.load_error = std::string(kSoname) + " could not be loaded (" + (why != nullptr ? why : "unknown") + ")";
      return;
    }
    std::string error;
    // The versions are those of Debian 12's libfabric 1.17 headers (`nm -D` of a linked binary):
    // a library whose ABI for these calls differs lacks the version and is refused here.
    const bool ok = bind_symbol(lib, loaded.getinfo, "fi_getinfo", "FABRIC_1.3", error) &&
                    bind_symbol(lib, loaded.freeinfo, "fi_freeinfo", "FABRIC_1.3", error) &&
                    bind_symbol(lib, loaded.dupinfo, "fi_dupinfo", "FABRIC_1.3", error) &&
                    bind_symbol(lib, loaded.fabric, "fi_fabric", "FABRIC_1.1", error) &&
                    bind_symbol(lib, loaded.strerror, "fi_strerror", "FABRIC_1.0", error) &&
                    bind_symbol(lib, loaded.version, "fi_version", "FABRIC_1.0", error);
    if (!ok) loaded = LibfabricApi{.load_error = error};
  });
  return loaded;
}

}  // namespace

std::optional<std::string> railcheck::fabric::libfabric_unavailable() {
  const LibfabricApi& f = libfabric_api();
  if (f.load_error.empty()) return std::nullopt;
  return f.load_error;
}

extern "C" {

int fi_getinfo(uint32_t version, const char* node, const char* service, uint64_t flags, const fi_info* hints,
               fi_info** info) {
  const LibfabricApi& f = libfabric_api();
  if (f.getinfo == nullptr) return -FI_ENOSYS;
  return f.getinfo(version, node, service, flags, hints, info);
}

void fi_freeinfo(fi_info* info) {
  // Only a loaded library hands out an fi_info, so none exists to free without one.
  const LibfabricApi& f = libfabric_api();
  if (info != nullptr && f.freeinfo != nullptr) f.freeinfo(info);
}

fi_info* fi_dupinfo(const fi_info* info) {
  const LibfabricApi& f = libfabric_api();
  return f.dupinfo != nullptr ? f.dupinfo(info) : nullptr;
}

int fi_fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context) {
  const LibfabricApi& f = libfabric_api();
  if (f.fabric == nullptr) return -FI_ENOSYS;
  return f.fabric(attr, fabric, context);
}

const char* fi_strerror(int errnum) {
  const LibfabricApi& f = libfabric_api();
  if (f.strerror == nullptr) return f.load_error.c_str();
  return f.strerror(errnum);
}

uint32_t fi_version(void) {
  const LibfabricApi& f = libfabric_api();
  return f.version != nullptr ? f.version() : 0;  // 0.0: no library (the benches print it)
}

}  // extern "C"

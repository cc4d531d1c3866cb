#include "backends/hw/libfabric/fabric_api.hpp"

#include <dlfcn.h>

#include <cstring>

namespace railcheck::fabric::api {
namespace {

struct Library {
  decltype(&fi_getinfo) getinfo = nullptr;
  decltype(&fi_freeinfo) freeinfo = nullptr;
  decltype(&fi_dupinfo) dupinfo = nullptr;
  decltype(&fi_fabric) fabric = nullptr;
  decltype(&fi_strerror) strerror = nullptr;
  decltype(&fi_version) version = nullptr;
  std::string error;

  Library() {
    // Never closed: provider libraries and their threads may outlive any one caller.
    void* h = dlopen("libfabric.so.1", RTLD_NOW | RTLD_LOCAL);
    if (h == nullptr) {
      const char* why = dlerror();
      error = why != nullptr ? why : "dlopen(libfabric.so.1) failed";
      return;
    }
    bool ok = true;
    auto find = [&](auto& fn, const char* name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(h, name));
      if (fn == nullptr) {
        ok = false;
        if (error.empty()) error = std::string("libfabric.so.1 has no ") + name;
      }
    };
    find(getinfo, "fi_getinfo");
    find(freeinfo, "fi_freeinfo");
    find(dupinfo, "fi_dupinfo");
    find(fabric, "fi_fabric");
    find(strerror, "fi_strerror");
    find(version, "fi_version");
    if (!ok) getinfo = nullptr;  // loaded() is false: nothing is called through a partial table
  }
  bool loaded() const { return getinfo != nullptr; }
};

const Library& lib() {
  static const Library l;  // thread-safe initialisation
  return l;
}

}  // namespace

int getinfo(std::uint32_t version, const char* node, const char* service, std::uint64_t flags, const fi_info* hints,
            fi_info** info) {
  if (!lib().loaded()) return -FI_ENOSYS;
  return lib().getinfo(version, node, service, flags, hints, info);
}

void freeinfo(fi_info* info) {
  if (info != nullptr && lib().loaded()) lib().freeinfo(info);
}

fi_info* dupinfo(const fi_info* info) { return lib().loaded() ? lib().dupinfo(info) : nullptr; }

int fabric(fi_fabric_attr* attr, fid_fabric** out, void* context) {
  if (!lib().loaded()) return -FI_ENOSYS;
  return lib().fabric(attr, out, context);
}

const char* strerror(int errnum) {
  if (lib().loaded()) return lib().strerror(errnum);
  return errnum == FI_ENOSYS ? "libfabric.so.1 could not be loaded" : std::strerror(errnum);
}

std::uint32_t version() { return lib().loaded() ? lib().version() : 0; }

std::string load_error() { return lib().error; }

}  // namespace railcheck::fabric::api

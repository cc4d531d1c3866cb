#pragma once
// libfabric's exported entry points, loaded on first use (dlopen) rather than at process start.
//
// Why: Debian's libfabric1 has the PSM providers built in, so loading libfabric.so.1 loads
// libinfinipath, whose constructor calibrates a clock by sleeping: 0.21 s at the start of every
// process linked against libfabric, measured 2026-11-25 on an empty main() (0.01 s without it).
// Every `railcheck` invocation (a sweep starts one per point) and every test binary paid it,
// though most never touch a NIC. Everything else railcheck calls is reached through the fid ops
// tables these return (the inline fi_* functions of libfabric's headers), so these six are the
// whole link-time surface; each takes the default symbol version, as the linker would.
#include <rdma/fabric.h>

#include <cstdint>
#include <string>

namespace railcheck::fabric::api {

// fi_getinfo, fi_freeinfo, fi_dupinfo, fi_fabric, fi_strerror, fi_version. If libfabric.so.1 cannot be
// loaded, getinfo and fabric return -FI_ENOSYS, dupinfo nullptr, and load_error() says why.
int getinfo(std::uint32_t version, const char* node, const char* service, std::uint64_t flags, const fi_info* hints,
            fi_info** info);
void freeinfo(fi_info* info);
fi_info* dupinfo(const fi_info* info);
inline fi_info* allocinfo() { return dupinfo(nullptr); }  // fi_allocinfo()
int fabric(fi_fabric_attr* attr, fid_fabric** fabric, void* context);
const char* strerror(int errnum);
std::uint32_t version();  // fi_version(); 0 if the library cannot be loaded

// Empty once libfabric.so.1 is loaded (it is loaded by the first call of any function above);
// otherwise the loader's reason.
std::string load_error();

}  // namespace railcheck::fabric::api

#include "backends/hw/cuda/zerobuf/vmm_window.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <utility>

#include "backends/hw/cuda/zerobuf/peer_fd.hpp"

namespace railcheck::hw::zerobuf {
namespace {

Error cu_failed(const std::string& call, CUresult r, std::string hint = {}) {
  return Error{fmt::format("zerobuf: {} failed: {}", call, cu_error_text(r)), std::move(hint)};
}

CUmemAllocationProp device_prop(int device) {
  CUmemAllocationProp p{};
  p.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  p.location.id = device;
  p.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return p;
}

}  // namespace

std::string cu_error_text(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  cuGetErrorName(r, &name);
  cuGetErrorString(r, &text);
  return fmt::format("{} ({})", name ? name : "unknown CUresult", text ? text : "no description");
}

Result<std::uint64_t> vmm_granularity(int device) {
  if (CUresult r = cuInit(0); r != CUDA_SUCCESS) return cu_failed("cuInit", r, "is the NVIDIA driver loaded?");
  int supported = 0;
  if (CUresult r =
          cuDeviceGetAttribute(&supported, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, device);
      r != CUDA_SUCCESS)
    return cu_failed(fmt::format("cuDeviceGetAttribute(POSIX_FILE_DESCRIPTOR_SUPPORTED, device {})", device), r);
  if (!supported)
    return Error{fmt::format("zerobuf: device {} cannot export memory as a POSIX file descriptor", device),
                 "the zero-buffer path needs the CUDA VMM API with descriptor export (Linux, a recent driver)"};
  const CUmemAllocationProp p = device_prop(device);
  std::size_t g = 0;
  if (CUresult r = cuMemGetAllocationGranularity(&g, &p, CU_MEM_ALLOC_GRANULARITY_MINIMUM); r != CUDA_SUCCESS)
    return cu_failed(fmt::format("cuMemGetAllocationGranularity(device {})", device), r);
  return static_cast<std::uint64_t>(g);
}

Result<std::array<std::uint8_t, 16>> device_uuid(int device) {
  CUuuid u{};
  if (CUresult r = cuDeviceGetUuid(&u, device); r != CUDA_SUCCESS)
    return cu_failed(fmt::format("cuDeviceGetUuid(device {})", device), r);
  std::array<std::uint8_t, 16> out{};
  for (std::size_t i = 0; i < out.size(); ++i) out[i] = static_cast<std::uint8_t>(u.bytes[i]);
  return out;
}

Result<VmmWindow> VmmWindow::create(int device, std::uint64_t bytes) {
  VmmWindow w;
  w.bytes_ = bytes;
  const CUmemAllocationProp p = device_prop(device);
  if (CUresult r = cuMemCreate(&w.handle_, bytes, &p, 0); r != CUDA_SUCCESS)
    return cu_failed(fmt::format("cuMemCreate({} B on device {}, exportable as a descriptor)", bytes, device), r,
                     "a smaller window (large_heap_bytes), or free device memory");
  w.have_handle_ = true;
  int fd = -1;
  if (CUresult r = cuMemExportToShareableHandle(&fd, w.handle_, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
      r != CUDA_SUCCESS)
    return cu_failed(fmt::format("cuMemExportToShareableHandle({} B, POSIX descriptor)", bytes), r);
  w.fd_ = fd;
  if (CUresult r = cuMemAddressReserve(&w.base_, bytes, 0, 0, 0); r != CUDA_SUCCESS)
    return cu_failed(fmt::format("cuMemAddressReserve({} B)", bytes), r);
  w.reserved_ = true;
  if (CUresult r = cuMemMap(w.base_, bytes, 0, w.handle_, 0); r != CUDA_SUCCESS)
    return cu_failed(fmt::format("cuMemMap({} B at {:#x})", bytes, w.base_), r);
  w.mapped_ = true;
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (CUresult r = cuMemSetAccess(w.base_, bytes, &access, 1); r != CUDA_SUCCESS)
    return cu_failed(fmt::format("cuMemSetAccess({} B at {:#x}, read-write for device {})", bytes, w.base_, device), r);
  return w;
}

Result<VmmWindow> VmmWindow::import(int device, const WindowHandle& peer) {
  auto fd = fetch_peer_fd(peer.pid, peer.fd);
  if (!fd) return Error{fmt::format("rank {}'s window: {}", peer.rank, fd.error().what), fd.error().hint};
  VmmWindow w;
  w.bytes_ = peer.window_bytes;
  const CUresult imp =
      cuMemImportFromShareableHandle(&w.handle_, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd.value())),
                                     CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  ::close(fd.value());  // the handle holds the memory now; the descriptor copy is not needed
  if (imp != CUDA_SUCCESS)
    return cu_failed(fmt::format("cuMemImportFromShareableHandle(rank {}'s window, descriptor {} of pid {})", peer.rank,
                                 peer.fd, peer.pid),
                     imp);
  w.have_handle_ = true;
  if (CUresult r = cuMemAddressReserve(&w.base_, w.bytes_, 0, 0, 0); r != CUDA_SUCCESS)
    return cu_failed(fmt::format("cuMemAddressReserve({} B for rank {}'s window)", w.bytes_, peer.rank), r);
  w.reserved_ = true;
  if (CUresult r = cuMemMap(w.base_, w.bytes_, 0, w.handle_, 0); r != CUDA_SUCCESS)
    return cu_failed(fmt::format("cuMemMap(rank {}'s window, {} B)", peer.rank, w.bytes_), r);
  w.mapped_ = true;
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (CUresult r = cuMemSetAccess(w.base_, w.bytes_, &access, 1); r != CUDA_SUCCESS)
    return cu_failed(fmt::format("cuMemSetAccess(rank {}'s window for device {})", peer.rank, device), r,
                     "the two GPUs need peer access (NVLink or PCIe P2P)");
  return w;
}

VmmWindow::VmmWindow(VmmWindow&& o) noexcept { *this = std::move(o); }

VmmWindow& VmmWindow::operator=(VmmWindow&& o) noexcept {
  if (this != &o) {
    release();
    handle_ = std::exchange(o.handle_, 0);
    have_handle_ = std::exchange(o.have_handle_, false);
    base_ = std::exchange(o.base_, 0);
    reserved_ = std::exchange(o.reserved_, false);
    mapped_ = std::exchange(o.mapped_, false);
    bytes_ = std::exchange(o.bytes_, 0);
    fd_ = std::exchange(o.fd_, -1);
  }
  return *this;
}

VmmWindow::~VmmWindow() { release(); }

// Teardown: errors here cannot be acted on (the context may already be gone at exit), so they
// are not reported; the driver frees what is left when the process ends.
void VmmWindow::release() {
  if (mapped_) cuMemUnmap(base_, bytes_);
  if (reserved_) cuMemAddressFree(base_, bytes_);
  if (have_handle_) cuMemRelease(handle_);
  if (fd_ >= 0) ::close(fd_);
  mapped_ = reserved_ = have_handle_ = false;
  fd_ = -1;
}

}  // namespace railcheck::hw::zerobuf

#pragma once
// A window of device memory through the CUDA driver's virtual memory API (zbccl seed §4.2,
// §4.4): the owner creates the physical allocation (cuMemCreate, exportable as a POSIX file
// descriptor), reserves an address range and maps it read-write for its device; a peer fetches
// the owner's descriptor (peer_fd.hpp), imports it (cuMemImportFromShareableHandle) and maps it
// the same way, at an address of its own.
//
// Lifetime (seed §8.1): the driver counts references to the physical memory: the owner's
// handle, every importer's handle and every mapping. The memory is freed when the last one goes,
// whether by teardown or because the process died (the OS closes its descriptors and the driver
// drops its context). A survivor that still maps a dead rank's window keeps that memory alive
// until it tears down.
//
// Needs a current CUDA context on `device` (the runtime's primary one: the caller runs
// cudaSetDevice + cudaFree(0) first). Every driver call is checked; an error names the call,
// the sizes and the driver's error name and text.
#include <cuda.h>

#include <array>
#include <cstdint>

#include "backends/hw/cuda/zerobuf/window_handle.hpp"
#include "engine/core/result.hpp"

namespace railcheck::hw::zerobuf {

// The driver's minimum granularity for a device allocation exportable as a descriptor.
Result<std::uint64_t> vmm_granularity(int device);
Result<std::array<std::uint8_t, 16>> device_uuid(int device);

class VmmWindow {
 public:
  // A new window of `bytes` (a multiple of vmm_granularity) on `device`, exported.
  static Result<VmmWindow> create(int device, std::uint64_t bytes);
  // A peer's window, from its handle, mapped for `device`.
  static Result<VmmWindow> import(int device, const WindowHandle& peer);

  VmmWindow(VmmWindow&& o) noexcept;
  VmmWindow& operator=(VmmWindow&& o) noexcept;
  VmmWindow(const VmmWindow&) = delete;
  VmmWindow& operator=(const VmmWindow&) = delete;
  ~VmmWindow();

  CUdeviceptr base() const { return base_; }
  std::uint64_t bytes() const { return bytes_; }
  // The exported descriptor peers fetch (owner only; -1 for an imported window).
  int exported_fd() const { return fd_; }

 private:
  VmmWindow() = default;
  void release();

  CUmemGenericAllocationHandle handle_ = 0;
  bool have_handle_ = false;
  CUdeviceptr base_ = 0;
  bool reserved_ = false, mapped_ = false;
  std::uint64_t bytes_ = 0;
  int fd_ = -1;
};

// "cuMemMap(...) failed: CUDA_ERROR_INVALID_VALUE (invalid argument)": the text of a driver error.
std::string cu_error_text(CUresult r);

}  // namespace railcheck::hw::zerobuf

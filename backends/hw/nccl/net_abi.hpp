#pragma once
// Our own declarations of NCCL's public ext-net plugin ABI, versions 8 and 11: the two tables
// this plugin exports. NCCL 2.28.9 (libnccl.so.2 in /usr/local/cuda/lib64) looks up
// ncclNetPlugin_v11 first and falls back to older names down to v6 (its getNcclNet_v6 ..
// getNcclNet_v11). Checked member by member against NVIDIA/nccl tag v2.28.9-1:
// src/include/plugin/net/net_v8.h, net_v11.h, nccl_net.h and ext-net/example/nccl/{net.h,
// common.h, err.h, net_device.h}. The static_asserts at the bottom pin the x86-64 layout (LP64)
// that NCCL reads; a change here that moves a member fails to compile.
//
// What differs between the two versions and matters to us:
//   v8:  (NCCL 2.20 .. 2.23's newest) init(logger) once per process; int sizes; no context.
//   v11: init(&ctx, commId, config, logger, profiler) once per NCCL communicator and
//        finalize(ctx) at its end; listen/connect take that ctx; sizes are size_t; isend/irecv
//        take profiler handles; properties add forceFlush, vProps, maxP2pBytes, maxCollBytes,
//        maxMultiRequestSize. NCCL 2.28 calls finalize unconditionally (src/plugin/net.cc), and
//        setNetAttr and makeVDevice only when non-NULL (src/transport/net.cc, src/graph/topo.cc).
#include <cstddef>
#include <cstdint>

namespace railcheck::nccl_abi {

// ncclResult_t as plugins return it (err.h).
enum Result : int {
  kSuccess = 0,
  kUnhandledCudaError = 1,
  kSystemError = 2,
  kInternalError = 3,
  kInvalidArgument = 4,
  kInvalidUsage = 5,
  kRemoteError = 6,
};

// ncclDebugLogLevel and the subsystem flags the logger takes (common.h).
enum LogLevel : int { kLogNone = 0, kLogVersion = 1, kLogWarn = 2, kLogInfo = 3, kLogAbort = 4, kLogTrace = 5 };
constexpr unsigned long kSubsysInit = 1;
constexpr unsigned long kSubsysNet = 16;

using Logger = void (*)(LogLevel level, unsigned long flags, const char* file, int line, const char* fmt, ...);
// ncclProfilerCallback_t: we never call it (no profiler events), but the v11 init signature has it.
using ProfilerCallback = Result (*)(void** event_handle, int type, void* phandle, std::int64_t plugin_id,
                                    void* ext_data);

constexpr std::size_t kHandleMaxSize = 128;            // NCCL_NET_HANDLE_MAXSIZE
constexpr std::uintptr_t kOptionalRecvCompletion = 1;  // NCCL_NET_OPTIONAL_RECV_COMPLETION, in *request
constexpr int kPtrHost = 0x1;                          // NCCL_PTR_HOST
constexpr int kPtrCuda = 0x2;                          // NCCL_PTR_CUDA
constexpr int kPtrDmabuf = 0x4;                        // NCCL_PTR_DMABUF
constexpr int kMaxRequests = 32;                       // NCCL_NET_MAX_REQUESTS (8 up to NCCL 2.19)
constexpr int kMaxDevsPerNic = 4;                      // NCCL_NET_MAX_DEVS_PER_NIC
constexpr std::size_t kMaxNetSizeBytes = 1ULL << 40;   // NCCL_MAX_NET_SIZE_BYTES: 1 TiB

// ncclNetDeviceType / NCCL_NET_DEVICE_INVALID_VERSION (net_device.h): host-only networking.
enum DeviceType : int { kDeviceHost = 0, kDeviceUnpack = 1 };
constexpr int kDeviceInvalidVersion = 0;

// ncclNetDeviceHandle_v7_t, unchanged through v11: device offload, which we never provide.
struct DeviceHandle {
  DeviceType type;
  int version;
  void* handle;
  std::size_t size;
  int needs_proxy_progress;
};

struct PropertiesV8 {
  char* name;
  char* pci_path;  // /sys path of the PCI device; NULL = virtual NIC, NCCL attaches it to the first CPU
  std::uint64_t guid;
  int ptr_support;  // kPtrHost | kPtrCuda | kPtrDmabuf
  int reg_is_global;
  int speed;  // Mb/s
  int port;
  float latency;  // microseconds; 0 = NCCL's default
  int max_comms;
  int max_recvs;
  DeviceType net_device_type;
  int net_device_version;
};

struct VDeviceProps {
  int ndevs;
  int devs[kMaxDevsPerNic];
};

struct CommConfigV11 {
  int traffic_class;  // -1 = undefined
};

struct CommAttrV11 {
  std::int32_t max_concurrent_peers;
  std::int32_t min_concurrent_peers;
  std::int32_t max_flows_per_peer;
  std::int32_t min_flows_per_peer;
};

struct NetAttrV11 {
  CommAttrV11 send_comm_attr;
  CommAttrV11 recv_comm_attr;
  std::uint32_t op;
  std::uint32_t algo;
  std::uint32_t proto;
};

struct PropertiesV11 {
  char* name;
  char* pci_path;
  std::uint64_t guid;
  int ptr_support;
  int reg_is_global;
  int force_flush;
  int speed;
  int port;
  float latency;
  int max_comms;
  int max_recvs;
  DeviceType net_device_type;
  int net_device_version;
  VDeviceProps v_props;
  std::size_t max_p2p_bytes;
  std::size_t max_coll_bytes;
  int max_multi_request_size;
};

struct NetV8 {
  const char* name;
  Result (*init)(Logger logger);
  Result (*devices)(int* ndev);
  Result (*get_properties)(int dev, PropertiesV8* props);
  Result (*listen)(int dev, void* handle, void** listen_comm);
  Result (*connect)(int dev, void* handle, void** send_comm, DeviceHandle** send_dev_comm);
  Result (*accept)(void* listen_comm, void** recv_comm, DeviceHandle** recv_dev_comm);
  Result (*reg_mr)(void* comm, void* data, std::size_t size, int type, void** mhandle);
  Result (*reg_mr_dmabuf)(void* comm, void* data, std::size_t size, int type, std::uint64_t offset, int fd,
                          void** mhandle);
  Result (*dereg_mr)(void* comm, void* mhandle);
  Result (*isend)(void* send_comm, void* data, int size, int tag, void* mhandle, void** request);
  Result (*irecv)(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles, void** request);
  Result (*iflush)(void* recv_comm, int n, void** data, int* sizes, void** mhandles, void** request);
  Result (*test)(void* request, int* done, int* sizes);
  Result (*close_send)(void* send_comm);
  Result (*close_recv)(void* recv_comm);
  Result (*close_listen)(void* listen_comm);
  Result (*get_device_mr)(void* comm, void* mhandle, void** dptr_mhandle);
  Result (*irecv_consumed)(void* recv_comm, int n, void* request);
};

struct NetV11 {
  const char* name;
  Result (*init)(void** ctx, std::uint64_t comm_id, CommConfigV11* config, Logger logger, ProfilerCallback profiler);
  Result (*devices)(int* ndev);
  Result (*get_properties)(int dev, PropertiesV11* props);
  Result (*listen)(void* ctx, int dev, void* handle, void** listen_comm);
  Result (*connect)(void* ctx, int dev, void* handle, void** send_comm, DeviceHandle** send_dev_comm);
  Result (*accept)(void* listen_comm, void** recv_comm, DeviceHandle** recv_dev_comm);
  Result (*reg_mr)(void* comm, void* data, std::size_t size, int type, void** mhandle);
  Result (*reg_mr_dmabuf)(void* comm, void* data, std::size_t size, int type, std::uint64_t offset, int fd,
                          void** mhandle);
  Result (*dereg_mr)(void* comm, void* mhandle);
  Result (*isend)(void* send_comm, void* data, std::size_t size, int tag, void* mhandle, void* phandle, void** request);
  Result (*irecv)(void* recv_comm, int n, void** data, std::size_t* sizes, int* tags, void** mhandles, void** phandles,
                  void** request);
  Result (*iflush)(void* recv_comm, int n, void** data, int* sizes, void** mhandles, void** request);
  Result (*test)(void* request, int* done, int* sizes);
  Result (*close_send)(void* send_comm);
  Result (*close_recv)(void* recv_comm);
  Result (*close_listen)(void* listen_comm);
  Result (*get_device_mr)(void* comm, void* mhandle, void** dptr_mhandle);
  Result (*irecv_consumed)(void* recv_comm, int n, void* request);
  Result (*make_vdevice)(int* d, VDeviceProps* props);
  Result (*finalize)(void* ctx);
  Result (*set_net_attr)(void* ctx, NetAttrV11* attr);
};

// x86-64 / aarch64 LP64 layout, as NCCL's C headers give it.
static_assert(sizeof(void*) == 8, "the ext-net ABI is declared for LP64 targets");
static_assert(sizeof(DeviceHandle) == 32);
static_assert(offsetof(PropertiesV8, guid) == 16 && offsetof(PropertiesV8, ptr_support) == 24);
static_assert(offsetof(PropertiesV8, latency) == 40 && offsetof(PropertiesV8, net_device_version) == 56);
static_assert(sizeof(PropertiesV8) == 64);
static_assert(offsetof(PropertiesV11, force_flush) == 32 && offsetof(PropertiesV11, latency) == 44);
static_assert(offsetof(PropertiesV11, v_props) == 64 && offsetof(PropertiesV11, max_p2p_bytes) == 88);
static_assert(offsetof(PropertiesV11, max_multi_request_size) == 104 && sizeof(PropertiesV11) == 112);
static_assert(sizeof(NetAttrV11) == 44);
static_assert(sizeof(NetV8) == 19 * sizeof(void*));   // name + 18 entry points
static_assert(sizeof(NetV11) == 22 * sizeof(void*));  // name + 21 entry points

}  // namespace railcheck::nccl_abi

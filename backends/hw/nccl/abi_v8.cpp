// The ncclNet_v8 table (net_abi.hpp): the int-sized interface, the newest NCCL 2.20 .. 2.23 load
// (2.24 .. 2.28 still accept it). Only the entries whose v8 signature differs live here.
#include "backends/hw/nccl/abi_entries.hpp"

namespace railcheck::nccl::entry {
namespace {

nccl_abi::Result init_v8(nccl_abi::Logger logger) { return NetPlugin::instance().init(logger); }

nccl_abi::Result get_properties_v8(int dev, nccl_abi::PropertiesV8* props) {
  const DeviceProperties* p = NetPlugin::instance().properties(dev);
  if (p == nullptr) return nccl_abi::kInvalidArgument;
  fill_common_properties(*p, props);
  return nccl_abi::kSuccess;
}

nccl_abi::Result listen_v8(int dev, void* handle, void** listen_comm) {
  return NetPlugin::instance().listen(dev, handle, listen_comm);
}

nccl_abi::Result connect_v8(int dev, void* handle, void** send_comm, nccl_abi::DeviceHandle** /*no offload*/) {
  return NetPlugin::instance().connect(dev, handle, send_comm);
}

nccl_abi::Result isend_v8(void* send_comm, void* data, int size, int tag, void* mhandle, void** request) {
  if (size < 0) return nccl_abi::kInvalidArgument;
  return static_cast<NetComm*>(send_comm)->isend(data, static_cast<std::size_t>(size), tag, mhandle, request);
}

nccl_abi::Result irecv_v8(void* recv_comm, int n, void** data, int* sizes, int* tags, void** mhandles, void** request) {
  if (n < 1 || n > nccl_abi::kMaxRequests) return nccl_abi::kInvalidArgument;
  std::size_t wide[nccl_abi::kMaxRequests];
  for (int i = 0; i < n; ++i) {
    if (sizes[i] < 0) return nccl_abi::kInvalidArgument;
    wide[i] = static_cast<std::size_t>(sizes[i]);
  }
  return static_cast<NetComm*>(recv_comm)->irecv(n, data, wide, tags, mhandles, request);
}

}  // namespace
}  // namespace railcheck::nccl::entry

namespace e = railcheck::nccl::entry;

extern "C" __attribute__((visibility("default"))) const railcheck::nccl_abi::NetV8 ncclNetPlugin_v8 = {
    "railcheck",   e::init_v8,       e::devices,      e::get_properties_v8, e::listen_v8,      e::connect_v8, e::accept,
    e::reg_mr,     e::reg_mr_dmabuf, e::dereg_mr,     e::isend_v8,          e::irecv_v8,       e::iflush,     e::test,
    e::close_send, e::close_recv,    e::close_listen, e::get_device_mr,     e::irecv_consumed,
};

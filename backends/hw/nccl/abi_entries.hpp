#pragma once
// Entry points whose signatures are the same in ncclNet_v8 and ncclNet_v11; abi_v8.cpp and
// abi_v11.cpp hold the ones that differ and the exported tables.
#include <cstddef>
#include <cstdint>

#include "backends/hw/nccl/net_abi.hpp"
#include "backends/hw/nccl/net_plugin.hpp"

namespace railcheck::nccl::entry {

nccl_abi::Result devices(int* ndev);
nccl_abi::Result accept(void* listen_comm, void** recv_comm, nccl_abi::DeviceHandle** recv_dev_comm);
nccl_abi::Result reg_mr(void* comm, void* data, std::size_t size, int type, void** mhandle);
nccl_abi::Result reg_mr_dmabuf(void* comm, void* data, std::size_t size, int type, std::uint64_t offset, int fd,
                               void** mhandle);
nccl_abi::Result dereg_mr(void* comm, void* mhandle);
nccl_abi::Result iflush(void* recv_comm, int n, void** data, int* sizes, void** mhandles, void** request);
nccl_abi::Result test(void* request, int* done, int* sizes);
nccl_abi::Result close_send(void* send_comm);
nccl_abi::Result close_recv(void* recv_comm);
nccl_abi::Result close_listen(void* listen_comm);
nccl_abi::Result get_device_mr(void* comm, void* mhandle, void** dptr_mhandle);
nccl_abi::Result irecv_consumed(void* recv_comm, int n, void* request);

// The version-neutral part of getProperties, for both property structs (their common prefix).
template <typename Props>
void fill_common_properties(const DeviceProperties& p, Props* props) {
  *props = Props{};
  props->name = const_cast<char*>(p.name.c_str());
  props->pci_path = p.pci_path ? const_cast<char*>(p.pci_path->c_str()) : nullptr;
  props->guid = p.guid;
  props->ptr_support = p.ptr_support;
  props->reg_is_global = 0;  // an MR belongs to the comm that registered it
  props->speed = p.speed_mbps;
  props->port = p.port;
  props->latency = p.latency_us;
  props->max_comms = p.max_comms;
  props->max_recvs = p.max_recvs;
  props->net_device_type = nccl_abi::kDeviceHost;
  props->net_device_version = nccl_abi::kDeviceInvalidVersion;
}

}  // namespace railcheck::nccl::entry

#include "backends/hw/nccl/abi_entries.hpp"

#include "backends/hw/nccl/plugin_log.hpp"

namespace railcheck::nccl::entry {

nccl_abi::Result devices(int* ndev) { return NetPlugin::instance().devices(ndev); }

nccl_abi::Result accept(void* listen_comm, void** recv_comm, nccl_abi::DeviceHandle** /*no device offload*/) {
  return NetPlugin::instance().accept(listen_comm, recv_comm);
}

nccl_abi::Result reg_mr(void* comm, void* data, std::size_t size, int type, void** mhandle) {
  return static_cast<NetComm*>(comm)->reg_mr(data, size, type, mhandle);
}

nccl_abi::Result reg_mr_dmabuf(void* /*comm*/, void* /*data*/, std::size_t /*size*/, int /*type*/,
                               std::uint64_t /*offset*/, int /*fd*/, void** /*mhandle*/) {
  plugin_log().warn("regMrDmaBuf: DMA-BUF registration is not supported (ptrSupport has no NCCL_PTR_DMABUF)");
  return nccl_abi::kInternalError;
}

nccl_abi::Result dereg_mr(void* comm, void* mhandle) { return static_cast<NetComm*>(comm)->dereg_mr(mhandle); }

// Host memory only: once a receive completed its bytes are in host memory, which the GPU reads
// through NCCL's mapped pinned buffers coherently; there is nothing to flush. A NULL request
// means "nothing to wait for" (NCCL skips test on it, src/transport/net.cc).
nccl_abi::Result iflush(void* /*recv_comm*/, int /*n*/, void** /*data*/, int* /*sizes*/, void** /*mhandles*/,
                        void** request) {
  *request = nullptr;
  return nccl_abi::kSuccess;
}

nccl_abi::Result test(void* request, int* done, int* sizes) {
  auto* r = static_cast<NetRequest*>(request);
  return r->comm->test(*r, done, sizes);
}

nccl_abi::Result close_send(void* send_comm) { return NetPlugin::instance().close_comm(send_comm, CommSide::Send); }
nccl_abi::Result close_recv(void* recv_comm) { return NetPlugin::instance().close_comm(recv_comm, CommSide::Recv); }
nccl_abi::Result close_listen(void* listen_comm) { return NetPlugin::instance().close_listen(listen_comm); }

// Device-side networking is not offered (netDeviceType HOST): NCCL never calls these.
nccl_abi::Result get_device_mr(void* /*comm*/, void* /*mhandle*/, void** /*dptr_mhandle*/) {
  plugin_log().warn("getDeviceMr: no device-side networking (netDeviceType is HOST)");
  return nccl_abi::kInternalError;
}
nccl_abi::Result irecv_consumed(void* /*recv_comm*/, int /*n*/, void* /*request*/) { return nccl_abi::kSuccess; }

}  // namespace railcheck::nccl::entry

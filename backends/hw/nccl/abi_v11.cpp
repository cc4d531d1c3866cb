// The ncclNet_v11 table (net_abi.hpp), the newest NCCL 2.28 loads: size_t sizes, a context per
// NCCL communicator, profiler handles (ignored: we emit no profiler events).
#include <atomic>

#include "backends/hw/nccl/abi_entries.hpp"
#include "backends/hw/nccl/plugin_log.hpp"

namespace railcheck::nccl::entry {
namespace {

// The per-communicator context NCCL hands back to listen/connect/finalize. Connections do not
// depend on it (every communicator shares the process's rails), but it names the
// communicator in the log.
struct CommContext {
  std::uint64_t comm_id = 0;
};

std::atomic<int> g_contexts{0};

nccl_abi::Result init_v11(void** ctx, std::uint64_t comm_id, nccl_abi::CommConfigV11* /*config*/,
                          nccl_abi::Logger logger, nccl_abi::ProfilerCallback /*profiler*/) {
  *ctx = nullptr;
  const nccl_abi::Result r = NetPlugin::instance().init(logger);
  if (r != nccl_abi::kSuccess) return r;
  *ctx = new CommContext{comm_id};
  plugin_log().info("init for communicator {:#x} ({} open)", comm_id, ++g_contexts);
  return nccl_abi::kSuccess;
}

nccl_abi::Result finalize_v11(void* ctx) {
  auto* c = static_cast<CommContext*>(ctx);
  if (c == nullptr) return nccl_abi::kSuccess;  // NCCL finalizes after a failed init too
  plugin_log().info("finalize for communicator {:#x} ({} open)", c->comm_id, --g_contexts);
  delete c;
  return nccl_abi::kSuccess;
}

nccl_abi::Result get_properties_v11(int dev, nccl_abi::PropertiesV11* props) {
  const DeviceProperties* p = NetPlugin::instance().properties(dev);
  if (p == nullptr) return nccl_abi::kInvalidArgument;
  fill_common_properties(*p, props);
  props->force_flush = 0;
  props->v_props.ndevs = 1;  // a physical device: no virtual NIC fusing (seed §15.5)
  props->v_props.devs[0] = dev;
  props->max_p2p_bytes = NetPlugin::kMaxMessageBytesV11;
  props->max_coll_bytes = NetPlugin::kMaxMessageBytesV11;
  props->max_multi_request_size = 1;
  return nccl_abi::kSuccess;
}

nccl_abi::Result listen_v11(void* /*ctx*/, int dev, void* handle, void** listen_comm) {
  return NetPlugin::instance().listen(dev, handle, listen_comm);
}

nccl_abi::Result connect_v11(void* /*ctx*/, int dev, void* handle, void** send_comm,
                             nccl_abi::DeviceHandle** /*no offload*/) {
  return NetPlugin::instance().connect(dev, handle, send_comm);
}

nccl_abi::Result isend_v11(void* send_comm, void* data, std::size_t size, int tag, void* mhandle, void* /*phandle*/,
                           void** request) {
  return static_cast<NetComm*>(send_comm)->isend(data, size, tag, mhandle, request);
}

nccl_abi::Result irecv_v11(void* recv_comm, int n, void** data, std::size_t* sizes, int* tags, void** mhandles,
                           void** /*phandles*/, void** request) {
  return static_cast<NetComm*>(recv_comm)->irecv(n, data, sizes, tags, mhandles, request);
}

}  // namespace
}  // namespace railcheck::nccl::entry

namespace e = railcheck::nccl::entry;

// makeVDevice NULL: NCCL then uses the physical devices (src/graph/topo.cc); setNetAttr NULL:
// NCCL checks before calling (src/transport/net.cc).
extern "C" __attribute__((visibility("default"))) const railcheck::nccl_abi::NetV11 ncclNetPlugin_v11 = {
    "railcheck",      e::init_v11,      e::devices,        e::get_properties_v11,
    e::listen_v11,    e::connect_v11,   e::accept,         e::reg_mr,
    e::reg_mr_dmabuf, e::dereg_mr,      e::isend_v11,      e::irecv_v11,
    e::iflush,        e::test,          e::close_send,     e::close_recv,
    e::close_listen,  e::get_device_mr, e::irecv_consumed, nullptr,
    e::finalize_v11,  nullptr,
};

#pragma once
// Choosing a provider by name: fi_getinfo with the hints every rail needs (fabtests'
// common/shared.c does the same), and a clear error when the provider or a capability is
// missing here ("provider 'efa' not available here: fi_getinfo returned -FI_ENODATA;
// available: shm, tcp;ofi_rxm, ...").
#include <string>
#include <vector>

#include "backends/hw/libfabric/fid_handle.hpp"
#include "engine/core/result.hpp"

namespace railcheck::fabric {

// What the backend asks of a provider:
//   ep_type  FI_EP_RDM (reliable datagram: one endpoint talks to many peers through its AV)
//   caps     FI_MSG (data, like RC send/recv), FI_TAGGED (control messages), FI_RMA (WRITE_IMM)
//   order    FI_ORDER_SAS on tx and rx: sends land in posted order, as on an RC QP
//   tx flags FI_DELIVERY_COMPLETE: a send completes when the peer placed it (an RC ACK)
//   mode     FI_CONTEXT | FI_CONTEXT2: every operation's context starts with an fi_context2
//   mr_mode  FI_MR_LOCAL | FI_MR_VIRT_ADDR | FI_MR_ALLOCATED | FI_MR_PROV_KEY: the backend
//            passes descriptors, registers allocated memory only and reads keys back; a
//            provider that needs FI_MR_ENDPOINT (binding MRs to endpoints) is refused
//   cq_data  domain_attr->cq_data_size >= 4: the engine's 32-bit immediate travels as CQ data
// `node` is the bind address (FI_SOURCE): an IPv4 address for tcp, a short name for shm; empty
// lets the provider choose.
Result<InfoHandle> query_provider(const std::string& provider, const std::string& node);

// Provider names fi_getinfo offers here for FI_EP_RDM, sorted and unique.
std::vector<std::string> available_providers();

// True for providers whose addresses are names in shared memory (FI_ADDR_STR).
bool is_shm(const std::string& provider);
// True for the providers that run over kernel TCP sockets: "tcp;ofi_rxm" (RDM emulated by ofi_rxm
// over tcp's MSG endpoints), "net" (libfabric 1.17's fork of tcp with RDM endpoints of its own, its
// own progress thread, no ofi_rxm), "sockets". Their addresses are asked for as IPv4.
bool runs_over_tcp_sockets(const std::string& provider);
// True where a send's success means only that the bytes left (ofi_rxm: its eager sends complete
// when the bytes are in the connection below, whatever FI_DELIVERY_COMPLETE asks), so the
// backend needs the receiver's delivery acks to give the engine RC's send semantics. shm
// honours FI_DELIVERY_COMPLETE and needs none. "net" honours it too, but its receiver
// acknowledges a message once the bytes are in: in the posted buffer, or, for a tagged message of
// at most 128 B that no receive matches yet, in one of FI_NET_MAX_SAVED (default 4) buffers of the
// provider's per endpoint (prov/net/src/xnet_progress.c, xnet_save_and_cont and xnet_process_recv
// in 1.17), which a failover that abandons the rail would lose. So net needs acks unless
// FI_NET_MAX_SAVED=0 is set (the NCCL plugin sets it before libfabric starts): then an unmatched
// message waits in the socket, as an RC send waits on the responder's RNR NAK, and a send
// completes only once the receiver's posted buffer holds it.
bool send_completion_is_local(const std::string& provider);
// True where a connection whose backend acknowledges deliveries itself should ask the provider
// for local send completions (FI_INJECT_COMPLETE) instead of FI_DELIVERY_COMPLETE: "net", whose
// FI_DELIVERY_COMPLETE and FI_TRANSMIT_COMPLETE both make the receiver send an ack that the send
// waits for (xnet_set_ack_flags in prov/net/src/xnet.h, 1.17): a round trip per message the
// backend's acks already cover, and the one thing between a staged send and its early
// completion (staged_sends.hpp). ofi_rxm completes eager sends locally whatever it is asked;
// its rendezvous completions are left as they are.
bool local_send_completion_pays(const std::string& provider, bool delivery_acks);
// Whether a connection acknowledges deliveries itself unless told otherwise
// (FabricOptions::delivery_acks): where the provider's completion is local (it must), and on
// "net" where it need not (FI_NET_MAX_SAVED=0) but is faster: net's own acknowledgement is one
// message per message, sent before the receive is reported, while the backend's is cumulative and
// sent lazily after staged sends (delivery_ack_clock.hpp; measured under NCCL, 2 x H200,
// docs/nccl-plugin.md "Delivery acks, coalesced").
bool backend_acks_by_default(const std::string& provider);

// FI_OFI_RXM_MSG_RX_SIZE as railcheck's own processes set it (the NCCL plugin at init, the netns
// lab of `railcheck validate`) unless the environment does: the receive buffers ofi_rxm posts on
// each of its connections. rxm's default (128) grows each endpoint's bounce-buffer pool to several
// 17 MB chunks, and the plugin opens an rxm endpoint per rail of every comm (two per connection
// with the standby): 9.0 GB peak for three ranks on threads with four channels each way, 3.7 GB at
// 32, every harness case passing down to 16 (measured 2026-11-28). The same pools make a send that
// re-opens a rail's rxm connection block its caller while they are zeroed: 52-80 ms in the lab at
// 128, no call of 10 ms or more at 32 (2026-11-29, docs/validation.md). NCCL keeps at most
// NCCL_NET_MAX_REQUESTS (32) requests in flight per comm; an unexpected message beyond the posted
// buffers takes a fresh one from the pool (rxm replaces it), so fewer never blocks.
inline constexpr std::uint32_t kRxmMsgRxSize = 32;

// Sets FI_OFI_RXM_MSG_RX_SIZE to kRxmMsgRxSize for this process and the processes it starts,
// unless the environment names a size or the provider is not ofi_rxm; call it before anything
// starts libfabric. Returns what ofi_rxm will post, for the command's output ("" where not rxm):
// `railcheck validate` and `railcheck conform` run rxm as the NCCL plugin does.
std::string size_rxm_like_the_plugin(const std::string& provider);

}  // namespace railcheck::fabric

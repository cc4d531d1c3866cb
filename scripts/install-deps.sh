#!/usr/bin/env bash
# Installs the Debian 12 packages railcheck builds and tests with, if any is missing.
# Idempotent: with everything present it changes nothing and does not touch the network.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config git
  libsimgrid-dev            # SimGrid: the network model of backends/sim
  libboost-graph-dev        # Boost.Graph: topology and wait-for graphs
  catch2                    # tests
  libtomlplusplus-dev       # scenario files
  nlohmann-json3-dev        # JSON results
  libcli11-dev              # command line
  libfmt-dev                # formatting
  python3 python3-matplotlib  # reports/
  libfabric-dev libfabric1  # backends/hw/libfabric: tcp;ofi_rxm and shm providers run anywhere
  libibverbs-dev librdmacm-dev  # backends/hw/verbs: builds and links against rdma-core
  openmpi-bin libopenmpi-dev    # sweeps under mpirun (issue 6)
  iproute2                  # conformance: network namespaces and veth pairs for the failover cut
  nftables                  # validate: the lab's loss faults (nft numgen drop rules; netem is not in every kernel)
  iptables libnetfilter-queue-dev  # validate: the lab's delay faults (an NFQUEUE rule and the packet delayer)
  clang-14 libclang-rt-14-dev  # fuzz/: libFuzzer targets (quickstart.sh test runs them briefly)
  mold                      # the linker: links the test binaries in a third of GNU ld's time
  libjemalloc-dev           # the executables' malloc: the model checker copies a world per state
  libssl-dev                # libcrypto's HMAC-SHA-256: authenticated bootstrap and plugin messages (docs/security.md)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi

echo "installing: ${missing[*]}"
if [ "$(id -u)" -ne 0 ]; then
  echo "error: missing packages and not root; run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"

#!/usr/bin/env bash
# Writes the captured-style sysfs tree the verbs topology tests read (tests/data/verbs/sysfs-2gpu-4nic).
# Shape (two sockets, a PCIe switch under each root port, as on a typical 8-GPU server cut down):
#   NUMA 0  pci0000:00  00:01.0 > 01:00.0 (switch) > 02:00.0 > GPU 03:00.0
#                                                  > 02:01.0 > mlx5_0 04:00.0
#                       00:02.0 > 05:00.0 (switch) > 06:00.0 > mlx5_1 07:00.0
#   NUMA 1  pci0000:80  80:01.0 > 81:00.0 (switch) > 82:00.0 > GPU 83:00.0
#                                                  > 82:01.0 > mlx5_2 84:00.0
#                       80:02.0 > 85:00.0 (switch) > 86:00.0 > mlx5_3 87:00.0
# mlx5_3 port 1 carries the seed's apm_enable switch set to 1. Links are relative, as in sysfs.
set -euo pipefail
cd "$(dirname "$0")"
root=sysfs-2gpu-4nic
rm -rf "$root"
dev() {  # dev <numa> <class> <vendor> <chain...>: make the device folder, link it from bus/pci
  local numa=$1 cls=$2 vendor=$3; shift 3
  local path="$root/sys/devices/$(IFS=/; echo "$*")"
  mkdir -p "$path"
  echo "$numa" >"$path/numa_node"; echo "$cls" >"$path/class"; echo "$vendor" >"$path/vendor"
  mkdir -p "$root/sys/bus/pci/devices"
  ln -sfn "../../../devices/$(IFS=/; echo "$*")" "$root/sys/bus/pci/devices/${!#}"
}
nic() {  # nic <name> <numa> <chain...>
  local name=$1; shift
  dev "$1" 0x020700 0x15b3 "${@:2}"
  local rel; rel="$(IFS=/; echo "${*:2}")"
  mkdir -p "$root/sys/devices/$rel/infiniband/$name/ports/1"
  ln -sfn "../../../${!#}" "$root/sys/devices/$rel/infiniband/$name/device"
  mkdir -p "$root/sys/class/infiniband"
  ln -sfn "../../devices/$rel/infiniband/$name" "$root/sys/class/infiniband/$name"
}
bridge() { dev "$1" 0x060400 0x1000 "${@:2}"; }
for n in 0 1; do
  if [ $n = 0 ]; then r=pci0000:00 a=0000:00 b=0000:01 c=0000:02 d=0000:03 e=0000:04 f=0000:05 g=0000:06 h=0000:07
  else r=pci0000:80 a=0000:80 b=0000:81 c=0000:82 d=0000:83 e=0000:84 f=0000:85 g=0000:86 h=0000:87; fi
  bridge $n $r $a:01.0; bridge $n $r $a:01.0 $b:00.0
  bridge $n $r $a:01.0 $b:00.0 $c:00.0; bridge $n $r $a:01.0 $b:00.0 $c:01.0
  dev $n 0x030200 0x10de $r $a:01.0 $b:00.0 $c:00.0 $d:00.0
  nic mlx5_$((2 * n)) $n $r $a:01.0 $b:00.0 $c:01.0 $e:00.0
  bridge $n $r $a:02.0; bridge $n $r $a:02.0 $f:00.0; bridge $n $r $a:02.0 $f:00.0 $g:00.0
  nic mlx5_$((2 * n + 1)) $n $r $a:02.0 $f:00.0 $g:00.0 $h:00.0
done
echo 1 >"$root/sys/class/infiniband/mlx5_3/ports/1/apm_enable"
echo "wrote $root"

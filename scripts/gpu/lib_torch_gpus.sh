# Sourced by the GPU scripts that run PyTorch ranks (fr_hangs.sh, divergence_battery.sh).
# require_torch_gpus NAME MIN: exits 2 with one line unless nvidia-smi lists MIN GPUs or more and
# PyTorch imports; sets ngpus.
require_torch_gpus() {
  local name=$1 min=$2
  ngpus="$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | wc -l)"
  (( ngpus >= min )) || { echo "$name: needs $min GPU(s) or more (nvidia-smi lists $ngpus)" >&2; exit 2; }
  python3 -c 'import torch' 2>/dev/null || { echo "$name: no PyTorch" >&2; exit 2; }
}

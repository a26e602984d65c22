#!/bin/bash
# conv-gemv device call (issue 13): first-layer convolutions and GEMV-like MatMuls, CUDA only.
# Usage: scripts/device_conv_gemv.sh MAIN_DIR VARIANT_DIR (both prepared here and carried: MAIN_DIR by
# `benchmarks/gpu.py prepare --targets cuda`, VARIANT_DIR by scripts/gpu_variants.py from it).
# Returns at most 8 files under $OUT: machine.txt, main.log/main.json (defaults, with the vendor libraries),
# var.log/var.json (hand-set variants, no vendor), ncu.txt (a short Nsight Compute summary per profiled kernel).
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
main=$1; var=$2
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader; nproc; nvcc --version | tail -2; } > "$OUT/machine.txt" 2>&1
export PYTHONUNBUFFERED=1
python3 "$main/gpu.py" run "$main" --out /tmp/cg_main --targets cuda --budget "${MAIN_BUDGET:-110}" > "$OUT/main.log" 2>&1
echo "main rc=$? at $((SECONDS-t0)) s"; grep -E "^\[" "$OUT/main.log" | tail -30
cp /tmp/cg_main/gpu_results.json "$OUT/main.json" 2>/dev/null
python3 "$var/gpu.py" run "$var" --out /tmp/cg_var --targets cuda --no-vendor --runs 2 --budget "${VAR_BUDGET:-170}" > "$OUT/var.log" 2>&1
echo "variants rc=$? at $((SECONDS-t0)) s"; grep -E "cuda:" "$OUT/var.log" | tail -40
cp /tmp/cg_var/gpu_results.json "$OUT/var.json" 2>/dev/null
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | tail -1)
for exe in ${PROFILE:-}; do
  [ -x "$exe" ] || continue
  [ $((SECONDS-t0)) -lt "${PROFILE_UNTIL:-320}" ] || break
  timeout 30 "$NCU" -k regex:mdpoly_kernel_[0-9]+$ --launch-skip 1 --launch-count 1 --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section MemoryWorkloadAnalysis --section WarpStateStats "$exe" > /tmp/ncu_one.txt 2>&1
  { echo "=== $exe rc=$?"; grep -E "Registers Per|Achieved Occupancy|Theoretical Occupancy|DRAM Throughput|Memory Throughput|Compute \(SM\) Throughput|Duration|Block Limit|Static Shared|Grid Size|Block Size|L1/TEX Hit|L2 Hit|Warp Cycles Per Issued|Issue Slots" /tmp/ncu_one.txt | head -30; } >> "$OUT/ncu.txt"
done
echo "done at $((SECONDS-t0)) s"; cat "$OUT/ncu.txt" 2>/dev/null | head -80

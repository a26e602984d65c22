#!/bin/bash
# gpu-kernels device call (issue 13): run prepared benchmark dirs (benchmarks/gpu.py prepare, scripts/gpu_variants.py;
# carried as ignored paths) and profile the sgemm kernels with Nsight Compute. Usage: scripts/gk_device.sh MAIN_DIR BUDGET [VARIANT_DIR BUDGET]...
# Results go to $OUT/<main dir name>/ (gpu_results.json/.md), $OUT/<dir>.log (the variants' lines) and $OUT/ncu_<workload>.txt
# (the device tool returns at most 8 files).
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader; nproc; nvcc --version | tail -2; } > "$OUT/machine.txt" 2>&1
mkdir -p ~/icd; echo libnvidia-opencl.so.1 > ~/icd/nvidia.icd; export OCL_ICD_VENDORS=~/icd
main=$1; shift; budget=$1; shift
python3 "$main/gpu.py" run "$main" --out "$OUT/$(basename "$main")" --budget "$budget" > "$OUT/$(basename "$main").log" 2>&1
echo "main rc=$? at $((SECONDS-t0)) s"; tail -25 "$OUT/$(basename "$main").log"
while [ $# -ge 2 ]; do
  d=$1; b=$2; shift 2
  python3 "$d/gpu.py" run "$d" --out "/tmp/gk_variants/$(basename "$d")" --budget "$b" --no-vendor > "$OUT/$(basename "$d").log" 2>&1
  echo "$d rc=$? at $((SECONDS-t0)) s"; grep -E "^\[|kernel" "$OUT/$(basename "$d").log" | tail -30
done
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | tail -1)
for w in ${GK_PROFILE:-sgemm sgemm_4096}; do
  exe="$main/build/$w.cuda"; case $w in */*) exe="$(dirname "$w")/build/$(basename "$w").cuda"; w=$(basename "$w");; esac
  [ -x "$exe" ] || continue
  timeout 90 "$NCU" -k regex:mdpoly_kernel_[0-9]+$ --launch-skip 1 --launch-count 1 --section SpeedOfLight --section Occupancy \
    --section LaunchStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis --section WarpStateStats \
    --section SchedulerStats "$exe" > "$OUT/ncu_$w.txt" 2>&1
  echo "ncu $w rc=$? at $((SECONDS-t0)) s"
  grep -E "Registers Per|Achieved Occupancy|Theoretical Occupancy|DRAM Throughput|Compute \(SM\) Throughput|Duration|Block Limit|Shared Memory Configuration Size|Dynamic Shared|Static Shared|Stall|L1/TEX Hit" "$OUT/ncu_$w.txt" | head -24
done
echo "done at $((SECONDS-t0)) s"

#!/bin/bash
# Run from the repository root on the GPU machine, with .wheelhouse carried (../shared/tools/gpu-wheelhouse.sh); results go to $OUT.
# Device call B (CPU work on the quiet 16-core host): suite timings (2 threads) then an OpenMP fuzz campaign.
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; lscpu | grep 'Model name'; gcc --version | head -1; python3 --version; git log --oneline -1 2>/dev/null; uptime; } > "$OUT/machine.txt" 2>&1
python3 -m pip install -q --no-index --find-links .wheelhouse --no-build-isolation -e '.[opencl]' > "$OUT/install.log" 2>&1 || { tail -20 "$OUT/install.log"; exit 1; }
echo "install done at $((SECONDS-t0)) s"
OMP_NUM_THREADS=2 timeout 330 python3 benchmarks/suite.py --reps 5 --threads 2 --jobs 8 --variants seq,omp_for,mdpoly_notune --out "$OUT/suite_h100host_notune" > "$OUT/suite.log" 2>&1; echo "suite rc=$? at $((SECONDS-t0)) s"
tail -5 "$OUT/suite.log"
timeout $((560-SECONDS+t0)) python3 -m tests.fuzz --fuzz ${1:-1500} --seed ${2:-300000} --target openmp --jobs 15 -v --failures "$OUT/ff" > "$OUT/fuzz_openmp.log" 2>&1
echo "openmp fuzz rc=$? at $((SECONDS-t0)) s"; grep -v '^seed ' "$OUT/fuzz_openmp.log" | tail -15
[ -d "$OUT/ff" ] && tar czf "$OUT/failures.tgz" -C "$OUT" ff && rm -rf "$OUT/ff"
gzip -f "$OUT/fuzz_openmp.log"; ls "$OUT"

#!/bin/bash
# Session 11's second device call (issue 24): the calibrated CUDA profile and the new GEMV default, with the
# vendor libraries in the same run. Carried: .wheelhouse, benchmarks/build/wt_kern, benchmarks/build/s11b (main =
# gpu.py prepare --targets cuda,opencl at this branch). Results under $OUT: main.json/log (gpu.py run), pn.json/log
# (benchmarks/profile_ncu.py: per call, the profile before and after the calibration beside ncu), tune.log.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
WT=benchmarks/build/wt_kern; S=benchmarks/build/s11b
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader > "$OUT/machine.txt" 2>&1
(cd "$WT" && python3 -m pip install -q --no-index --find-links ../../../.wheelhouse --no-build-isolation -e '.[opencl]') \
  > "$OUT/install.log" 2>&1 || { tail -20 "$OUT/install.log"; exit 1; }
export MDPOLY_CACHE_DIR=/tmp/mdpoly-cache PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/$WT
echo "install done at $((SECONDS-t0)) s"
python3 "$WT/benchmarks/profile_ncu.py" "$S/main" "$OUT/pn.json" --budget 50 \
  --only mm_1x1000x2048,mm_16x1000x2048,mm_1x4096x25088,sgemm_rw,mcc_mobilenet_n1 > "$OUT/pn.log" 2>&1
echo "profile/ncu rc=$? at $((SECONDS-t0)) s"; cut -c1-330 "$OUT/pn.log"
python3 "$S/main/gpu.py" run "$S/main" --out /tmp/o_main --runs 2 --budget "${MAIN_BUDGET:-70}" > "$OUT/main.log" 2>&1
echo "main rc=$? at $((SECONDS-t0)) s"; grep -E "^\[" "$OUT/main.log" | cut -c1-200
cp /tmp/o_main/gpu_results.json "$OUT/main.json" 2>/dev/null
t1=$SECONDS
timeout 40 python3 "$WT/benchmarks/gpu.py" prepare /tmp/tw --targets cuda --tune-time "${TUNE_TIME:-8}" --only mm_1x1000x2048 > "$OUT/tune.log" 2>&1
echo "tune rc=$? wall $((SECONDS-t1)) s (budget ${TUNE_TIME:-8} s) at $((SECONDS-t0)) s" | tee -a "$OUT/tune.log"
grep -E "^\[" "$OUT/tune.log" | cut -c1-300
echo "done at $((SECONDS-t0)) s"

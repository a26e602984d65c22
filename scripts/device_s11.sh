#!/bin/bash
# Session 11's one device call (issue 24): run from the main checkout's root with .wheelhouse, this worktree
# (benchmarks/build/wt_kern) and the prepared dirs (benchmarks/build/s11: main = gpu.py prepare --targets cuda,
# var = scripts/gpu_variants.py GEMV variants) carried. Results under $OUT:
#   main.json/log  gpu.py run: cuBLAS/cuDNN, mdpoly CUDA (events and ncu) of the defaults
#   var.json/log   gpu.py run --no-vendor: the hand-set GEMV variants (warp-shuffle combine, work-group shapes)
#   pn.json/log    benchmarks/profile_ncu.py: the program's per-call profile beside ncu, call by call
#   tune.log       tuner wall time vs --tune-time (one convolution, one GEMV nest)
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
WT=benchmarks/build/wt_kern; S=benchmarks/build/s11
{ nvidia-smi --query-gpu=name,driver_version,compute_cap,clocks.sm,clocks.max.sm --format=csv,noheader; nproc; } > "$OUT/machine.txt" 2>&1
(cd "$WT" && python3 -m pip install -q --no-index --find-links ../../../.wheelhouse --no-build-isolation -e '.[opencl]') \
  > "$OUT/install.log" 2>&1 || { tail -20 "$OUT/install.log"; exit 1; }
export MDPOLY_CACHE_DIR=/tmp/mdpoly-cache PYTHONUNBUFFERED=1 PYTHONPATH=$PWD/$WT
echo "install done at $((SECONDS-t0)) s"
python3 "$S/main/gpu.py" run "$S/main" --out /tmp/o_main --targets cuda --runs 2 --budget "${MAIN_BUDGET:-95}" > "$OUT/main.log" 2>&1
echo "main rc=$? at $((SECONDS-t0)) s"; grep -E "^\[" "$OUT/main.log" | cut -c1-220
cp /tmp/o_main/gpu_results.json "$OUT/main.json" 2>/dev/null
python3 "$S/var/gpu.py" run "$S/var" --out /tmp/o_var --targets cuda --no-vendor --runs 2 --budget "${VAR_BUDGET:-90}" > "$OUT/var.log" 2>&1
echo "var rc=$? at $((SECONDS-t0)) s"; grep -E "cuda:" "$OUT/var.log" | cut -c1-220
cp /tmp/o_var/gpu_results.json "$OUT/var.json" 2>/dev/null
python3 "$WT/benchmarks/profile_ncu.py" "$S/main" "$OUT/pn.json" --budget "${PN_BUDGET:-55}" \
  --only mm_1x1000x2048,mm_16x1000x2048,mm_1x4096x25088,sgemm_rw,mcc_mobilenet_n1,mcc_vgg16_n16 > "$OUT/pn.log" 2>&1
echo "profile/ncu rc=$? at $((SECONDS-t0)) s"; cat "$OUT/pn.log" | cut -c1-220
t1=$SECONDS
python3 "$WT/benchmarks/gpu.py" prepare /tmp/tw --targets cuda --tune-time "${TUNE_TIME:-10}" --only mcc_mobilenet_n1 > "$OUT/tune.log" 2>&1
echo "tune rc=$? wall $((SECONDS-t1)) s (budget ${TUNE_TIME:-10} s) at $((SECONDS-t0)) s" | tee -a "$OUT/tune.log"
grep -E "^\[" "$OUT/tune.log" | cut -c1-300
python3 - <<'PY' >> "$OUT/tune.log" 2>&1
import json; m = json.load(open("/tmp/tw/manifest.json"))
for w in m["workloads"]:
    print(w["workload"], json.dumps(w.get("tuned", {}))[:1500])
PY
tail -3 "$OUT/tune.log"
echo "done at $((SECONDS-t0)) s"

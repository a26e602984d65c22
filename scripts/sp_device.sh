#!/bin/bash
# sgemm-push device call (issue 13): the register prefetch into two __local buffers (GpuParams.prefetch 2, one
# barrier per tile) and its mixed form with cp.async for the input whose copy stores whole 16-byte rows (B) while
# the transposed one (A) keeps the registers (prefetch 2 + async_copy 1), on the H200. One call, from the
# repository root with .wheelhouse and three prepared folders carried (ignored paths, prepared here):
#   benchmarks/build/sp_main  benchmarks/gpu.py prepare benchmarks/build/sp_main --targets cuda --only sgemm,sgemm_4096
#   benchmarks/build/sp_var   scripts/gpu_variants.py sp_main sp_var s1_p2=sgemm:prefetch=2 ... (kt 16, warp 4x8,
#                             split-K 2/4/8 on sgemm 1024^3; 4096^3)
#   benchmarks/build/sp_odd   scripts/gpu_variants.py ca_odd sp_odd odd_p2=odd_default:prefetch=2 ... (M=1001 N=999
#                             K=1003: partial tiles and unaligned rows, checked against the sequential C)
# scripts/gk_device.sh runs them (cuBLAS only in sp_main) and profiles one variant with Nsight Compute.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
python3 -m pip install -q --no-index --find-links .wheelhouse --no-build-isolation -e '.[opencl]' > "$OUT/install.log" 2>&1 \
  || { tail -20 "$OUT/install.log"; exit 1; }
rm -f "$OUT/install.log"; echo "install done at $((SECONDS-t0)) s"
export PYTHONUNBUFFERED=1
GK_PROFILE=${GK_PROFILE:-"benchmarks/build/sp_var/s1_mx16"} bash scripts/gk_device.sh \
  benchmarks/build/sp_main "${MAIN_BUDGET:-60}" benchmarks/build/sp_var "${VAR_BUDGET:-125}" benchmarks/build/sp_odd "${ODD_BUDGET:-25}"
tar -czf "$OUT/sp_variants.tar.gz" -C /tmp gk_variants 2>/dev/null
echo "all done at $((SECONDS-t0)) s"

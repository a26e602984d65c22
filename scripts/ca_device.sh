#!/bin/bash
# cuda-async device call (issue 13): cp.async double-buffered tiles and warp tiles on the H200, one call, from the
# repository root with .wheelhouse and three prepared folders carried (ignored paths, prepared here):
#   benchmarks/build/ca_main  benchmarks/gpu.py prepare ... --targets cuda --only sgemm,sgemm_4096,mm_16x4096x25088,mm_1x4096x25088
#   benchmarks/build/ca_var   scripts/gpu_variants.py ca_main ca_var s1_async=sgemm:prefetch=0;async_copy=1 ... (async, warp
#                             tiles 4x8 / 8x4, kt 16, on sgemm 1024^3 / 4096^3 and the two K=25088 MatMuls)
#   benchmarks/build/ca_odd   the same variants of sgemm at M=1001 N=999 K=1003 (partial tiles, unaligned rows:
#                             the element fallback and zero fill of the asynchronous copies, checked against the sequential C)
# scripts/gk_device.sh runs them (vendor only in ca_main) and profiles sgemm's default and one variant with Nsight Compute.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
python3 -m pip install -q --no-index --find-links .wheelhouse --no-build-isolation -e '.[opencl]' > "$OUT/install.log" 2>&1 \
  || { tail -20 "$OUT/install.log"; exit 1; }
rm -f "$OUT/install.log"; echo "install done at $((SECONDS-t0)) s"
export PYTHONUNBUFFERED=1
GK_PROFILE=${GK_PROFILE:-"sgemm benchmarks/build/ca_var/s1_async_w48"} bash scripts/gk_device.sh \
  benchmarks/build/ca_main "${MAIN_BUDGET:-80}" benchmarks/build/ca_var "${VAR_BUDGET:-150}" benchmarks/build/ca_odd "${ODD_BUDGET:-30}"
tar -czf "$OUT/ca_variants.tar.gz" -C /tmp gk_variants 2>/dev/null
echo "all done at $((SECONDS-t0)) s"

#!/bin/bash
# Issue 13's tuned table on the GPU machine, in three device calls (each under the 10-minute limit), run from the
# repository root with .wheelhouse carried (../shared/tools/gpu-wheelhouse.sh); results go to $OUT.
#
#   bash scripts/device_tuned_table.sh tune cuda      # mdpoly tunes every GPU workload (TUNE_TIME s per nest, the
#   bash scripts/device_tuned_table.sh tune opencl    #   whole prepare within DEADLINE s) -> $OUT/tt_<target>.tar.gz
#   bash scripts/device_tuned_table.sh run            # the tarballs (carried in .gpu_prepared/) merged, both targets
#                                                     #   and the vendor libraries timed in ONE run (benchmarks/gpu.py
#                                                     #   run), ncu profiles of the kernels in GK_PROFILE, then the GPU
#                                                     #   checks (every example on CUDA and OpenCL, test_gpu_tune.py)
# Here afterwards: copy $OUT's tt_*.tar.gz into .gpu_prepared/ between the calls; after `run`,
# `python benchmarks/gpu.py report <files_at>/gpu_results.json --suffix h200_tuned`.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
phase=${1:?tune TARGET | run}
{ nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader; nproc; } > "$OUT/machine_$phase.txt" 2>&1
python3 -m pip install -q --no-index --find-links .wheelhouse --no-build-isolation -e '.[opencl]' > "$OUT/install.log" 2>&1 \
  || { tail -20 "$OUT/install.log"; exit 1; }
python3 -m pip install -q --no-index --find-links .wheelhouse pytest-xdist > /dev/null 2>&1
mkdir -p ~/icd; echo libnvidia-opencl.so.1 > ~/icd/nvidia.icd; export OCL_ICD_VENDORS=~/icd
export MDPOLY_CACHE_DIR=/tmp/mdpoly-cache PYTHONUNBUFFERED=1
echo "install done at $((SECONDS-t0)) s"
case $phase in
  tune)
    target=${2:?cuda or opencl}
    python3 benchmarks/gpu.py prepare "/tmp/tt_$target" --targets "$target" --tune-time "${TUNE_TIME:-20}" \
      --deadline "${DEADLINE:-480}" ${ONLY:+--only "$ONLY"} > "$OUT/prepare_$target.log" 2>&1
    echo "prepare rc=$? at $((SECONDS-t0)) s"; grep -E "^\[" "$OUT/prepare_$target.log" | cut -c1-220
    tar -czf "$OUT/tt_$target.tar.gz" -C /tmp "tt_$target"
    ;;
  run)
    rm -rf /tmp/tt_cuda /tmp/tt_opencl
    for f in .gpu_prepared/tt_*.tar.gz; do tar -xzf "$f" -C /tmp; done
    main=/tmp/tt_cuda; [ -d "$main" ] || main=/tmp/tt_opencl
    [ -d /tmp/tt_opencl ] && [ "$main" != /tmp/tt_opencl ] && python3 "$main/gpu.py" merge "$main" /tmp/tt_opencl
    python3 "$main/gpu.py" run "$main" --out "$OUT" --budget "${RUN_BUDGET:-300}" > "$OUT/run.log" 2>&1
    echo "run rc=$? at $((SECONDS-t0)) s"; grep -E "^\[" "$OUT/run.log" | cut -c1-200
    NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | tail -1)
    for w in ${GK_PROFILE:-sgemm mcc_resnet50_n16}; do
      exe="$main/build/$w.cuda"; [ -x "$exe" ] || continue
      timeout 60 "$NCU" -k regex:mdpoly_kernel_[0-9]+$ --launch-skip 1 --launch-count 1 --section SpeedOfLight \
        --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
        --section WarpStateStats "$exe" > "$OUT/ncu_$w.txt" 2>&1
      echo "ncu $w rc=$? at $((SECONDS-t0)) s"
    done
    if [ -z "${SKIP_CHECKS:-}" ]; then
      timeout ${CHECK_TIME:-120} python3 scripts/gpu_check.py all /tmp/gc --targets cuda,opencl --jobs 14 > "$OUT/gpu_check.txt" 2>&1
      echo "gpu_check rc=$? at $((SECONDS-t0)) s"; tail -2 "$OUT/gpu_check.txt"; grep -E "FAIL" "$OUT/gpu_check.txt" | head -5
      timeout ${PYTEST_TIME:-90} python3 -m pytest -q -n 12 -p no:cacheprovider tests/tuning/test_gpu_tune.py tests/e2e/test_cuda_examples.py \
        > "$OUT/pytest_gpu.txt" 2>&1
      echo "pytest gpu rc=$? at $((SECONDS-t0)) s"; tail -4 "$OUT/pytest_gpu.txt"
    fi
    ;;
  *) echo "unknown phase $phase" >&2; exit 2 ;;
esac
echo "done at $((SECONDS-t0)) s"

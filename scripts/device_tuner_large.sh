#!/bin/bash
# Device call (GPU machine, .wheelhouse carried; results under $OUT), issue 13 items 4-5:
#   1. the large-shape tuner tests on the GPU (tests/tuning/test_tuner_large.py: CUDA and NVIDIA OpenCL);
#   2. benchmarks/tuning_budget.py with the arguments given in TB_ARGS (default: MatMul 16x4096x25088,
#      60 s budget, CUDA and OpenCL: that the large shape tunes with candidates running).
# Usage there: bash scripts/device_tuner_large.sh     (TB_ARGS="--shapes ... --budgets ..." to change step 2)
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; gcc --version | head -1; python3 --version; } > "$OUT/machine.txt" 2>&1
python3 -m pip install -q --no-index --find-links .wheelhouse --no-build-isolation -e '.[opencl]' > "$OUT/install.log" 2>&1 || { tail -20 "$OUT/install.log"; exit 1; }
mkdir -p ~/icd; echo libnvidia-opencl.so.1 > ~/icd/nvidia.icd; export OCL_ICD_VENDORS=~/icd
export PYTHONUNBUFFERED=1
echo "install done at $((SECONDS-t0)) s"; cat "$OUT/machine.txt"
if [ -z "${SKIP_TESTS:-}" ]; then
  timeout 150 python3 -m pytest -q -n 6 -p no:cacheprovider tests/tuning/test_tuner_large.py -rs > "$OUT/pytest_tuner_large.txt" 2>&1
  echo "pytest rc=$? at $((SECONDS-t0)) s"; tail -8 "$OUT/pytest_tuner_large.txt"
fi
left=$((460 - SECONDS + t0))
timeout $left python3 benchmarks/tuning_budget.py run --out "$OUT" --deadline $((left - 15)) \
  ${TB_ARGS:---targets cuda,opencl --shapes mm_16x4096x25088 --budgets 60} 2>&1 | tee "$OUT/tuning_budget.log" | grep -v '^|' | cut -c1-1500
echo "done at $((SECONDS-t0)) s"

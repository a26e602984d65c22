#!/bin/bash
# GPU suite device call (issues 22 and 23): the 30 suite kernels at full (LARGE) size through --target cuda and
# --target opencl on the GPU machine (H100, 16-core host), whole-program wall time against gcc -O3 sequential and
# mdpoly's OpenMP output at 16 threads, with MDPOLY_PROFILE kernel/transfer times (benchmarks/gpu_suite.py).
# From the repository root with .wheelhouse carried (../shared/tools/gpu-wheelhouse.sh):
#   bash scripts/device_gpu_suite.sh [VARIANTS] [BUDGET_S] [KERNELS] [TAG]
# VARIANTS  comma-separated from seq,omp,cuda,cuda_all,opencl,opencl_all (default seq,omp,cuda,cuda_all);
#           one call per GPU target keeps a call under 9 minutes, e.g.
#             bash scripts/device_gpu_suite.sh seq,omp,cuda,cuda_all 420
#             bash scripts/device_gpu_suite.sh seq,omp,opencl,opencl_all 420
# BUDGET_S  seconds after which the benchmark starts no further kernel (default 420; builds come first and count);
#           the whole call is also cut at BUDGET_S + 90 s (the md/json are rewritten after every kernel)
# KERNELS   comma-separated kernel names (default: all 30), e.g. the ones a previous call skipped
# TAG       suffix of the result files (default h100)
# MDPOLY_COST_CALIBRATION in the environment overrides the cost model's constants for the cuda/opencl variants.
# Results: $OUT/gpu_suite_<TAG>_<variants>.md and .json, $OUT/machine.txt, $OUT/run.log.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
variants=${1:-seq,omp,cuda,cuda_all}; budget=${2:-420}; kernels=${3:-}; tag=${4:-h100}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; gcc --version | head -1; python3 --version; } \
  > "$OUT/machine.txt" 2>&1
python3 -m pip install -q --no-index --find-links .wheelhouse --no-build-isolation -e '.[opencl]' > "$OUT/install.log" 2>&1 \
  || python3 -m pip install -q --no-index --find-links .wheelhouse --no-build-isolation -e . >> "$OUT/install.log" 2>&1 \
  || { tail -20 "$OUT/install.log"; exit 1; }
rm -f "$OUT/install.log"
# NVIDIA's OpenCL through the ICD loader (../shared/tools/gpu-wheelhouse.sh)
mkdir -p ~/icd; echo libnvidia-opencl.so.1 > ~/icd/nvidia.icd; export OCL_ICD_VENDORS=~/icd
export PYTHONUNBUFFERED=1
echo "install done at $((SECONDS-t0)) s; $(nproc) cores; $(head -1 "$OUT/machine.txt")"
name="gpu_suite_${tag}_$(echo "$variants" | tr ',' '-')"
timeout $((budget + 90)) python3 benchmarks/gpu_suite.py --variants "$variants" --threads 16 --reps 3 \
  --jobs "$(( $(nproc) > 2 ? $(nproc) - 2 : 1 ))" --budget "$budget" ${kernels:+--kernels "$kernels"} \
  --out "$OUT/$name" > "$OUT/run.log" 2>&1
echo "gpu_suite rc=$? at $((SECONDS-t0)) s"
grep -E "^(cuda|opencl):" "$OUT/run.log"
tail -12 "$OUT/run.log"

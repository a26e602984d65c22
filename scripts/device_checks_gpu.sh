#!/bin/bash
# Run from the repository root on the GPU machine, with .wheelhouse carried (../shared/tools/gpu-wheelhouse.sh); results go to $OUT.
# Device call A (GPU): every example through CUDA and OpenCL on the final code, the GPU tests, tuned vs shipped timings,
# --devices with one device vs the plain code.
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; gcc --version | head -1; python3 --version; } > "$OUT/machine.txt" 2>&1
python3 -m pip install -q --no-index --find-links .wheelhouse --no-build-isolation -e '.[opencl]' > "$OUT/install.log" 2>&1 || { tail -20 "$OUT/install.log"; exit 1; }
mkdir -p ~/icd; echo libnvidia-opencl.so.1 > ~/icd/nvidia.icd; export OCL_ICD_VENDORS=~/icd
echo "install done at $((SECONDS-t0)) s"
timeout 200 python3 scripts/gpu_check.py all /tmp/gc --targets cuda,opencl --jobs 14 > "$OUT/gpu_check.txt" 2>&1; echo "gpu_check rc=$? at $((SECONDS-t0)) s"; tail -2 "$OUT/gpu_check.txt"; grep -E "FAIL" "$OUT/gpu_check.txt" | head -5
timeout 150 python3 -m pytest -q -n 12 -p no:cacheprovider tests/e2e/test_cuda_examples.py tests/tuning/test_gpu_tune.py tests/runtime/test_cuda_runner.py tests/runtime/test_host_code_runner.py > "$OUT/pytest_gpu.txt" 2>&1; echo "pytest gpu rc=$? at $((SECONDS-t0)) s"; tail -4 "$OUT/pytest_gpu.txt"
{ for t in cuda opencl; do timeout 75 python3 benchmarks/tuned_vs_shipped.py --target $t --source benchmarks/kernels/sgemm.c -D REPS=10 --evals 10 --runs 5; done; } > "$OUT/tuned_vs_shipped.txt" 2>&1; echo "tvs at $((SECONDS-t0)) s"; tail -10 "$OUT/tuned_vs_shipped.txt"
timeout $((570-SECONDS+t0)) bash -c "python3 scripts/multigpu_bench.py prepare /tmp/mg > $OUT/mg_prepare.txt 2>&1 && python3 scripts/multigpu_bench.py run /tmp/mg" > "$OUT/multigpu_one.txt" 2>&1; echo "mg rc=$? at $((SECONDS-t0)) s"; tail -30 "$OUT/multigpu_one.txt"

#!/bin/bash
# Run from the repository root on the GPU machine, with .wheelhouse carried; results go to $OUT.
# The kernel suite (2 threads, full sizes, --no-tune) and CPU sgemm vs numpy/OpenBLAS on the quiet host CPU,
# within one device call (SUITE_S + SGEMM_S seconds plus the install).
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
{ nproc; lscpu | grep 'Model name'; gcc --version | head -1; python3 --version; python3 -c 'import numpy; numpy.show_config()' 2>&1 | grep -i -A2 blas | head -6; uptime; } > "$OUT/machine.txt" 2>&1
python3 -m pip install -q --no-index --find-links .wheelhouse --no-build-isolation -e '.[opencl]' > "$OUT/install.log" 2>&1 || { tail -20 "$OUT/install.log"; exit 1; }
echo "install done at $((SECONDS-t0)) s"
OMP_NUM_THREADS=2 timeout ${SUITE_S:-290} python3 benchmarks/suite.py --reps 5 --threads 2 --jobs 12 --variants seq,omp_for,mdpoly_notune --out "$OUT/suite_notune" > "$OUT/suite.log" 2>&1; echo "suite rc=$? at $((SECONDS-t0)) s"
grep -A6 '^## Summary' "$OUT/suite_notune.md" 2>/dev/null; tail -3 "$OUT/suite.log"
timeout ${SGEMM_S:-110} python3 benchmarks/cpu_sgemm.py --sizes 1024 --threads 2 --runs 5 --tune-time 30 --seq-rounds 1 --out-dir "$OUT" --tag quiet > "$OUT/cpu_sgemm.log" 2>&1; echo "cpu_sgemm rc=$? at $((SECONDS-t0)) s"
grep '|' "$OUT"/cpu_sgemm_*quiet.md 2>/dev/null | head -12; uptime >> "$OUT/machine.txt"

#!/bin/bash
# Never-slower / real-C device call (issues 21 and 22): CPU timings on the GPU machine's quiet 16-core host.
# From the repository root with .wheelhouse carried (../shared/tools/gpu-wheelhouse.sh, core wheels only):
#   bash scripts/device_never_slower.sh PHASE [ARGS...]
# PHASE: suite KERNELS THREADS LOADS BUDGET  -> benchmarks/never_slower.py --size full
#        real THREADS [--busy]               -> benchmarks/real_c.py
#        calibrate                           -> benchmarks/never_slower.py --calibrate
# BEFORE=DIR (an older checkout, e.g. `git archive 20461ad` unpacked into .before and carried) adds the
# variant "before". Results (md/json) go to $OUT.
set -u
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; t0=$SECONDS
python3 -m pip install -q --no-index --find-links .wheelhouse --no-build-isolation -e . > "$OUT/install.log" 2>&1 \
  || { tail -20 "$OUT/install.log"; exit 1; }
rm -f "$OUT/install.log"; echo "install done at $((SECONDS-t0)) s; $(nproc) cores; $(gcc --version | head -1)"
export PYTHONUNBUFFERED=1
phase=$1; shift
case "$phase" in
  suite) python3 benchmarks/never_slower.py --size full --kernels "$1" --threads "$2" --loads "$3" --reps 3 \
           --budget "$4" ${BEFORE:+--before "$BEFORE"} --tag "${5:-xeon16}" --out "$OUT/never_slower_${5:-xeon16}" ;;
  real) python3 benchmarks/real_c.py --threads "$1" --reps 3 --out-dir "$OUT" ${2:+--tag} ${2:-} ${3:-} ;;
  calibrate) python3 benchmarks/never_slower.py --calibrate --threads 1,2,16 --tag xeon16 --out "$OUT/calibrate_xeon16" ;;
esac
echo "phase $phase done at $((SECONDS-t0)) s"

#!/usr/bin/env bash
# Tune and run the GPU benchmarks on a GPU machine with no package index (the H100/H200 image:
# Python 3.12 with numpy, cuda-python, pytest; CUDA toolkit; NVIDIA driver), from the repo root:
#
#   here:  bash ../shared/tools/gpu-wheelhouse.sh .wheelhouse && rm -f .wheelhouse/nvidia_cuda_nvrtc-*.whl
#          (~8 MB: pyopencl, islpy, pycparser(ext), pyatf, pytools, ...; the NVRTC wheel is on the image)
#   there: bash scripts/gpu_tune.sh            (with .wheelhouse carried; results under $OUT)
#
# Steps: (1) installs mdpoly and its missing dependencies offline into a --target folder on
# PYTHONPATH (works as root, leaves the image's Python alone); (2) exposes NVIDIA's OpenCL
# through an ICD file when OCL_ICD_VENDORS is unset; (3) for benchmarks/kernels/sgemm.c
# (1024^3) and mcc.c (MCC RW: N=1, P=Q=7, K=512, C=512, R=S=3) and each target that has a device
# (opencl, cuda): `mdpoly --target T --tune-time $TUNE_TIME`, builds out.c, runs it, and
# compares its checksum with the original program's (built with cc, REPS=1).
# Results in $OUT (default ./gpu_tune_out): results.json (per benchmark x target: tuned config,
# tuned and default kernel seconds, evaluations, rejections by kind, out.c's median and checksum,
# the original's checksum), results.md (the same as a table), gpu_tune.tar.gz (every out.c,
# report, tuning log and the full console log).
# Knobs: TUNE_TIME (default 90 s per nest), TARGETS (default "opencl cuda"), DEADLINE (default 450 s:
# a later target's tuning time shrinks so the whole run ends within it), BENCHES (default "sgemm mcc").
set -uo pipefail

ROOT=$(pwd)
[ -f "$ROOT/pyproject.toml" ] && [ -d "$ROOT/mdpoly" ] || { echo "run from the mdpoly repo root" >&2; exit 2; }
OUT=${OUT:-$ROOT/gpu_tune_out}
mkdir -p "$OUT"
TUNE_TIME=${TUNE_TIME:-90}
TARGETS=${TARGETS:-"opencl cuda"}
BENCHES=${BENCHES:-"sgemm mcc"}
DEADLINE=${DEADLINE:-450}
PY=${PYTHON:-python3}
W=$(mktemp -d /tmp/mdpoly-gpu-tune.XXXXXX)
mkdir -p "$W/runs"
LOG="$W/runs/console.log"
exec > >(tee -a "$LOG") 2>&1
T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
echo "== mdpoly gpu_tune: $(date -u +%FT%TZ) on $(hostname); tune ${TUNE_TIME}s per nest; targets: $TARGETS"

# {{{ 1. offline install

SITE="$W/site"
WHEELS=()
for w in "$ROOT"/.wheelhouse/*.whl; do
  case "$(basename "$w")" in
    pytest-*|pytest_*|pluggy-*|iniconfig-*|execnet-*|packaging-*|pygments-*|numpy-*|nvidia_*) ;;  # on the image
    *) WHEELS+=("$w") ;;
  esac
done
if [ ${#WHEELS[@]} -eq 0 ]; then
  echo "no wheels in .wheelhouse: carry it (bash ../shared/tools/gpu-wheelhouse.sh .wheelhouse here)" >&2
fi
"$PY" -m pip install -q --no-index --no-deps --no-compile --disable-pip-version-check --target "$SITE" "${WHEELS[@]}" \
  || echo "warning: installing the wheels failed"
if "$PY" -m pip install -q --no-index --no-deps --no-build-isolation --no-compile --disable-pip-version-check \
     --target "$SITE" "$ROOT" >"$W/pip-mdpoly.log" 2>&1; then
  export PYTHONPATH="$SITE"
  echo "installed mdpoly into $SITE"
else
  echo "warning: pip could not install mdpoly itself ($(tail -1 "$W/pip-mdpoly.log")); using the checkout"
  export PYTHONPATH="$ROOT:$SITE"
fi
export PYTHONUNBUFFERED=1
cd "$W" || exit 1   # import mdpoly from the install, not the checkout
"$PY" -c "import mdpoly, islpy, pycparser, pyatf; print('mdpoly', mdpoly.__version__, 'from', mdpoly.__file__)" \
  || { echo "mdpoly does not import; giving up" >&2; exit 1; }

# }}}

# {{{ 2. OpenCL ICD, CUDA toolkit

if [ -z "${OCL_ICD_VENDORS:-}" ]; then
  mkdir -p "$W/icd"
  echo libnvidia-opencl.so.1 >"$W/icd/nvidia.icd"
  export OCL_ICD_VENDORS="$W/icd"
fi
CUDA=${CUDA_HOME:-${CUDA_PATH:-}}
if [ -z "$CUDA" ] && command -v nvcc >/dev/null; then CUDA=$(dirname "$(dirname "$(command -v nvcc)")"); fi
[ -z "$CUDA" ] && [ -d /usr/local/cuda ] && CUDA=/usr/local/cuda
CC=${CC:-cc}
CLFLAGS=(-lOpenCL)
CUFLAGS=(-lcuda -lnvrtc)
if [ -n "$CUDA" ]; then
  CLFLAGS=(-I"$CUDA/include" -L"$CUDA/lib64" -lOpenCL)
  CUFLAGS=(-I"$CUDA/include" -L"$CUDA/lib64" -L"$CUDA/lib64/stubs" -lcuda -lnvrtc)
  export LD_LIBRARY_PATH="$CUDA/lib64:${LD_LIBRARY_PATH:-}"
fi
echo "CUDA toolkit: ${CUDA:-none}; cc: $(command -v "$CC")"
"$PY" - <<'PY'
try:
    from mdpoly.runtime.opencl import list_devices
    print("OpenCL devices:", [f"{d.platform.name} | {d.name} | {d.driver_version}" for d in list_devices()])
except Exception as exc:
    print("OpenCL: none:", exc)
try:
    from mdpoly.runtime.cuda import CudaRunner
    print("CUDA device:", CudaRunner().device_identity())
except Exception as exc:
    print("CUDA: none:", exc)
PY

# }}}

# {{{ 3. tune, build, run

KDIR="$ROOT/benchmarks/kernels"
declare -A DEFS=( [sgemm]="${SGEMM_DEFS:--DM=1024 -DN=1024 -DK=1024}" [mcc]="${MCC_DEFS:--DN=1 -DP=7 -DQ=7 -DK=512 -DC=512 -DR=3 -DS=3}" )
export MDPOLY_CACHE_DIR="$W/cache"

for b in $BENCHES; do
  read -r -a defs <<<"${DEFS[$b]}"
  "$CC" -O2 -DREPS=1 "${defs[@]}" "$KDIR/$b.c" -o "$W/runs/$b.orig" -lm && "$W/runs/$b.orig" >"$W/runs/$b.orig.txt" 2>&1
  echo "[$(elapsed)s] $b original (REPS=1): $(tr '\n' ' ' <"$W/runs/$b.orig.txt")"
done

ntargets=$(wc -w <<<"$TARGETS"); nbench=$(wc -w <<<"$BENCHES"); left_runs=$((ntargets * nbench))
for t in $TARGETS; do
  for b in $BENCHES; do
    read -r -a defs <<<"${DEFS[$b]}"
    # keep the whole run within DEADLINE: the tuning time shrinks for the later runs when needed
    budget=$(( (DEADLINE - $(elapsed)) / left_runs - 15 ))
    tt=$TUNE_TIME
    [ "$budget" -lt "${tt%.*}" ] && tt=$(( budget > 10 ? budget : 10 ))
    left_runs=$((left_runs - 1))
    tag="$b.$t"
    echo "[$(elapsed)s] == $tag: mdpoly --target $t --tune-time $tt"
    "$PY" -m mdpoly "$KDIR/$b.c" -o "$W/runs/$tag.out.c" --target "$t" --tune-time "$tt" "${defs[@]}" \
      --report "$W/runs/$tag.report.json" >"$W/runs/$tag.mdpoly.txt" 2>&1
    echo "   mdpoly exit $?: $(grep -E 'remark: (tuned|not tuned)' "$W/runs/$tag.mdpoly.txt" | head -3)"
    flags=("${CLFLAGS[@]}"); [ "$t" = cuda ] && flags=("${CUFLAGS[@]}")
    if [ -f "$W/runs/$tag.out.c" ] && "$CC" -O2 -I"$KDIR" "${defs[@]}" "$W/runs/$tag.out.c" -o "$W/runs/$tag.exe" \
         "${flags[@]}" -lm 2>"$W/runs/$tag.cc.txt"; then
      MDPOLY_PROFILE=1 timeout 120 "$W/runs/$tag.exe" >"$W/runs/$tag.run.txt" 2>&1
      echo "   run exit $?: $(tr '\n' ' ' <"$W/runs/$tag.run.txt" | cut -c1-300)"
    else
      echo "   build failed: $(tail -3 "$W/runs/$tag.cc.txt" 2>/dev/null)"
    fi
  done
done
cp -r "$MDPOLY_CACHE_DIR/logs" "$W/runs/tuning-logs" 2>/dev/null

# }}}

# {{{ 4. results

"$PY" - "$W/runs" "$OUT" "$BENCHES" "$TARGETS" <<'PY'
import glob, json, os, sys
runs, out, benches, targets = sys.argv[1], sys.argv[2], sys.argv[3].split(), sys.argv[4].split()

def kv(path):
    vals = {}
    try:
        for line in open(path):
            parts = line.split()
            if len(parts) == 2:
                vals[parts[0]] = parts[1]
            if line.startswith("mdpoly-profile:"):
                vals["profile"] = line.strip()
    except OSError:
        pass
    return vals

results = []
for t in targets:
    for b in benches:
        tag = f"{b}.{t}"
        row = {"bench": b, "target": t}
        try:
            rep = json.load(open(f"{runs}/{tag}.report.json"))
            nest = next((n for n in rep.get("nests", []) if n.get("tuning")), None)
            if nest:
                tu = nest["tuning"]
                row.update(config=tu.get("config"), params=tu.get("params"), tuned_s=tu.get("tuned_seconds"),
                           default_s=tu.get("default_seconds"), evaluations=tu.get("evaluations"),
                           tuning_s=tu.get("tuning_seconds"))
                if tu.get("log") and os.path.exists(tu["log"]):
                    recs = [json.loads(l) for l in open(tu["log"])]
                    res = next((r for r in recs if r.get("event") == "result"), {})
                    row["rejected"] = res.get("rejected")
                    row["device"] = recs[0].get("device")
        except (OSError, ValueError):
            pass
        try:
            row["remarks"] = [l.strip() for l in open(f"{runs}/{tag}.mdpoly.txt") if "tuned" in l][:3]
        except OSError:
            pass
        got, want = kv(f"{runs}/{tag}.run.txt"), kv(f"{runs}/{b}.orig.txt")
        row.update(out_median_s=got.get("median_s"), out_checksum=got.get("checksum"),
                   orig_checksum=want.get("checksum"), profile=got.get("profile"))
        try:
            g, w = float(got["checksum"]), float(want["checksum"])
            row["checksum_rel_diff"] = abs(g - w) / max(abs(w), 1e-30)
        except (KeyError, ValueError):
            row["checksum_rel_diff"] = None
        results.append(row)
json.dump(results, open(f"{out}/results.json", "w"), indent=1)
ms = lambda s: "-" if s is None else f"{float(s) * 1e3:.3f}"
lines = ["| bench | target | tuned kernel ms | default kernel ms | speedup | evals | out.c median ms | checksum rel diff | config |",
         "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
for r in results:
    sp = f"{r['default_s'] / r['tuned_s']:.2f}x" if r.get("default_s") and r.get("tuned_s") else "-"
    d = r.get("checksum_rel_diff")
    lines.append(f"| {r['bench']} | {r['target']} | {ms(r.get('tuned_s'))} | {ms(r.get('default_s'))} | {sp} | "
                 f"{r.get('evaluations', '-')} | {ms(r.get('out_median_s'))} | {'-' if d is None else f'{d:.2e}'} | "
                 f"{r.get('params') or (r.get('remarks') or ['not tuned'])[0][-160:]} |")
open(f"{out}/results.md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
PY
echo "[$(elapsed)s] done"
tar -czf "$OUT/gpu_tune.tar.gz" -C "$W" runs 2>/dev/null
ls -la "$OUT"

# }}}

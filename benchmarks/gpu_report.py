"""GPU benchmark record (``gpu_results.json``) -> markdown table, and -> PNG bar plot (matplotlib).

``render_markdown`` needs only the standard library (``gpu.py run`` calls it on the GPU machine);
``plot`` imports matplotlib (the ``bench`` extra) and is called by ``gpu.py report`` only.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

Record = Mapping[str, Any]

TARGET_TITLES = {"opencl": "mdpoly OpenCL", "cuda": "mdpoly CUDA"}


def _ms(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.4f}" if value < 1 else f"{value:.3f}"


def _variant_cells(v: Mapping[str, Any] | None) -> tuple[str, str]:
    """(kernel ms, whole-call ms) cells of one mdpoly variant."""
    if v is None:
        return "n/a", "n/a"
    if v["status"] != "ok":
        detail = str(v.get("detail", ""))
        detail = detail if len(detail) <= 100 else detail[:97] + "..."
        cell = f"{v['status']}: {detail}".replace("|", "/").replace("\n", " ")
        return cell, "–"
    return _ms(v.get("kernel_ms")), _ms(v.get("whole_ms"))


def _ratio(mdpoly: Mapping[str, Any] | None, vendor_ms: float | None) -> str:
    """vendor / mdpoly kernel time: above 1 means mdpoly is faster."""
    if not mdpoly or mdpoly["status"] != "ok" or not mdpoly.get("kernel_ms") or not vendor_ms:
        return "–"
    return f"{vendor_ms / mdpoly['kernel_ms']:.2f}"


def ratios(row: Mapping[str, Any]) -> dict[str, float | None]:
    """Per target, vendor kernel ms / mdpoly kernel ms (``None`` where either is missing)."""
    vendor = row.get("vendor") or {}
    vendor_ms = vendor.get("kernel_ms") if vendor.get("status") == "ok" else None
    out: dict[str, float | None] = {}
    for target, v in row.get("variants", {}).items():
        ok = v.get("status") == "ok" and v.get("kernel_ms") and vendor_ms
        out[target] = vendor_ms / v["kernel_ms"] if ok else None
    return out


def render_markdown(record: Record) -> str:
    """The results table (times in ms) with the machine, settings and notes."""
    quick = record.get("mode") == "quick"
    lines = [f"# GPU benchmark results ({record.get('mode', 'full')}, {record.get('date', '?')})", ""]
    lines += [f"- **{key}**: {value}" for key, value in record.get("machine", {}).items()]
    lines += [f"- **{key}**: {value}" for key, value in record.get("settings", {}).items()]
    lines += ["", "Times in milliseconds. **Ratios are vendor kernel time / mdpoly kernel time: above 1 means "
              "mdpoly is faster, 1.00 = parity.** *kernel* = device time of the kernels per call, timed the same "
              "way on both sides: the vendor library's from CUPTI (`torch.profiler`, kernel events only), mdpoly "
              "OpenCL's from its profiling events (each command's start..end), mdpoly CUDA's from Nsight Compute "
              "(`gpu__time_duration`, clocks and caches left alone) -- or, where ncu failed, from CUDA events "
              "around the launches (see *CUDA kernel source*). *per call* = the vendor's CUDA events around each "
              "Python call (median); *whole call* = the mdpoly program's own `median_s` of the kernel function "
              "(allocation, copies in and out, launches).", ""]
    header = ["workload", "sizes", "vendor", "vendor kernel", "vendor per call (events)",
              "OpenCL kernel", "OpenCL whole call", "CUDA kernel", "CUDA kernel source", "CUDA events",
              "CUDA whole call", "vendor / OpenCL (>1: mdpoly faster)", "vendor / CUDA (>1: mdpoly faster)",
              "reported anchor: vendor kernel (H200, issues, not measured by us)", "checksum reference",
              "mdpoly tuning budget"]
    lines += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for row in record.get("rows", []):
        variants = row.get("variants", {})
        ocl_k, ocl_w = _variant_cells(variants.get("opencl"))
        cu_k, cu_w = _variant_cells(variants.get("cuda"))
        cuda = variants.get("cuda") or {}
        vendor = row.get("vendor") or {}
        vendor_ms = vendor.get("kernel_ms") if vendor.get("status") == "ok" else None
        vendor_cell = _ms(vendor_ms) if vendor_ms is not None else f"{vendor.get('status', 'n/a')}"
        vendor_name = vendor.get("name") or (vendor.get("detail", "")[:80].replace("|", "/") or "–")
        anchors = row.get("anchors", {})
        a_vendor = "n/a (quick sizes)" if quick else _anchor(anchors.get("vendor"))
        sizes = " ".join(f"{k}={v}" for k, v in row["sizes"].items())
        cells = [row["workload"], sizes, vendor_name, vendor_cell, _ms(vendor.get("event_ms")), ocl_k, ocl_w, cu_k,
                 str(cuda.get("kernel_source", "–")), _ms(cuda.get("event_kernel_ms")), cu_w,
                 _ratio(variants.get("opencl"), vendor_ms), _ratio(variants.get("cuda"), vendor_ms), a_vendor,
                 str(row.get("reference", "seq")), str(row.get("tuning", "none"))]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Notes:", "",
              "- mdpoly variants: `mdpoly kernels/<k>.c --target opencl|cuda` with the sizes as `-D`, untuned "
              "(`--no-tune`) or tuned on the GPU machine itself (`--tune-time`; *mdpoly tuning budget* and the "
              "tuning table below say which), "
              "built with `cc -O2`; each program runs one warm-up call and `REPS` timed calls, and is run "
              "several times (medians over runs). Event kernel times per call average every call of a run, "
              "warm-up included; the CUDA program runs once more under `ncu`, whose kernel durations are summed "
              "over all calls and divided by their number.",
              "- Every mdpoly variant's checksum is compared with the sequential C program's (relative 1e-3, or "
              "1e-5 of the outputs' absolute sum); where the sequential program is too slow to run (marked "
              "`vendor` under *checksum reference*), with the vendor library's on the same inputs. A differing "
              "one is `wrong`. The vendor references use the programs' inputs (their LCG, rebuilt in numpy).",
              "- vendor: the candidate with the least kernel time among the listed library calls (cuBLAS via "
              "CuPy / PyTorch for MatMul; cuDNN via PyTorch conv2d NCHW / NHWC with `cudnn.benchmark` for MCC), "
              "fp32 with TF32 off.",
              "- MCC shapes: NHWC input, KRSC weights, padding VALID. VGG-16's first layer is run with the "
              "222 x 222 output VALID padding gives for a 224 x 224 image (the thesis lists 224 x 224); "
              "ResNet-50's 230 x 230 input with a 7 x 7 stride-2 filter gives 112 x 112 (its last row and "
              "column are not read).",
              "- Reported anchors come from the issues (#5, #6, #13): H200 vendor kernel times reported elsewhere; "
              "not measured by this run."]
    lines += _tuning_lines(record)
    failures = [(row["workload"], name, v) for row in record.get("rows", [])
                for name, v in row.get("variants", {}).items() if v["status"] != "ok"]
    if failures:
        lines += ["", "Failures (full reasons):", ""]
        lines += [f"- {w} {TARGET_TITLES.get(n, n)}: {v['status']}: {v.get('detail', '')}" for w, n, v in failures]
    ncu_errors = [(row["workload"], v["ncu_error"]) for row in record.get("rows", [])
                  for v in row.get("variants", {}).values() if v.get("ncu_error")]
    if ncu_errors:
        lines += ["", "ncu failures (CUDA kernel time from events instead):", ""]
        lines += [f"- {w}: {e}" for w, e in ncu_errors]
    return "\n".join(lines) + "\n"


def _tuning_lines(record: Record) -> list[str]:
    """The tuner's own view per workload and target: budget, evaluations, default and tuned kernel time
    as the tuner measured them (its timing, not this run's), and the chosen configuration."""
    rows = [(row["workload"], target, t) for row in record.get("rows", [])
            for target, t in (row.get("tuned") or {}).items()]
    if not rows:
        return []
    ms = lambda v: _ms(v * 1e3) if isinstance(v, (int, float)) else "–"  # noqa: E731
    out = ["", "Tuning (the tuner's measurements on the GPU machine, kernel time of the default and of the chosen "
           "configuration; *speedup* = default / tuned):", "",
           "| workload | target | budget s | status | evaluations | default ms | tuned ms | speedup | configuration |",
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for workload, target, t in rows:
        d, tu = t.get("default_s"), t.get("tuned_s")
        speed = f"{d / tu:.2f}" if isinstance(d, (int, float)) and isinstance(tu, (int, float)) and tu else "–"
        config = str(t.get("params") or t.get("detail") or "").replace("|", "/")
        out.append(f"| {workload} | {target} | {t.get('budget_s', 0):g} | {t.get('status', '?')} | "
                   f"{t.get('evaluations', '–')} | {ms(d)} | {ms(tu)} | {speed} | `{config}` |")
    return out


def _anchor(value: float | None) -> str:
    return "–" if value is None else _ms(value)


def plot(record: Record, png: Path) -> Path:
    """Bars (log scale) of vendor / mdpoly kernel time per workload and target; a line at parity."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = record.get("rows", [])
    series = [("mdpoly OpenCL", "opencl", "#1f77b4"), ("mdpoly CUDA", "cuda", "#2ca02c")]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.9 * len(rows)) + 2.5, 5.0))
    width = 0.8 / len(series)
    for i, (label, target, color) in enumerate(series):
        values = [ratios(r).get(target) for r in rows]
        xs = [n + (i - (len(series) - 1) / 2) * width for n in range(len(rows))]
        ax.bar(xs, [v or 0.0 for v in values], width, label=label, color=color)
        for x, v in zip(xs, values):
            if v:
                ax.annotate(f"{v:.2f}", (x, v), ha="center", va="bottom", fontsize=6, rotation=90)
    ax.axhline(1.0, color="#d62728", linewidth=1, label="parity with the vendor library")
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)), [r["workload"] for r in rows], rotation=40, ha="right", fontsize=7)
    ax.set_ylabel("vendor kernel time / mdpoly kernel time\n(> 1: mdpoly faster; log scale)")
    gpu = record.get("machine", {}).get("gpu", "?")
    ax.set_title(f"mdpoly vs cuBLAS / cuDNN, kernel only, {gpu} ({record.get('date', '?')}, "
                 f"{record.get('mode', 'full')})", fontsize=9)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=130)
    plt.close(fig)
    return png


def _ok(m: Mapping[str, Any] | None) -> float | None:
    return m.get("kernel_ms") if m and m.get("status") == "ok" else None

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
    if not mdpoly or mdpoly["status"] != "ok" or not mdpoly.get("kernel_ms") or not vendor_ms:
        return "–"
    return f"{mdpoly['kernel_ms'] / vendor_ms:.2f}x"


def render_markdown(record: Record) -> str:
    """The results table (times in ms) with the machine, settings and notes."""
    quick = record.get("mode") == "quick"
    lines = [f"# GPU benchmark results ({record.get('mode', 'full')}, {record.get('date', '?')})", ""]
    lines += [f"- **{key}**: {value}" for key, value in record.get("machine", {}).items()]
    lines += [f"- **{key}**: {value}" for key, value in record.get("settings", {}).items()]
    lines += ["", "Times in milliseconds, medians. *kernel* = device time of the kernel launches per call "
              "(`MDPOLY_PROFILE=1`: OpenCL profiling events, CUDA events), *whole call* = the program's own "
              "`median_s` of the kernel function (allocation, copies in and out, launches). Ratios are mdpoly "
              "kernel time / vendor kernel time (1.00x = parity, above 1 = mdpoly slower).", ""]
    header = ["workload", "sizes", "OpenCL kernel", "OpenCL whole call", "CUDA kernel", "CUDA whole call",
              "vendor kernel", "vendor", "OpenCL / vendor", "CUDA / vendor",
              "reported anchor: vendor (H200, not measured by us)",
              "reported anchor: PPCG CUDA (H200, not measured by us)"]
    lines += ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    for row in record.get("rows", []):
        variants = row.get("variants", {})
        ocl_k, ocl_w = _variant_cells(variants.get("opencl"))
        cu_k, cu_w = _variant_cells(variants.get("cuda"))
        vendor = row.get("vendor") or {}
        vendor_ms = vendor.get("kernel_ms") if vendor.get("status") == "ok" else None
        vendor_cell = _ms(vendor_ms) if vendor_ms is not None else f"{vendor.get('status', 'n/a')}"
        vendor_name = vendor.get("name") or (vendor.get("detail", "")[:80].replace("|", "/") or "–")
        anchors = row.get("anchors", {})
        if quick:
            a_vendor = a_ppcg = "n/a (quick sizes)"
        else:
            a_vendor = _anchor(anchors.get("vendor"))
            a_ppcg = _anchor(anchors.get("ppcg"))
        sizes = " ".join(f"{k}={v}" for k, v in row["sizes"].items())
        cells = [row["workload"], sizes, ocl_k, ocl_w, cu_k, cu_w, vendor_cell, vendor_name,
                 _ratio(variants.get("opencl"), vendor_ms), _ratio(variants.get("cuda"), vendor_ms), a_vendor, a_ppcg]
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", "Notes:", "",
              "- mdpoly variants: `mdpoly kernels/<k>.c --target opencl|cuda --no-tune` with the sizes as `-D`, "
              "built with `cc -O2`; each program runs one warm-up call and `REPS` timed calls, and is run "
              "several times (medians over runs). The kernel time per call averages every call of a run, warm-up "
              "included. CUDA kernel times span from an event before the first launch to one after the last, so "
              "they include a few microseconds of launch latency; OpenCL's are the commands' own start..end.",
              "- Every mdpoly variant's checksum is compared with the sequential C program's (relative 1e-3); a "
              "differing one is `wrong`. The vendor references use the same inputs (the programs' LCG, rebuilt "
              "in numpy) and are checked the same way.",
              "- vendor: the fastest of the listed library calls (cuBLAS via CuPy / PyTorch for sgemm; cuDNN via "
              "PyTorch conv2d NCHW / NHWC for MCC), fp32 with TF32 off, warmed up, CUDA-event timed per call.",
              "- Reported anchors come from the issues (#5, #6): H200 kernel times reported elsewhere, at the full "
              "sizes; they were not measured by this run and may come from another GPU than the one above."]
    failures = [(row["workload"], name, v) for row in record.get("rows", [])
                for name, v in row.get("variants", {}).items() if v["status"] != "ok"]
    if failures:
        lines += ["", "Failures (full reasons):", ""]
        lines += [f"- {w} {TARGET_TITLES.get(n, n)}: {v['status']}: {v.get('detail', '')}" for w, n, v in failures]
    return "\n".join(lines) + "\n"


def _anchor(value: float | None) -> str:
    return "–" if value is None else _ms(value)


def plot(record: Record, png: Path) -> Path:
    """Grouped bars (log scale) of kernel ms per workload: mdpoly OpenCL, mdpoly CUDA, vendor, anchors."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = record.get("rows", [])
    series: list[tuple[str, list[float | None], dict[str, Any]]] = [
        ("mdpoly OpenCL", [_ok(r.get("variants", {}).get("opencl")) for r in rows], {"color": "#1f77b4"}),
        ("mdpoly CUDA", [_ok(r.get("variants", {}).get("cuda")) for r in rows], {"color": "#2ca02c"}),
        ("vendor (measured)", [_ok(r.get("vendor")) for r in rows], {"color": "#d62728"}),
    ]
    if record.get("mode") != "quick":
        series += [("vendor (reported anchor, H200)", [r.get("anchors", {}).get("vendor") for r in rows],
                    {"color": "#d62728", "alpha": 0.35, "hatch": "//"}),
                   ("PPCG CUDA (reported anchor, H200)", [r.get("anchors", {}).get("ppcg") for r in rows],
                    {"color": "#7f7f7f", "alpha": 0.5, "hatch": ".."})]
    fig, ax = plt.subplots(figsize=(max(6.0, 2.2 * len(rows)) + 2.5, 4.5))
    width = 0.8 / len(series)
    for i, (label, values, style) in enumerate(series):
        xs = [n + (i - (len(series) - 1) / 2) * width for n in range(len(rows))]
        heights = [v if v else 0.0 for v in values]
        ax.bar(xs, heights, width, label=label, **style)
        for x, v in zip(xs, values):
            if v:
                ax.annotate(_ms(v), (x, v), ha="center", va="bottom", fontsize=6, rotation=90)
    ax.set_yscale("log")
    ax.set_xticks(range(len(rows)), [r["workload"] for r in rows])
    ax.set_ylabel("kernel time per call (ms, log scale)")
    gpu = record.get("machine", {}).get("gpu", "?")
    ax.set_title(f"mdpoly vs vendor libraries, {gpu} ({record.get('date', '?')}, {record.get('mode', 'full')})")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(png, dpi=130)
    plt.close(fig)
    return png


def _ok(m: Mapping[str, Any] | None) -> float | None:
    return m.get("kernel_ms") if m and m.get("status") == "ok" else None

"""A ``DeviceBody`` -> OpenCL or CUDA code: ``render_item(body, name, api) -> ItemCode``.

The kernel runs one thread per iteration of the body's thread band (collapsed, row-major: the
innermost loop fastest; one thread when there is no band): each thread decodes its iterators
from its global index, runs the body, and the thread of the sequentially last iteration then
runs ``last`` and stores the ``outs``. The host function (``static void <name>(...)``) takes
the arrays' host addresses, the scalars by value and the outs' addresses; it computes the band's
bounds, returns at once when the band is empty, uses a data region's device buffer for an array
where there is one (``mdp_cl_resident_find``/``mdp_cu_resident_find``, by host address), else
copies the whole array in (and back when written) through buffers kept across calls, and
launches. The call statement passes the user's names. ``device_data`` describes the buffers for
the region planner (``mdpoly.backends.residency``) as a GPU computation's are described.

The kernels are compiled without contraction (OpenCL ``FP_CONTRACT OFF``, NVRTC
``--fmad=false``), so float results round as the host program's do. Nothing here decides.
"""

from __future__ import annotations

from dataclasses import dataclass

from mdpoly.backends.c_files import c_file
from mdpoly.backends.device_body import DeviceBody
from mdpoly.backends.gpu_host import c_string
from mdpoly.ir.nest import TILE_BARRIER, TILE_THREAD, TILE_THREADS
from mdpoly.ir.residency import DeviceData, DeviceUse

#: An OpenCL transfer's event argument: an event of the call's when profiling, else none.
_TEV = "mdp_cl_profile ? &mdp_tev[mdp_nt++] : NULL"

#: Threads per CUDA block of an item's kernel.
BLOCK = 128


@dataclass(frozen=True, slots=True)
class ItemCode:
    """An item's generated code: the host function with its kernel source (``definition``), the
    statement that calls it (``call``), the API's runtime (``preamble``), and its buffers."""

    definition: str
    call: str
    preamble: str
    device_data: DeviceData


def _params(body: DeviceBody, api: str) -> list[str]:
    glob = "__global " if api == "opencl" else ""
    out = [f"{glob}{a.device_type} *{a.name}" for a in body.arrays]
    out += [f"const {s.device_type} {s.name}" for s in body.scalars]
    for k in range(len(body.threads)):
        out += [f"const long mdp_lo{k}", f"const long mdp_ext{k}"]
    out += [f"{glob}{s.device_type} *mdp_out_{s.name}" for s in body.outs]
    return out


#: Per API: a work-group's index, its thread's index in it, its size, and its barrier ordering
#: global memory for the group (a ``DeviceBody.group`` kernel).
_GROUP = {
    "opencl": ("(long)get_group_id(0)", "(long)get_local_id(0)", "(long)get_local_size(0)",
               "barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);"),
    "cuda": ("(long)blockIdx.x", "(long)threadIdx.x", "(long)blockDim.x", "__syncthreads();"),
}


def kernel_source(body: DeviceBody, name: str, api: str) -> str:
    """The kernel ``name`` in OpenCL C or CUDA C (a work-group per band iteration when
    ``body.group``: every thread of it runs the body, which shares the work by the thread's
    index and waits at the group's barriers)."""
    lines: list[str] = []
    if api == "opencl":
        lines += list(c_file("opencl_kernel.cl").splitlines())
        if body.fp64:
            lines.append("#pragma OPENCL EXTENSION cl_khr_fp64 : enable")
        lines.append("#pragma OPENCL FP_CONTRACT OFF")
        head, index = "__kernel void", "(long)get_global_id(0)"
    else:
        lines += list(c_file("cuda_kernel.h").splitlines())
        head, index = 'extern "C" __global__ void', "((long)blockIdx.x * (long)blockDim.x + (long)threadIdx.x)"
    total = " * ".join(f"mdp_ext{k}" for k in range(len(body.threads))) or "1"
    text = body.body
    if body.group:
        index, lid, lsz, barrier = _GROUP[api]
        text = text.replace(TILE_BARRIER, barrier)
    lines.append(f"{head} {name}({', '.join(_params(body, api))})")
    lines.append("{")
    lines.append(f"    const long mdp_t = {index};")
    if body.group:   # the group returns as a whole (the barriers wait for every thread of it)
        lines += [f"    const long {TILE_THREAD} = {lid};", f"    const long {TILE_THREADS} = {lsz};"]
    lines.append("    long mdp_r = mdp_t;")
    lines += [f"    {t.device_type} {t.iterator};" for t in body.threads]
    lines += [f"    {d}" for d in body.locals]
    lines.append(f"    if (mdp_t >= {total})")
    lines.append("        return;")
    for k in reversed(range(len(body.threads))):
        t = body.threads[k]
        pos = f"(mdp_r % mdp_ext{k})" if k else "mdp_r"
        lines.append(f"    {t.iterator} = ({t.device_type})(mdp_lo{k} {'+' if t.step > 0 else '-'} {pos});")
        if k:
            lines.append(f"    mdp_r /= mdp_ext{k};")
    lines.append("    (void)mdp_r;")
    lines += ["    " + ln for ln in text.splitlines()]
    if body.last:
        lines.append(f"    if (mdp_t == {total} - 1)")
        lines += ["    " + ln for ln in body.last.splitlines()]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _host_params(body: DeviceBody) -> list[str]:
    out = [f"void *{a.name}" for a in body.arrays]
    out += [f"{s.host_type} {s.name}" for s in body.scalars]
    out += [f"void *mdp_outp_{s.name}" for s in body.outs]
    return out


def call_text(body: DeviceBody, name: str) -> str:
    """The statement that runs the item: the host function called with the user's names."""
    args = [f"(void *){a.name}" for a in body.arrays] + [s.name for s in body.scalars]
    args += [f"(void *)&{s.name}" for s in body.outs]
    return f"{name}({', '.join(args)});"


def _buffers(body: DeviceBody) -> list[tuple[str, str, str, bool]]:
    """``(buffer, host pointer, bytes, written)`` of every device buffer, outs last."""
    out = [(a.name, a.name, f"{a.count()} * sizeof({a.host_type})", a.written) for a in body.arrays]
    out += [(f"out_{s.name}", f"mdp_outp_{s.name}", f"sizeof({s.host_type})", True) for s in body.outs]
    return out


def _host_opencl(body: DeviceBody, name: str) -> list[str]:
    w: list[str] = []
    bufs = _buffers(body)
    w.append("static cl_kernel mdp_kernel = NULL;")
    # MDPOLY_PROFILE: one event per command, requested only when profiling (NULL otherwise)
    w.append(f"cl_event mdp_kev[1], mdp_tev[{2 * len(bufs) + 1}];")
    w.append("int mdp_nk = 0, mdp_nt = 0;")
    for b, _, nbytes, _ in bufs:
        w += [f"static cl_mem mdp_mem_{b};", f"static size_t mdp_cap_{b};",
              f"const size_t mdp_bytes_{b} = {nbytes};", f"cl_mem mdp_dev_{b} = 0;", f"int mdp_res_{b} = 0;"]
    for k, t in enumerate(body.threads):
        w.append(f"const cl_long mdp_lo{k} = (cl_long)({t.lower}), mdp_ext{k} = (cl_long)({t.extent});")
    w.append("size_t mdp_items = 1;")
    for k in range(len(body.threads)):
        w += [f"if (mdp_ext{k} <= 0)", "    return;", f"mdp_items *= (size_t)mdp_ext{k};"]
    if body.group:   # a work-group per item: as many work-items as the compiled kernel allows, up to the group
        w += ["static size_t mdp_group = 0;", "if (!mdp_kernel) {",
              f'    mdp_kernel = mdp_cl_kernel(mdp_src_{name}, "{name}", "{name}");',
              "    mdp_cl_check(clGetKernelWorkGroupInfo(mdp_kernel, mdp_cl_device, CL_KERNEL_WORK_GROUP_SIZE, "
              'sizeof mdp_group, &mdp_group, NULL), "clGetKernelWorkGroupInfo");',
              f"    if (mdp_group > {body.group} || mdp_group == 0)", f"        mdp_group = {body.group};", "}",
              "mdp_items *= mdp_group;"]
    else:
        w += ["if (!mdp_kernel)", f'    mdp_kernel = mdp_cl_kernel(mdp_src_{name}, "{name}", "{name}");']
    for b, host, _, _ in bufs:
        w.append(f"mdp_res_{b} = mdp_cl_resident_find((const void *){host}, mdp_bytes_{b}, &mdp_dev_{b});")
        w.append(f"if (!mdp_res_{b}) {{")
        w.append(f"    mdp_cl_buffer(&mdp_mem_{b}, &mdp_cap_{b}, mdp_bytes_{b}, CL_MEM_READ_WRITE);")
        w.append(f"    mdp_dev_{b} = mdp_mem_{b};")
        if not b.startswith("out_"):
            w.append(f"    mdp_cl_check(clEnqueueWriteBuffer(mdp_cl_queue, mdp_mem_{b}, CL_FALSE, 0, mdp_bytes_{b}, "
                     f'(const void *){host}, 0, NULL, {_TEV}), "clEnqueueWriteBuffer");')
        w.append("}")
    args = [f"mdp_dev_{a.name}" for a in body.arrays] + [s.name for s in body.scalars]
    for k in range(len(body.threads)):
        args += [f"mdp_lo{k}", f"mdp_ext{k}"]
    args += [f"mdp_dev_out_{s.name}" for s in body.outs]
    for k, a in enumerate(args):
        w.append(f'mdp_cl_check(clSetKernelArg(mdp_kernel, {k}, sizeof({a}), &{a}), "clSetKernelArg");')
    w.append(f"mdp_cl_check(clEnqueueNDRangeKernel(mdp_cl_queue, mdp_kernel, 1, NULL, &mdp_items, "
             f"{'&mdp_group' if body.group else 'NULL'}, 0, NULL, "
             'mdp_cl_profile ? &mdp_kev[mdp_nk++] : NULL), "clEnqueueNDRangeKernel");')
    for b, host, _, written in bufs:
        if written:
            w.append(f"if (!mdp_res_{b})")
            w.append(f"    mdp_cl_check(clEnqueueReadBuffer(mdp_cl_queue, mdp_dev_{b}, CL_TRUE, 0, mdp_bytes_{b}, "
                     f'(void *){host}, 0, NULL, {_TEV}), "clEnqueueReadBuffer");')
    every = " && ".join(f"mdp_res_{b}" for b, _, _, _ in bufs) or "0"
    w += [f"if (mdp_cl_profile || !({every}))", '    mdp_cl_check(clFinish(mdp_cl_queue), "clFinish");',
          "if (mdp_cl_profile)", f'    mdp_cl_profile_add("{name}", mdp_kev, mdp_nk, mdp_tev, mdp_nt);']
    return w


def _host_cuda(body: DeviceBody, name: str) -> list[str]:
    w: list[str] = []
    bufs = _buffers(body)
    w.append("static CUfunction mdp_kernel = NULL;")
    for b, _, nbytes, _ in bufs:
        w += [f"static CUdeviceptr mdp_mem_{b};", f"static size_t mdp_cap_{b};",
              f"const size_t mdp_bytes_{b} = {nbytes};", f"CUdeviceptr mdp_dev_{b} = 0;", f"int mdp_res_{b} = 0;"]
    for k, t in enumerate(body.threads):
        w.append(f"long long mdp_lo{k} = (long long)({t.lower}), mdp_ext{k} = (long long)({t.extent});")
    w.append("long long mdp_items = 1;")
    if body.group:   # a block per item: as many threads as the compiled kernel allows, up to the group
        w.append(f"static unsigned int mdp_block[3] = {{{body.group}, 1, 1}};")
    else:
        w.append(f"const unsigned int mdp_block[3] = {{{BLOCK}, 1, 1}};")
    for k in range(len(body.threads)):
        w += [f"if (mdp_ext{k} <= 0)", "    return;", f"mdp_items *= mdp_ext{k};"]
    w += ["if (!mdp_kernel) {",
          f'    CUmodule mdp_mod = mdp_cu_module(mdp_cu_src_{name}, "{name}", 0);',
          f'    mdp_kernel = mdp_cu_function(mdp_mod, "{name}");']
    if body.group:
        w += ["    int mdp_most = 0;",
              '    mdp_cu_check(cuFuncGetAttribute(&mdp_most, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, mdp_kernel), '
              '"cuFuncGetAttribute");',
              "    if (mdp_most > 0 && (unsigned int)mdp_most < mdp_block[0])",
              "        mdp_block[0] = (unsigned int)mdp_most;"]
    w += [f'    mdp_cu_launchable(mdp_kernel, "{name}", mdp_block);', "}"]
    # MDPOLY_PROFILE: events 0-1 around the copies in, 5-2 around the launch (gated), 3-4 around the copies out
    w += ["const double mdp_host0 = mdp_cu_profile ? mdp_cu_now_ms() : 0.0;",
          "if (mdp_cu_profile)", "    mdp_cu_profile_record(0);"]
    for b, host, _, _ in bufs:
        w.append(f"mdp_res_{b} = mdp_cu_resident_find((const void *){host}, mdp_bytes_{b}, &mdp_dev_{b});")
        w.append(f"if (!mdp_res_{b}) {{")
        w.append(f"    mdp_cu_buffer(&mdp_mem_{b}, &mdp_cap_{b}, mdp_bytes_{b});")
        w.append(f"    mdp_dev_{b} = mdp_mem_{b};")
        if not b.startswith("out_"):
            w.append(f'    mdp_cu_check(cuMemcpyHtoD(mdp_mem_{b}, (const void *){host}, mdp_bytes_{b}), "cuMemcpyHtoD");')
        w.append("}")
    # the kernel's events: held behind the gate until the launch is queued (``mdp_cu_gate_hold``)
    w += ["if (mdp_cu_profile) {", "    mdp_cu_profile_record(1);", "    mdp_cu_gate_hold();", "}"]
    args = [f"&mdp_dev_{a.name}" for a in body.arrays] + [f"(void *)&{s.name}" for s in body.scalars]
    for k in range(len(body.threads)):
        args += [f"&mdp_lo{k}", f"&mdp_ext{k}"]
    args += [f"&mdp_dev_out_{s.name}" for s in body.outs]
    w.append(f"{{ void *mdp_args[] = {{{', '.join(args)}}};")
    grid = "(unsigned int)mdp_items" if body.group else f"(unsigned int)((mdp_items + {BLOCK - 1}) / {BLOCK})"
    w.append(f"  mdp_cu_check(cuLaunchKernel(mdp_kernel, {grid}, 1, 1, "
             'mdp_block[0], 1, 1, 0, NULL, mdp_args, NULL), "cuLaunchKernel"); }')
    every = " && ".join(f"mdp_res_{b}" for b, _, _, _ in bufs) or "0"
    w += ["if (mdp_cu_profile)", "    mdp_cu_gate_open();"]
    w += [f"if (mdp_cu_profile || !({every}))", '    mdp_cu_check(cuCtxSynchronize(), "cuCtxSynchronize");']
    w += ["if (mdp_cu_profile)", "    mdp_cu_profile_record(3);"]
    for b, host, _, written in bufs:
        if written:
            w.append(f"if (!mdp_res_{b})")
            w.append(f'    mdp_cu_check(cuMemcpyDtoH((void *){host}, mdp_dev_{b}, mdp_bytes_{b}), "cuMemcpyDtoH");')
    w += ["if (mdp_cu_profile) {", "    mdp_cu_profile_record(4);", f'    mdp_cu_profile_add("{name}", !({every}), mdp_host0, 1);', "}"]
    return w


def host_function(body: DeviceBody, name: str, api: str, source: str) -> str:
    """The kernel source string and ``static void <name>(...)`` that runs it."""
    prefix = "mdp_src_" if api == "opencl" else "mdp_cu_src_"
    params = ", ".join(_host_params(body)) or "void"
    lines = [f"static const char {prefix}{name}[] =", c_string(source) + ";", f"static void {name}({params})", "{"]
    lines += ["    " + ln for ln in (_host_opencl(body, name) if api == "opencl" else _host_cuda(body, name))]
    lines.append("}")
    return "\n".join(lines) + "\n"


def device_data(body: DeviceBody) -> DeviceData:
    """The item's arrays as the region planner sees a computation's buffers: each copied whole
    (its declared extents), read, and written where the item writes it."""
    uses = tuple(DeviceUse(a.name, a.host_type, a.count(), True, a.written, True) for a in body.arrays)
    return DeviceData(uses, "", True)


def render_item(body: DeviceBody, name: str, api: str) -> ItemCode:
    """``body`` as the API's kernel, host function and call."""
    source = kernel_source(body, name, api)
    preamble = c_file("opencl_host.h") if api == "opencl" else c_file("cuda_host.h")
    return ItemCode(host_function(body, name, api, source), call_text(body, name), preamble, device_data(body))

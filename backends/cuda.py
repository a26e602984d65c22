"""``CudaBackend``: renders a ``KernelPlan`` as CUDA C kernels plus C host code (driver API + NVRTC).

The kernels come from the same work-group lowering as OpenCL (``mdpoly.lower.gpu``) and the same
C-style writer (``mdpoly.backends.opencl.KernelWriter``); only spellings differ: a work-group is a block,
a work-item a thread, ``__local`` is ``__shared__``, the barrier ``__syncthreads()``, kernels are
``extern "C" __global__`` (unmangled names for ``cuModuleGetFunction``); a plan's ``min_groups``
becomes ``__launch_bounds__(work-group size, min_groups)`` on the main kernel. Reductions across the
threads of a block use the shared-memory tree, or with ``warp_reduce`` register shuffles within each
warp (``__shfl_down_sync``) and one shared value per warp; across blocks, per-block partials and the
``<name>_combine`` kernel (deterministic, no atomics).

Block ids: CUDA limits ``gridDim.y``/``gridDim.z`` to 65535, so the host launches a one-dimensional
grid of all blocks and each kernel decodes the plan's up to three group indices from
``blockIdx.x`` (the first NDRange dimension fastest). Thread ids use ``threadIdx.x/y/z``.

The prelude supplies what NVRTC lacks without system headers: OpenCL's short unsigned type names
(``uchar``, ``uint``, ...) that the plan spells, the ``limits.h``/``math.h`` constants neutral
elements and user expressions may use, and the glibc spellings of ``INFINITY``/``NAN`` (the
``__builtin_inff()`` family, as bit patterns, so that the same source compiles under NVRTC and
under ``nvcc``, whose host headers define ``INFINITY`` as ``(__builtin_inff ())``).
Host code is in ``mdpoly.backends.cuda_host``.
"""

from __future__ import annotations

from dataclasses import replace

from mdpoly.backends.base import Backend, GeneratedCode
from mdpoly.backends.c_emit import CEmitter
from mdpoly.backends.c_files import c_file
from mdpoly.backends.cuda_host import host_function, host_preamble
from mdpoly.backends.opencl import KernelWriter, _Lines, _NoDialect, with_launch_check
from mdpoly.backends.resident import device_data
from mdpoly.ir.kernel import KernelPlan
from mdpoly.ir.target import TargetCaps

#: CUDA limits for every device of compute capability >= 5.0: 1024 threads per block, block
#: dims (1024, 1024, 64), 48 KiB of static ``__shared__`` memory per block. ``compute_units``
#: is a planning guess (an H100 has 132 SMs); a device query replaces it when tuning. ``async_copy``:
#: ``cp.async`` where the kernel is compiled for sm_80 or newer (a synchronous copy below; a device
#: query of compute capability < 8.0 turns it off).
CUDA_CAPS = TargetCaps(name="cuda", parallel_layers=2, simd=False, cores=132, max_work_group_size=1024,
                       max_work_item_sizes=(1024, 1024, 64), local_mem_bytes=48 * 1024, compute_units=132,
                       preferred_wg_multiple=32, is_gpu=True, launch_bounds=True,
                       async_copy=True, warp_shuffle=True)

_THREAD_AXES = ("x", "y", "z")

#: Names the plan and user expressions may use that NVRTC does not predefine: the C file
#: ``backends/c/cuda_kernel.h``, one line each.
CUDA_PRELUDE = tuple(c_file("cuda_kernel.h").splitlines())
#: The asynchronous copies of double-buffered tiles (``cp.async`` on sm_80+, a plain copy below):
#: ``backends/c/cuda_async.h``, after the prelude in sources whose plan has ``async_copy``.
CUDA_ASYNC = tuple(c_file("cuda_async.h").splitlines())


class CudaKernelWriter(KernelWriter):
    """CUDA C spellings over the shared work-group kernel writer."""

    kernel_head = 'extern "C" __global__ void'
    global_qual = ""
    local_qual = "__shared__"
    local_ptr_qual = ""
    barrier = "__syncthreads();"
    async_commit = "mdp_async_commit();"
    async_wait_prior = "mdp_async_wait_prior();"
    async_wait_all = "mdp_async_wait_all();"

    def async_copy(self, dst: str, src: str) -> str:
        return f"mdp_async_copy({dst}, {src});"

    def local_array(self, elem_type: str, name: str, n: int, align: int) -> str:
        if align <= 1:
            return f"{self.local_qual} {elem_type} {name}[{n}];"
        return f"{self.local_qual} __align__({align}) {elem_type} {name}[{n}];"

    def main_head(self) -> str:
        if not self.k.min_groups:
            return self.kernel_head
        return f"{self.kernel_head} __launch_bounds__({self.k.wg_size()}, {self.k.min_groups})"

    def local_id(self, g: int) -> str:
        return f"({self.ix})threadIdx.{_THREAD_AXES[g]}"

    def group_counts(self) -> list[str]:
        """C text of the number of blocks along each NDRange dimension (kernel scope)."""
        out: list[str] = []
        for group in self.k.grid_axes:
            out.append(" * ".join(self.nwg(self.k.dims[i]) for i in group))
        return out

    def group_id(self, g: int) -> str:
        counts = self.group_counts()
        below = " * ".join(f"({c})" for c in counts[:g])
        blk = f"({self.ix})blockIdx.x" if not below else f"(({self.ix})blockIdx.x / ({below}))"
        return blk if g == len(counts) - 1 else f"({blk} % ({counts[g]}))"

    def global_id0(self) -> str:
        return f"(({self.ix})blockIdx.x * blockDim.x + threadIdx.x)"

    def shuffle_setup(self, w: _Lines) -> None:
        pass   # registers: nothing to declare

    def shuffle_down(self, w: _Lines, n: int, elem_type: str, delta: str) -> None:
        w(f"const {elem_type} mdp_o{n} = __shfl_down_sync(0xffffffffu, mdp_v{n}, {delta});")

    def flat_local_id(self) -> str:
        return "(int)(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z))"

    def prelude(self, w: _Lines) -> None:
        for line in CUDA_PRELUDE:
            w(line)
        if self.k.async_copy:
            for line in CUDA_ASYNC:
                w(line)


def kernel_source(plan: KernelPlan) -> str:
    """The CUDA C source of ``plan``: its main kernel and, with partials, ``<name>_combine``."""
    return CudaKernelWriter(plan).source()


class CudaBackend(Backend[KernelPlan]):
    """CUDA C kernels compiled by NVRTC at first call, launched through the driver API; the
    generated file links with ``-lcuda -lnvrtc``."""

    name = "cuda"

    def __init__(self, caps: TargetCaps = CUDA_CAPS) -> None:
        self.caps = replace(caps, name="cuda")

    def render(self, plan: KernelPlan) -> GeneratedCode:
        source = kernel_source(plan)
        definition = host_function(plan, source)
        call = CEmitter(_NoDialect()).call(with_launch_check(plan))
        return GeneratedCode(name=plan.name, definition=definition, call=call,
                             headers=("cuda.h", "nvrtc.h", "stdio.h", "stdlib.h", "string.h"),
                             flags=("-lcuda", "-lnvrtc"), device_sources=((plan.name + ".cu", source),),
                             preamble=host_preamble(), device_data=device_data(plan))

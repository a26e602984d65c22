"""``mdpoly-cc`` parses what the compiler compiles (issue 9, item 12).

mdpoly preprocesses each source with the real compiler (``$MDPOLY_CC -E``) and every
preprocessing-relevant flag of the command line, in its order: ``-include``, ``-imacros``,
``-isystem`` after ``-I`` (gcc's search order, whatever the order on the command line), ``-std=``,
``-f`` flags that define macros (``-funsigned-char``), ``-O`` (``__OPTIMIZE__``) and the target's
own ``-fopenmp`` (``_OPENMP``). Each test source has its nest only when preprocessed like the
compiler compiles it, and an ``#error`` otherwise, so a wrong preprocessing shows as mdpoly's
fallback warning (the compile itself succeeds either way).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from mdpoly.cc_args import parse_compiler_args

ROOT = Path(__file__).resolve().parents[2]
MDPOLY_CC = [sys.executable, "-m", "mdpoly.cc_wrapper", "--all-nests"]

NEST = """
float a[1000], b[1000];
void f(void) {
  for (int i = 0; i < 1000; i++)
    a[i] = b[i] * SCALE;
}
"""


def _guarded(condition: str, what: str) -> str:
    return f"#if !({condition})\n#error \"{what}\"\n#endif\n#define SCALE 2.0f\n{NEST}"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MDPOLY_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return {**env, "MDPOLY_CC": "cc", **extra}


def _compile(tmp_path: Path, source: str, flags: list[str]) -> subprocess.CompletedProcess[str]:
    (tmp_path / "k.c").write_text(source)
    env = _env()
    return subprocess.run([*MDPOLY_CC, "--", *flags, "-c", "k.c", "-o", "k.o"], cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=300, check=False)


def _assert_transformed(proc: subprocess.CompletedProcess[str], tmp_path: Path) -> None:
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr and "loop nest parallelized" in proc.stderr, proc.stderr
    nm = subprocess.run(["nm", str(tmp_path / "k.o")], capture_output=True, text=True, check=True).stdout
    assert "GOMP_parallel" in nm   # the object is mdpoly's OpenMP code, not the original


def test_include_and_imacros(tmp_path: Path) -> None:
    (tmp_path / "pre.h").write_text("#define FROM_INCLUDE 1\n")
    (tmp_path / "mac.h").write_text("#define FROM_IMACROS 1\n")
    proc = _compile(tmp_path, _guarded("defined FROM_INCLUDE && defined FROM_IMACROS", "-include/-imacros lost"),
                    ["-include", "pre.h", "-imacros", "mac.h"])
    _assert_transformed(proc, tmp_path)


def test_isystem_is_searched_after_i_whatever_the_order(tmp_path: Path) -> None:
    for name, value in (("sys", 1), ("usr", 2)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "which.h").write_text(f"#define WHICH {value}\n")
    source = "#include <which.h>\n" + _guarded("WHICH == 2", "-I must come before -isystem")
    proc = _compile(tmp_path, source, ["-isystem", "sys", "-I", "usr"])
    _assert_transformed(proc, tmp_path)


@pytest.mark.parametrize(("flags", "condition"), [
    (["-std=gnu99"], "__STDC_VERSION__ == 199901L && !defined __STRICT_ANSI__"),
    (["-std=c11"], "__STDC_VERSION__ == 201112L && defined __STRICT_ANSI__"),
    (["-funsigned-char"], "defined __CHAR_UNSIGNED__"),
    (["-O2"], "defined __OPTIMIZE__"),
    (["-DX=1", "-UX", "-DX=3"], "X == 3"),
    ([], "defined _OPENMP"),   # mdpoly-cc compiles OpenMP output with -fopenmp: so it preprocesses
], ids=["std-gnu99", "std-c11", "unsigned-char", "optimize", "define-order", "openmp"])
def test_macro_defining_flags(tmp_path: Path, flags: list[str], condition: str) -> None:
    source = _guarded(condition, "preprocessed unlike the compiler")
    _assert_transformed(_compile(tmp_path, source, flags), tmp_path)


def test_mdpoly_receives_the_compilers_preprocessor(tmp_path: Path) -> None:
    script = tmp_path / "record.py"
    script.write_text("import json, shutil, sys\nopen('args.json', 'w').write(json.dumps(sys.argv[1:]))\n"
                      "shutil.copy(sys.argv[1], sys.argv[sys.argv.index('-o') + 1])\n")
    (tmp_path / "k.c").write_text("int k;\n")
    env = _env(MDPOLY_CC="cc -w", MDPOLY_COMMAND=f"{sys.executable} {script}")
    subprocess.run([sys.executable, "-m", "mdpoly.cc_wrapper", "-O2", "-std=c11", "-Iinc", "-include", "p.h",
                    "-DA=1", "-MD", "-MF", "k.d", "-c", "k.c", "-o", "k.o", "-Wl,-z,now", "-lm"],
                   cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120, check=False)
    args = json.loads((tmp_path / "args.json").read_text())
    pre = shlex.split(args[args.index("--preprocessor") + 1])
    assert pre == ["cc", "-w", "-E", "-fopenmp", "-O2", "-std=c11", "-Iinc", "-include", "p.h", "-DA=1", "-x", "c"]


# {{{ which flags reach the preprocessing command (mdpoly.cc_args)

def test_preprocess_flags_keep_order_and_drop_outputs() -> None:
    cmd = parse_compiler_args([
        "-O2", "-std=gnu11", "-I", "inc", "-Iother", "-DN=4", "-UX", "-isystem", "sys", "-include", "pre.h",
        "-imacros", "m.h", "-iquote", "q", "-idirafter", "late", "-march=native", "-m32", "-fopenmp", "--sysroot=/s",
        "-target", "x86_64-linux-gnu", "-c", "src/a.c", "b.c", "x.o", "lib.a", "-o", "build/a.o", "-MD", "-MF", "a.d",
        "-MT", "a.o", "-MMD", "-MP", "-Wp,-MD,dep.d,-DQ=1", "-Wp,-MMD,x.d", "-Wl,-rpath,x", "-lm", "-L/lib", "-xc",
        "-Xpreprocessor", "-MD", "-Xpreprocessor", "-DZ", "-Xlinker", "--as-needed", "-save-temps", "-undef",
        "-P", "-C", "-dD", "-fdirectives-only",
    ])
    assert cmd.preprocess_flags == (
        "-O2", "-std=gnu11", "-I", "inc", "-Iother", "-DN=4", "-UX", "-isystem", "sys", "-include", "pre.h",
        "-imacros", "m.h", "-iquote", "q", "-idirafter", "late", "-march=native", "-m32", "-fopenmp", "--sysroot=/s",
        "-target", "x86_64-linux-gnu", "-Wp,-DQ=1", "-Xpreprocessor", "-DZ", "-undef",
    )
    assert cmd.sources == ("src/a.c", "b.c")

# }}}

"""Tests for the ``mdpoly-cc`` plumbing, with stand-ins for mdpoly so they run without it.

The stand-ins replace only the mdpoly step (through ``MDPOLY_COMMAND``): one copies the source
and appends a function that calls the OpenMP runtime (so a link without ``-fopenmp`` fails),
one always fails (so the wrapper must fall back to the original source with a warning).
What is tested is the wrapper: arguments, include paths, output names, dependency files,
exit statuses.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

import pytest
from e2e_harness import child_env, run_program, run_step, write_cc_shim

COPY_STANDIN = '''
import sys
args = sys.argv[1:]
out = args[args.index("-o") + 1]
text = open(args[0]).read()
text += "\\n#include <omp.h>\\nint mdpoly_standin_threads(void) { return omp_get_max_threads(); }\\n"
open(out, "w").write(text)
'''

HEADER = "#define SCALE 3\n"
MAIN = '''#include <stdio.h>
#include "scale.h"
int mdpoly_standin_threads(void);
int main(void) { printf("%d %d\\n", SCALE * VALUE, mdpoly_standin_threads() > 0); return 0; }
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    src = tmp_path / "src"
    (src / "inc").mkdir(parents=True)
    (src / "inc" / "scale.h").write_text(HEADER)
    (src / "main.c").write_text(MAIN)
    return tmp_path


def wrapper_env(project: Path, standin: str) -> dict[str, str]:
    script = project / "standin.py"
    script.write_text(standin)
    return child_env(MDPOLY_COMMAND=f"{sys.executable} {script}")


def test_compile_without_o_writes_object_in_cwd_and_links_openmp(project: Path) -> None:
    shim = write_cc_shim(project)
    env = wrapper_env(project, COPY_STANDIN)
    build = project / "build"
    build.mkdir()
    run_step([str(shim), "-O2", "-Isrc/inc", "-DVALUE=7", "-MMD", "-MP", "-c", "src/main.c"],
             cwd=project, env=env)
    # -c without -o: the object lands in the cwd under the source's name, as with cc.
    assert (project / "main.o").is_file()
    deps = (project / "main.d").read_text()
    assert "src/main.c" in deps and "mdpoly-cc-" not in deps
    run_step([str(shim), "main.o", "-o", "build/app"], cwd=project, env=env)
    assert run_program(build / "app", cwd=project) == "21 1\n"


def test_compile_and_link_in_one_step_with_quoted_include(project: Path) -> None:
    shim = write_cc_shim(project)
    env = wrapper_env(project, COPY_STANDIN)
    (project / "src" / "scale.h").write_text("#define SCALE 5\n")   # shadows inc/scale.h for main.c
    (project / "src" / "local.h").write_text("#define VALUE 2\n")
    (project / "src" / "main.c").write_text('#include "local.h"\n' + MAIN)
    run_step([str(shim), "-I", "src/inc", "src/main.c", "-o", "app"], cwd=project, env=env)
    # "scale.h" resolves next to main.c first, exactly as for the untransformed source.
    assert run_program(project / "app") == "10 1\n"


def test_failing_mdpoly_falls_back_with_warning(project: Path) -> None:
    shim = write_cc_shim(project)
    env = wrapper_env(project, "import sys\nprint('cannot parse', file=sys.stderr)\nsys.exit(3)\n")
    (project / "src" / "main.c").write_text(MAIN.replace("mdpoly_standin_threads() > 0", "1"))
    proc = run_step([str(shim), "-Isrc/inc", "-DVALUE=1", "-c", "src/main.c", "-o", "m.o"], cwd=project, env=env)
    assert "mdpoly-cc: warning:" in proc.stderr and "compiling it unchanged" in proc.stderr
    run_step([str(shim), "m.o", "-o", "app"], cwd=project, env=env)
    assert run_program(project / "app") == "3 1\n"


def test_exit_status_is_the_compilers(project: Path) -> None:
    shim = write_cc_shim(project)
    env = wrapper_env(project, COPY_STANDIN)
    (project / "bad.c").write_text("int main(void) { return undeclared; }\n")
    with pytest.raises(AssertionError, match="exit 1"):
        run_step([str(shim), "-c", "bad.c"], cwd=project, env=env)


def test_queries_and_preprocessing_pass_through(project: Path) -> None:
    shim = write_cc_shim(project)
    env = wrapper_env(project, "import sys\nsys.exit('mdpoly must not run')\n")
    assert run_step([str(shim), "--version"], env=env).stdout
    deps = run_step([str(shim), "-MM", "-Isrc/inc", "src/main.c"], cwd=project, env=env).stdout
    assert deps.startswith("main.o: src/main.c src/inc/scale.h")
    pre = run_step([str(shim), "-E", "-Isrc/inc", "-DVALUE=4", "src/main.c"], cwd=project, env=env).stdout
    assert "3 * 4" in pre and "mdpoly_standin_threads" in pre


def test_mdpoly_options_before_double_dash(project: Path) -> None:
    shim = write_cc_shim(project)
    script = project / "record.py"
    script.write_text("import json, shutil, sys\nopen(sys.argv[1] + '.args', 'w').write(json.dumps(sys.argv[2:]))\n"
                      "shutil.copy(sys.argv[1], sys.argv[sys.argv.index('-o') + 1])\n")
    env = child_env(MDPOLY_COMMAND=f"{sys.executable} {script}", MDPOLY_FLAGS="-q", MDPOLY_CC="cc")
    (project / "k.c").write_text("int k(void) { return N; }\n")
    run_step([str(shim), "--all-nests", "--", "-DN=3", "-I", "inc", "-c", "k.c"], cwd=project, env=env)
    recorded = json.loads((project / "k.c.args").read_text())
    # The real compiler preprocesses, with the target's and the command's flags in their order;
    # mdpoly-cc turns tuning off first; MDPOLY_FLAGS and wrapper options come after and may turn it on
    assert recorded[0] == "-o" and recorded[2] == "--preprocessor"
    assert shlex.split(recorded[3]) == ["cc", "-E", "-fopenmp", "-DN=3", "-I", "inc", "-x", "c"]
    assert recorded[4:] == ["--no-tune", "-q", "--all-nests"]
    assert (project / "k.o").is_file()

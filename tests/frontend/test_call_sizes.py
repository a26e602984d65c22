"""Sizes from the translation unit (``mdpoly.frontend.call_sizes``): constants the callers pass."""

from __future__ import annotations

HEAD = "#define NI 40\n#define NJ 50\nenum { NK = 60 };\n"


def sizes(analyze, text: str) -> dict[str, int | None]:  # type: ignore[no-untyped-def]
    (n,) = [x for x in analyze(HEAD + text).nests if x.function == "kernel"]
    assert n.mdh is not None, n.kept
    return dict(n.mdh.params)


def test_constants_and_initialised_locals_reach_the_kernel(analyze):
    got = sizes(analyze, """
void kernel(int ni, int nj, int nk, double *A) {
  for (int i = 0; i < ni; i++) for (int j = 0; j < nj * 1; j++) for (int k = 0; k < nk; k++) A[0] += i + j + k;
}
int main(void) { int ni = NI; int nj = NJ; static double A[1]; kernel(ni, nj, NK, A); kernel(NI, nj, 60, A); return 0; }
""")
    assert got == {"ni": 40, "nj": 50, "nk": 60}


def test_disagreeing_or_reassigned_sizes_stay_unknown(analyze):
    got = sizes(analyze, """
void kernel(int ni, int nj, int nk, double *A) {
  for (int i = 0; i < ni; i++) for (int j = 0; j < nj; j++) for (int k = 0; k < nk; k++) A[0] += i + j + k;
}
int main(int argc, char **argv) {
  int ni = NI; int nj = NJ; static double A[1];
  nj = argc;
  kernel(ni, nj, 3, A); kernel(ni, 50, 4, A); return 0; }
""")
    assert got == {"ni": 40, "nj": None, "nk": None}


def test_a_function_whose_address_is_taken_is_not_guessed(analyze):
    got = sizes(analyze, """
void kernel(int n, double *A) { for (int i = 0; i < n; i++) A[i] = i; }
void (*hook)(int, double *) = kernel;
int main(void) { static double A[9]; kernel(9, A); return 0; }
""")
    assert got == {"n": None}


def test_size_option_overrides(analyze):
    (n,) = [x for x in analyze(HEAD + """
void kernel(int n, double *A) { for (int i = 0; i < n; i++) A[i] = i; }
int main(void) { static double A[9]; kernel(9, A); return 0; }
""", sizes=(("n", 7),)).nests if x.function == "kernel"]
    assert dict(n.mdh.params) == {"n": 7}

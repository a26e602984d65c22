"""Syntax errors say what was expected, located where it is missing (issue 25, item 7): at the end
of the token before the offending one, as gcc and clang locate a missing ';', through the
preprocessor's line markers (a header before the error does not shift it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mdpoly.cli import main

CASES = [
    # (source, expected "file:line:col: error: message")
    ("#include <stdio.h>\n\nint main(void) {\n    int x = 3;\n    int z = x + 4\n    printf(\"%d\\n\", z);\n"
     "    return 0;\n}\n", "in.c:5:18: error: expected ';' before 'printf'"),
    ("int f(int a) {\n  return (a + 1;\n}\n", "in.c:2:16: error: expected ')' before ';'"),
    ("struct s { int a }\nint f(void) { return 0; }\n", "in.c:1:17: error: expected ';' before '}'"),
    ("int f(int a) {\n  if (a) { return 1;\n}\n", "in.c:3:2: error: expected '}' at end of input"),
    ("int f(int a) {\n  int b = a +;\n  return b;\n}\n", "in.c:2:14: error: expected an expression before ';'"),
    ("float a[10];\nvoid f(void) {\n  for (int i = 0; i < 10; i++\n    a[i] = 0;\n}\n",
     "in.c:3:30: error: expected ')' before 'a'"),
]


@pytest.mark.parametrize("source,expected", CASES, ids=["semicolon", "paren", "struct", "eof", "expression", "for"])
def test_syntax_error_says_what_was_expected_where(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                   capsys: pytest.CaptureFixture[str], source: str,
                                                   expected: str) -> None:
    (tmp_path / "in.c").write_text(source)
    monkeypatch.chdir(tmp_path)
    assert main(["in.c", "-o", "out.c", "--no-tune"]) == 1
    err = capsys.readouterr().err
    assert err.startswith(expected + " [bad-input]\n"), err
    assert not (tmp_path / "out.c").exists()


def test_the_caret_points_after_the_token_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "in.c").write_text(CASES[0][0])
    monkeypatch.chdir(tmp_path)
    main(["in.c", "-o", "out.c", "--no-tune"])
    lines = capsys.readouterr().err.splitlines()
    assert lines[1] == "    int z = x + 4" and lines[2] == " " * 17 + "^"

"""Lexing is linear time for every token, the first included.

xDSL 0.74's string-literal pattern backtracks exponentially on an
unterminated string; `cortex.ir.LinearTimeLexer` replaces it. Each test has a
time limit enforced by pytest-timeout, not a measured speed: a regression
shows as a test stopped at its limit, never as a CI run that hangs.
"""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.utils.exceptions import ParseError

import cortex
from cortex.errors import CortexError
from cortex.ir import STRING_LITERAL
from cortex.tools import cortex_opt, cortex_run

# The first token is an unterminated string: xDSL lexes it while the parser
# is constructed, before any later fix-up of the lexer can apply.
AT_START = '"unc.func @f(%frame: tensor<64x64x3xui8>, %x: f32) -> f32 {\n}\n'
IN_MIDDLE = 'func.func @f() {\n  %0 = "arith.constant"() <{value = 1.0 : f32}> {name = "short} : () -> f32\n  func.return\n}\n'
AT_END = 'func.func @f() {\n  func.return\n}\n"' + "abc(%frame: tensor<64x64x3xui8>, %x: f32) -> f32 {"

CASES = {
    "start": (AT_START, 1, 1),
    "middle": (IN_MIDDLE, 2, 57),
    "end": (AT_END, 4, 1),
}
LIMIT = 10  # seconds; the exponential pattern takes minutes on each of these


def write(tmp_path, text: str) -> str:
    path = tmp_path / "input.mlir"
    path.write_text(text)
    return str(path)


@pytest.mark.timeout(LIMIT)
@pytest.mark.parametrize("where", CASES)
def test_cortex_opt_locates_an_unterminated_string(where, tmp_path, capsys):
    text, line, col = CASES[where]
    path = write(tmp_path, text)
    assert cortex_opt.main([path]) == 1
    err = capsys.readouterr().err
    assert f"{path}:{line}:{col}: error: unterminated string literal" in err
    assert "internal error" not in err and "Traceback" not in err


@pytest.mark.timeout(LIMIT)
@pytest.mark.parametrize("where", CASES)
def test_parse_api_locates_an_unterminated_string(where):
    text, line, col = CASES[where]
    with pytest.raises((ParseError, CortexError), match="unterminated string literal") as info:
        cortex.parse(text)
    assert f"<string>:{line}:{col}" in str(info.value)


@pytest.mark.timeout(LIMIT)
def test_cortex_run_pipeline_with_an_unterminated_string(tmp_path, capsys):
    path = write(tmp_path, AT_START)
    assert cortex_run.main(["--pipeline", path, "--frames", "1"]) == 1
    assert "unterminated string literal" in capsys.readouterr().err


@pytest.mark.timeout(LIMIT)
def test_bad_escape_is_its_own_diagnostic(tmp_path, capsys):
    path = write(tmp_path, 'func.func @f() {\n  %0 = "test.op"() {name = "a\\qb"} : () -> f32\n}\n')
    assert cortex_opt.main([path]) == 1
    assert f"{path}:2:30: error: invalid escape sequence in string literal" in capsys.readouterr().err


@pytest.mark.timeout(30)
@pytest.mark.skipif(shutil.which("xdsl-opt") is None, reason="xdsl-opt not installed")
def test_xdsl_opt_with_the_cortex_plugin_does_not_hang(tmp_path):
    """Plain xdsl-opt loads our universe, which gives its lexer the linear pattern.

    xdsl-opt itself prints a traceback for a ParseError raised while its
    parser is constructed (xDSL's behaviour, not ours): only the time is ours.
    """
    path = write(tmp_path, AT_START)
    done = subprocess.run([shutil.which("xdsl-opt"), path], capture_output=True, text=True, timeout=25)
    assert done.returncode != 0
    assert "closing string literal" in done.stderr


ESCAPE = st.sampled_from(['\\"', "\\n", "\\t", "\\\\", "\\4f", "\\A0"])
PLAIN = st.characters(blacklist_characters='"\\\n\v\f', blacklist_categories=("Cs",))


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(PLAIN, ESCAPE), max_size=14))  # xDSL's pattern is exponential in this
def test_string_pattern_accepts_exactly_xdsls_strings(pieces):
    """The linear pattern accepts the strings xDSL's does (on inputs short enough for it)."""
    body = "".join(pieces)
    xdsl = re.compile(r'"(?:[^"\\\n\v\f]+|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*"')
    for text in ('"' + body + '"', '"' + body, '"' + body + "\n"):
        ours, theirs = STRING_LITERAL.match(text), xdsl.match(text)
        assert (ours and ours.end()) == (theirs and theirs.end()), text


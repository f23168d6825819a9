"""A Ray address's port is 1..65535: 65535 is read, 65536 and above are one line before any connection.

A port past the range reaches `socket.create_connection`, which raises OverflowError (a traceback,
not a CortexError). Nothing here starts Ray or opens a connection: the edges of the range, for
every address form that carries a port."""

from __future__ import annotations

import pytest

pytest.importorskip("ray")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from cortex.errors import CortexError  # noqa: E402
from cortex.runtime.engines.ray import RayAddress, start_ray  # noqa: E402

FORMS = ["127.0.0.1:{}", "ray://127.0.0.1:{}", "[::1]:{}", "ray://[::1]:{}", "head-node:{}"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("port", [1, 65535])
def test_the_ends_of_the_range_are_read(form, port):
    assert RayAddress.parse(form.format(port)).port == port


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("port", [0, 65536, 65537, 2**16 + 6379, 10**6])
def test_a_port_outside_the_range_is_one_line(form, port):
    with pytest.raises(CortexError) as info:
        start_ray(form.format(port))
    text = str(info.value)
    assert "the port must be a number from 1 to 65535" in text and "\n" not in text


@settings(max_examples=40, deadline=None, derandomize=True)
@given(port=st.integers(65536, 2**32), form=st.sampled_from(FORMS))
def test_no_port_beyond_65535_is_read(port, form):
    with pytest.raises(CortexError, match="from 1 to 65535"):
        RayAddress.parse(form.format(port))

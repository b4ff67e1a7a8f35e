"""The benchmark report's ratio column: enough digits to see which side of a target."""

from __future__ import annotations

import pytest

from bench.report import _ratio
from bench.results import Row, faster


@pytest.mark.parametrize(
    ("ours", "shown"),
    [
        (4.0, "0.40"),  # far from the 0.50 target: two decimals
        (4.97, "0.497"),
        (5.02, "0.502"),
        (5.001, "0.5001"),  # three would print the target itself
        (4.9996, "0.49996"),
    ],
)
def test_a_ratio_near_its_target_shows_which_side_it_is_on(ours: float, shown: str) -> None:
    row = Row("A", "decode", "µs/msg", 10.0, ours, faster(2))
    assert _ratio(row) == shown
    assert row.met is (ours / 10.0 <= 0.5)
    assert (float(shown) <= 0.5) is row.met

import pytest

from memviz.core.search import largest_true


@pytest.mark.parametrize("limit, lo, hi, expected", [(7, 0, 20, 7), (25, 0, 20, 20), (-1, 0, 20, -1), (1, 1, 9, 1),
                                                     (0, 1, 9, 0), (9, 1, 9, 9)])
def test_largest_true_finds_the_boundary_of_a_monotone_test(limit, lo, hi, expected):
    calls = []

    def ok(n: int) -> bool:
        calls.append(n)
        return n <= limit

    assert largest_true(ok, lo, hi) == expected
    assert len(calls) <= 2 + (hi - lo).bit_length()  # bisection, not a scan

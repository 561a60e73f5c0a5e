import pytest

from memviz.core.errors import InputError
from memviz.core.units import GB, GiB, Unit, format_bytes, parse_bytes, to_unit


def test_gib_and_gb_are_different_units():
    assert GiB == 2**30 and GB == 10**9
    assert to_unit(GiB, Unit.GB) == pytest.approx(1.073741824)
    assert format_bytes(GiB) == "1.00 GiB" and format_bytes(GB, Unit.GB) == "1.00 GB"


def test_parse_bytes():
    assert parse_bytes("24GiB") == 24 * GiB
    assert parse_bytes("80 GB") == 80 * GB
    assert parse_bytes("512MiB") == 512 * 2**20
    with pytest.raises(InputError):
        parse_bytes("lots")
    with pytest.raises(InputError):
        parse_bytes("-1GB")
    assert parse_bytes("262144000") == 262_144_000  # a plain byte count
    with pytest.raises(InputError, match="'64' has no unit: write e.g. '64GiB' or '64GB'"):
        parse_bytes("64")  # 64 GiB of host RAM meant: never read as 64 bytes


def test_a_difference_that_rounds_to_zero_has_no_sign():
    assert format_bytes(-19_333, Unit.GB, 3) == "0.000 GB" and format_bytes(19_333, Unit.GB, 3) == "0.000 GB"
    assert format_bytes(-2 * 10**6, Unit.GB, 3) == "-0.002 GB" and format_bytes(-1.5 * GiB, Unit.GiB) == "-1.50 GiB"

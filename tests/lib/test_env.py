"""The environment's number readers (talorys/lib/env.py): a bad value stops the start with a
message naming the variable and what it holds, rather than a bare ValueError or a default."""

from __future__ import annotations

import pytest

from talorys.lib.env import env_float, env_int


@pytest.mark.parametrize(("raw", "read"), [("", 10.0), ("  ", 10.0), ("15", 15.0), (" 2.5 ", 2.5)])
def test_env_float_takes_what_env_int_took_and_decimals(monkeypatch, raw, read):
    monkeypatch.setenv("TALORYS_TEST_SECONDS", raw)
    assert env_float("TALORYS_TEST_SECONDS", 10) == read
    assert isinstance(env_float("TALORYS_TEST_SECONDS", 10), float)


def test_env_float_unset_is_the_default_as_a_float(monkeypatch):
    monkeypatch.delenv("TALORYS_TEST_SECONDS", raising=False)
    assert env_float("TALORYS_TEST_SECONDS", 10) == 10.0
    assert isinstance(env_float("TALORYS_TEST_SECONDS", 10), float)


@pytest.mark.parametrize("raw", ["ten", "1,5", "nan", "inf", "-inf"])
def test_env_float_refuses_a_bad_value_by_name(monkeypatch, raw):
    monkeypatch.setenv("TALORYS_TEST_SECONDS", raw)
    with pytest.raises(ValueError) as refused:
        env_float("TALORYS_TEST_SECONDS", 10)
    assert str(refused.value) == f"TALORYS_TEST_SECONDS must be a number, got {raw!r}"


def test_env_int_refuses_a_decimal_by_name(monkeypatch):
    monkeypatch.setenv("TALORYS_TEST_COUNT", "2.5")
    with pytest.raises(ValueError) as refused:
        env_int("TALORYS_TEST_COUNT", 1)
    assert str(refused.value) == "TALORYS_TEST_COUNT must be a whole number, got '2.5'"

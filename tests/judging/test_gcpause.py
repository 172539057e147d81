import gc

import pytest

from judgekit.judging.gcpause import paused_gc


@pytest.fixture(autouse=True)
def _restore_gc():
    was = gc.isenabled()
    yield
    (gc.enable if was else gc.disable)()


def test_the_collector_is_off_inside_and_on_again_after():
    gc.enable()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_that_was_off_stays_off():
    gc.disable()
    with paused_gc():
        assert not gc.isenabled()
    assert not gc.isenabled()


def test_nested_and_raising_uses_leave_it_to_the_outermost():
    gc.enable()

    @paused_gc()
    def inner():
        assert not gc.isenabled()
        raise KeyError("x")

    with paused_gc():
        with pytest.raises(KeyError):
            inner()
        assert not gc.isenabled()  # the inner use found it off and left it off
    assert gc.isenabled()

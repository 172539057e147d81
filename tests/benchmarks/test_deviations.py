"""The list of departures from the authors' code in force: guards always, other options when set."""

from pydantic import BaseModel

from judgekit.benchmarks.deviations import deviation_lines, deviations, ours


class _Opts(BaseModel):
    plain: int = 3
    strict_match: bool = ours(False, reference="matches anywhere in the reply", description="match the answer only")
    rounds: int = ours(3, reference="three rounds", description="review rounds")
    mask_quotes: bool = ours(True, reference="reads quoted markers too", guard=True, description="ignore quotes")


def test_defaults_list_only_the_guards():
    got = deviations(_Opts())
    assert [(d["option"], d["kind"]) for d in got] == [("mask_quotes", "injection guard")]
    assert got[0]["reference"] == "reads quoted markers too" and got[0]["judgekit"] == "ignore quotes"


def test_set_options_are_listed_and_a_guard_turned_off_is_not():
    got = deviations(_Opts(strict_match=True, rounds=2, mask_quotes=False, plain=9))
    assert [(d["option"], d["value"], d["kind"]) for d in got] == [("strict_match", True, "option"),
                                                                   ("rounds", 2, "option")]
    # a value equal to the default is the reference's rule, whatever way it was given
    assert [d["option"] for d in deviations(_Opts(rounds=3))] == ["mask_quotes"]


def test_lines_name_option_value_and_reference():
    lines = deviation_lines(deviations(_Opts(rounds=2)) + [{"kind": "dropped parameter", "note": "model x: y"}])
    assert lines[0] == "option rounds = 2 (the authors' code: three rounds)"
    assert lines[-1] == "model x: y"
    assert deviations(None) == []

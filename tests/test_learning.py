import pytest

from riskcore.learning.dice import DiceTables, agreement, exact_choices, learn


def test_exact_choices_match_known_cases():
    exact = exact_choices(6)
    assert exact[(2, 1)][0] == 0  # one die against one loses on average: stop
    assert exact[(5, 1)][0] == 3  # many against one: roll three
    assert exact[(5, 3)][1][3] == 2  # the defender rolls two against three when it can


def _agree(n, seed=7):
    tables, _ = learn(n, seed)
    ag = agreement(tables)
    return ag[ag.side == "attacker"].agree.mean(), ag[ag.side != "attacker"].agree.mean()


def test_learning_moves_toward_the_exact_choices():
    short, long_ = _agree(300), _agree(6000)
    assert long_[0] > short[0] and long_[1] >= short[1]
    assert long_[0] >= 0.6 and long_[1] >= 0.9


@pytest.mark.slow
def test_long_run_agreement():
    attacker, defender = _agree(200_000)
    assert attacker >= 0.6 and defender >= 0.9


def test_tables_round_trip(tmp_path):
    tables, curve = learn(500, 1)
    tables.save(tmp_path / "t.json")
    again = DiceTables.load(tmp_path / "t.json")
    assert again.q_att == tables.q_att and again.n_def == tables.n_def
    assert len(curve) == 500
    with pytest.raises(ValueError, match="cannot read dice tables"):
        (tmp_path / "bad.json").write_text("{}")
        DiceTables.load(tmp_path / "bad.json")


def test_regret_is_never_negative_and_zero_where_the_choice_is_optimal():
    ag = agreement(learn(2000, 3)[0])
    assert (ag.regret > -1e-9).all() and (ag.thumb_regret > -1e-9).all()
    assert ag[ag.agree].regret.abs().max() < 1e-9
    assert (ag[~ag.agree].regret > 0).any()
    # the rule of thumb never errs for the defender: rolling two is optimal whenever it can
    assert ag[ag.side != "attacker"].thumb_agree.all()

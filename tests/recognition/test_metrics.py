import numpy as np
import pandas as pd
import pytest

from riskcore.recognition.metrics import bootstrap_ci, card_metrics, convergence_points, explanation_top1, paired


def test_card_metrics_on_hand_cases():
    probs = np.array([[0.7, 0.2, 0.1],     # right and sure
                      [0.4, 0.4, 0.2],     # a tie for first: top-1 split
                      [0.1, 0.3, 0.6]])    # wrong: true card last
    m = card_metrics(probs, np.array([0, 1, 0]))
    assert m.top1.tolist() == [1.0, 0.5, 0.0]
    assert m.spread.tolist() == [1, 2, 1]
    assert m["rank"].tolist() == [1.0, 1.5, 3.0]
    assert m.log_loss[0] == pytest.approx(-np.log(0.7))
    assert m.brier[0] == pytest.approx(0.3**2 + 0.2**2 + 0.1**2)


def test_top3_splits_ties_at_the_boundary():
    probs = np.array([[0.3, 0.2, 0.2, 0.2, 0.1]])
    assert card_metrics(probs, np.array([2])).top3[0] == pytest.approx(2 / 3)


def test_convergence_point_is_where_it_stays_right():
    df = pd.DataFrame({"game_id": 0, "player": 0, "point": [0.25, 0.5, 0.75, 1.0],
                       "correct": [True, False, True, True]})
    assert convergence_points(df).iloc[0] == 0.75
    df["correct"] = [True, True, True, False]
    assert np.isnan(convergence_points(df).iloc[0])


def test_bootstrap_interval_brackets_the_mean():
    values = np.random.default_rng(0).normal(1.0, 1.0, 400)
    lo, hi = bootstrap_ci(values, np.random.default_rng(1))
    assert lo < values.mean() < hi and hi - lo < 0.4


def test_paired_comparison_detects_a_real_difference():
    rng = np.random.default_rng(0)
    rows = [{"setting": s, "game_id": g, "point": 0.5, "top1": float(rng.random() < p)}
            for g in range(300) for s, p in (("a", 0.7), ("b", 0.3))]
    res = paired(pd.DataFrame(rows), "a", "b")
    assert res.difference[0] > 0.2 and res.ci_low[0] > 0 and res.p_value[0] < 0.01


def test_the_references_reading_takes_the_top_explanations_card_ties_split():
    card_of = np.array([0, 0, 0, 1, 2])  # card 0 has three explanations, cards 1 and 2 one each
    probs = np.array([[0.2, 0.2, 0.2, 0.3, 0.1],   # card 0 leads at the card level, card 1 at the explanation level
                      [0.3, 0.1, 0.0, 0.3, 0.3],   # three explanations tie: one of card 0, one of 1, one of 2
                      [0.25, 0.25, 0.1, 0.2, 0.2]])  # two tied explanations, both of card 0
    true = np.array([0, 0, 0])
    assert explanation_top1(probs, card_of, true).tolist() == [0.0, pytest.approx(1 / 3), 1.0]
    assert explanation_top1(probs, card_of, np.array([1, 2, 1])).tolist() == [1.0, pytest.approx(1 / 3), 0.0]

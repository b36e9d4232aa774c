"""The reference's scheme through the pipeline: its own features and prior, and the game-clock checkpoints
(shares of the game's turn ends, setup turns included) beside the observation-window ones."""

import numpy as np
import pytest

from riskcore.cli import main
from riskcore.db import query
from riskcore.recognition.features import load_features
from riskcore.recognition.pipeline import CHECKPOINTS, ensure_features, evaluate, recognize, turn_ends
from riskcore.recognition.recognisers import Recogniser

KHAN = Recogniser.from_spec("phatt:scheme=khan2013")
SIMPLE = Recogniser.from_spec("phatt")


@pytest.fixture(scope="module")
def recognised(small_run):
    ensure_features("mixed", "cards6", small_run, workers=1, progress=False)
    for rec in (KHAN, SIMPLE):
        recognize("mixed", rec, data_dir=small_run, progress=False)
    evaluate("mixed", small_run, n_boot=50, clocks=("window", "game"))
    return small_run


def _posteriors(data, setting, kind):
    return query("SELECT game_id, player, point, n_seen, explanation, prob FROM posteriors WHERE run = 'mixed' "
                 "AND setting = ? AND point_kind = ? ORDER BY game_id, player, point, explanation",
                 [setting, kind], data)


def test_khan2013_spec_and_its_errors():
    assert Recogniser.from_spec("phatt:scheme=khan2013:variant=head").setting == "phatt:scheme=khan2013:variant=head"
    assert Recogniser.from_spec("phatt:scheme=khan2013:variant=thesis").setting == "phatt:scheme=khan2013"
    assert KHAN.view == SIMPLE.view == "full"
    assert Recogniser.from_spec("phatt:view=turns").setting == "phatt:scheme=simple:c=1:i=0.98:view=turns"
    with pytest.raises(ValueError, match="view is one of"):
        Recogniser.from_spec("phatt:view=setup")
    with pytest.raises(ValueError, match="variant is one of .* and belongs to scheme=khan2013"):
        Recogniser.from_spec("phatt:scheme=simple:variant=head")
    with pytest.raises(ValueError, match="variant is one of"):
        Recogniser.from_spec("phatt:scheme=khan2013:variant=2012")


def test_turn_ends_count_setup_turns_and_every_later_turn_but_the_winning_one(small_run):
    ends = turn_ends("mixed", small_run).groupby("game_id").size()
    places = query("SELECT game_id, count(*) AS n FROM events WHERE run = 'mixed' AND kind = 'place' AND turn = 0 "
                   "GROUP BY game_id ORDER BY game_id", None, small_run).set_index("game_id").n
    games = query("SELECT game_id, turns, winner >= 0 AS won FROM games WHERE run = 'mixed' ORDER BY game_id", None,
                  small_run).set_index("game_id")
    assert games.won.any() and (ends == places + games.turns - games.won.astype(int)).all()


def test_game_clock_rows(recognised):
    won_in = query("SELECT game_id, turn FROM events WHERE run = 'mixed' AND kind = 'win'", None,
                   recognised).set_index("game_id").turn
    for rec in (KHAN, SIMPLE):
        game = _posteriors(recognised, rec.setting, "game")
        assert sorted(np.round(game.point.unique(), 2)) == list(CHECKPOINTS)
        # at the end of the game clock a player has seen every observation made before the winning turn
        end = game[np.isclose(game.point, 1.0) & (game.explanation == 0)].set_index(["game_id", "player"]).n_seen
        f = load_features("mixed", "cards6", recognised)
        turn = f.obs.turn.to_numpy()
        before = f.obs[turn < f.obs.game_id.map(won_in).fillna(np.inf).to_numpy()]
        seen = before.groupby(["game_id", "player"]).size()
        assert (end == seen.reindex(end.index).fillna(0).astype(int)).all()
    # a tenth of the game is still setup: the setup placements are observations already
    for rec in (KHAN, SIMPLE):
        early = _posteriors(recognised, rec.setting, "game")
        early = early[np.isclose(early.point, 0.1)]
        assert (early.n_seen > 0).all() and np.allclose(early.prob.to_numpy().reshape(-1, 12).sum(axis=1), 1)


def test_khan2013_prior_is_uniform_over_explanations():
    hyp = _hyp()
    prior = SIMPLE.prior(hyp)
    assert prior.max() / prior.min() == pytest.approx(4.0)  # the cards' prior: a "+ third" card's 4 share it
    assert np.allclose(KHAN.prior(hyp), 1 / 12) and np.allclose(prior, hyp.prior)


def _hyp():
    from riskcore.engine.board import load_board
    from riskcore.recognition.hypotheses import build_hypotheses

    return build_hypotheses(load_board("classic"))


def test_metrics_per_clock_and_the_cli(recognised, capsys):
    m = query("SELECT DISTINCT clock, setting FROM recognition_metrics WHERE run = 'mixed'", None, recognised)
    assert {(c, s) for c, s in zip(m.clock, m.setting)} >= {("window", KHAN.setting), ("game", KHAN.setting)}
    assert main(["evaluate", "--run", "mixed", "--bootstrap", "20", "--checkpoints", "game",
                 "--data-dir", str(recognised)]) == 0
    assert "share of the game's turn ends" in capsys.readouterr().out


def test_a_chunks_turn_ends_are_the_whole_runs_for_its_games(recognised):
    whole = turn_ends("mixed", recognised)
    part = turn_ends("mixed", recognised, games=(3, 7))
    assert len(part) > 0 and set(part.game_id) == set(range(3, 8))
    assert part.reset_index(drop=True).equals(whole[whole.game_id.between(3, 7)].reset_index(drop=True))

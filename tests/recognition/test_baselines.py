"""The baselines: the placement-count yardstick on a hand-made game and on a run."""

import numpy as np

from riskcore.engine.board import load_board
from riskcore.recognition.baselines import placement_posterior
from riskcore.recognition.features import extract_game, features_from_parts, load_features
from riskcore.recognition.hypotheses import Explanation, Hypotheses
from riskcore.recognition.metrics import card_metrics
from riskcore.recognition.pipeline import ensure_features
from riskcore.recognition.recognisers import Recogniser

N1, N2, N3, E1, E2, E3, E4, S1, S2, S3 = range(10)


def _game(places: list[int]) -> dict[str, np.ndarray]:
    """Player 0 owns N1, E1, S1, S2; player 1 the rest; player 0 places one army on each of `places` in setup."""
    owners = {N1: 0, E1: 0, S1: 0, S2: 0, N2: 1, N3: 1, E2: 1, E3: 1, E4: 1, S3: 1}
    rows = [dict(seq=i, turn=0, player=p, kind="deal", dst=t, armies=1) for i, (t, p) in enumerate(owners.items())]
    rows += [dict(seq=len(rows) + i, turn=0, player=0, kind="place", dst=t, armies=1) for i, t in enumerate(places)]
    cols = ("game_id", "seq", "turn", "player", "kind", "src", "dst", "armies", "attacker_losses", "defender_losses",
            "conquered", "opponent")
    out = {c: np.array([r.get(c, np.nan) for r in rows], dtype=float) for c in cols if c not in ("kind", "conquered")}
    out["game_id"] = np.zeros(len(rows))
    out["kind"] = np.array([r["kind"] for r in rows], dtype=object)
    out["conquered"] = np.zeros(len(rows), dtype=bool)
    return out


def test_the_yardstick_guesses_the_card_with_most_placements_ties_split():
    board = load_board("small")
    hyp = Hypotheses("two", board, (Explanation("North+East", "North+East", "continents", (0, 1)),
                                    Explanation("East+South", "East+South", "continents", (1, 2))),
                     np.array([0.5, 0.5]), ("North+East", "East+South"), np.array([0, 1]))
    f = features_from_parts(extract_game(_game([N1, E1, S1, S2]), 2, hyp, extended=True), hyp)
    post = placement_posterior(f)
    # counts (North+East, East+South): 1-0, 2-1, 2-2 (a tie), 2-3
    assert post.tolist() == [[1, 0], [1, 0], [0.5, 0.5], [0, 1]]


def test_the_yardstick_counts_only_a_cards_named_continents(small_run):
    """On the classic board a "+ one other continent" card's third continent is no place in particular: a
    placement in North America counts for the two cards that name it, not for the "+1" cards."""
    ensure_features("mixed", "cards6", small_run, workers=1, progress=False)
    f = load_features("mixed", "cards6", small_run)
    post = Recogniser.from_spec("placements").posterior(f, "mixed", small_run)
    cards = f.hyp.card_probs(post)
    assert np.allclose(cards.sum(axis=1), 1)
    first = np.flatnonzero((f.obs.kind == "place").to_numpy() & (f.obs.obs == 0).to_numpy())
    terr = f.obs.territory.to_numpy()[first]
    na = f.hyp.board.continent_of[terr] == f.hyp.board.continent_names.index("North America")
    assert na.any()
    named = [c for c in f.hyp.cards if c.startswith("North America")]
    want = np.array([0.5 if c in named else 0 for c in f.hyp.cards])
    assert np.allclose(cards[first[na]], want)
    truth = f.truth.set_index(["game_id", "player"]).card
    last = np.r_[np.flatnonzero(np.diff(f.obs.game_id * 8 + f.obs.player)), f.n - 1]
    true = truth.loc[list(zip(f.obs.game_id.iloc[last], f.obs.player.iloc[last]))].to_numpy()
    top1 = card_metrics(cards[last][true >= 0], true[true >= 0]).top1
    assert 0 <= top1.mean() <= 1 and Recogniser.from_spec("placements").label == "placement count (yardstick)"

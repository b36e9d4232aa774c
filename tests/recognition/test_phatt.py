"""PHATT on a hand-worked position, invariances, stability, and agreement with a plain per-event reference."""

from fractions import Fraction

import numpy as np
import pytest

from riskcore.engine.board import load_board
from riskcore.recognition.features import extract_game, features_from_parts, load_features
from riskcore.recognition.hypotheses import Explanation, Hypotheses, build_hypotheses
from riskcore.recognition.phatt import KHAN_DEFENCE_WON, KHAN_OUTSIDE, PhattWeights, phatt_loglik
from riskcore.recognition.pipeline import ensure_features
from riskcore.recognition.posterior import cumulative_posterior
from riskcore.replay import iter_replay, load_game

N1, N2, N3, E1, E2, E3, E4, S1, S2, S3 = range(10)


@pytest.fixture(scope="module")
def two_explanations():
    board = load_board("small")
    north, east, south = 0, 1, 2
    exps = (Explanation("North+East", "North+East", "continents", (north, east)),
            Explanation("East+South", "East+South", "continents", (east, south)))
    return Hypotheses("two", board, exps, np.array([0.5, 0.5]), ("North+East", "East+South"), np.array([0, 1]))


def _events(rows):
    cols = ("game_id", "seq", "turn", "player", "kind", "src", "dst", "armies", "attacker_losses",
            "defender_losses", "conquered", "opponent")
    return {c: np.array([r.get(c, np.nan) if c not in ("kind",) else r[c] for r in rows],
                        dtype=object if c == "kind" else float) for c in cols}


def _hand_trace():
    owners = {N1: 0, N2: 0, N3: 0, E1: 0, E2: 1, E3: 1, E4: 1, S1: 1, S2: 1, S3: 1}
    rows = [dict(game_id=0, seq=i, turn=0, player=p, kind="deal", dst=t, armies=1) for i, (t, p) in
            enumerate(owners.items())]
    n = len(rows)
    rows += [dict(game_id=0, seq=n, turn=1, player=0, kind="reinforce", dst=E1, armies=3),
             dict(game_id=0, seq=n + 1, turn=1, player=0, kind="attack", src=N1, dst=S3, attacker_losses=0,
                  defender_losses=1, conquered=True, opponent=1),
             dict(game_id=0, seq=n + 2, turn=1, player=0, kind="occupy", src=N1, dst=S3, armies=1)]
    for r in rows:
        r.setdefault("conquered", False)
    return _events(rows)


def test_hand_worked_posterior_first_action_shared_second_tells_apart(two_explanations):
    """Player 0 owns N1-N3 and E1. With c = 1, i = 0.5 the pending-set weights are W(North+East) = 23 and
    W(East+South) = 19. Pending set: 4 owned territories (reinforce, defend won, defend lost each), 8 owned pairs
    (fortify), 3 attack pairs N1-S3, E1-E2, E1-E4 (attack won, attack lost each). North+East holds all 4 owned
    territories, all 8 fortify targets and 2 attack targets: 4 + 4 + 4(0.5) + 8 + 2(2 + 0.5) = 23; East+South holds
    1 owned territory, 1 fortify target (E1) and all 3 attack targets: 2.5 + 2.5 + 3.5 + 4.5 + 3 + 3 = 19.
    Reinforcing E1 is consistent with both; taking S3 only with
    East+South: P(North+East) = 19/42 after the first action and 361/1419 after the second."""
    parts = extract_game(_hand_trace(), 2, two_explanations)
    f = features_from_parts(parts, two_explanations)
    mine = f.obs.player.to_numpy() == 0
    assert list(f.obs.kind[mine]) == ["reinforce", "attack_won"]
    assert f.obs.n_owned[mine].tolist() == [4, 4] and f.obs.n_attack[mine].tolist() == [3, 3]
    assert f.obs.n_fortify[mine].tolist() == [8, 8]
    post = cumulative_posterior(f, phatt_loglik(f, PhattWeights.from_params({"scheme": "simple", "c": 1, "i": 0.5})))[mine]
    assert post[0, 0] == pytest.approx(float(Fraction(19, 42)), abs=1e-12)
    assert post[1, 0] == pytest.approx(float(Fraction(361, 1419)), abs=1e-12)


def test_failed_defence_inside_an_explanation_is_inconsistent(two_explanations):
    parts = extract_game(_hand_trace(), 2, two_explanations)
    f = features_from_parts(parts, two_explanations)
    defence = f.obs.index[f.obs.kind == "defend_lost"][0]
    assert f.consistent[defence].tolist() == [True, False]  # S3 is in East+South only


@pytest.fixture(scope="module")
def features(small_run):
    ensure_features("mixed", "cards6", small_run, workers=1, progress=False)
    return load_features("mixed", "cards6", small_run)


def test_equal_weights_leave_the_prior_unchanged(features):
    post = cumulative_posterior(features, phatt_loglik(features, PhattWeights("equal")))
    assert np.allclose(post, features.hyp.prior, atol=1e-12)


def test_simple_weights_move_the_posterior(features):
    post = cumulative_posterior(features, phatt_loglik(features, PhattWeights("simple")))
    assert np.abs(post - features.hyp.prior).max() > 0.05


def test_stable_over_ten_thousand_observations(features):
    one = features.select(np.arange(features.n) < 1)
    rows = np.zeros(10_000, dtype=int)
    long = features.select(rows)  # one (game, player) repeating the same observation 10,000 times
    ll = phatt_loglik(long, PhattWeights.from_params({"scheme": "simple", "c": 1, "i": 0.5}))
    post = cumulative_posterior(long, ll)
    assert np.isfinite(post).all() and np.allclose(post.sum(axis=1), 1)
    expected = np.log(one.hyp.prior) + 10_000 * ll[0]
    expected = np.exp(expected - expected.max())
    assert np.allclose(post[-1], expected / expected.sum(), atol=1e-12)


# ---- the plain reference: replay each game with the engine and enumerate every pending action -----------------
def _reference_loglik(state_owner, player, kind, territory, hyp, w):
    # a setup placement is a reinforcement, the armies moved into a conquered territory a move there
    kind = {"place": "reinforce", "occupy": "fortify"}.get(kind, kind)
    board = hyp.board
    member = hyp.membership(state_owner)
    pending = []
    for t in np.flatnonzero(state_owner == player):
        pending += [("reinforce", t), ("defend_won", t), ("defend_lost", t)]
        for nb in board.neighbours[t]:
            if state_owner[nb] == player:
                pending.append(("fortify", nb))
            else:
                pending += [("attack_won", nb), ("attack_lost", nb)]
    out = []
    for e in range(hyp.size):
        def consistent(k, t):
            return (not member[e, t]) if k == "defend_lost" else bool(member[e, t])

        if w.scheme == "simple":
            def weight(k, t):
                return w.c[k] if consistent(k, t) else w.i[k]

            total = sum(weight(k, t) for k, t in pending)
            out.append(np.log(weight(kind, territory)) - np.log(total))
        else:
            c = sum(consistent(k, t) for k, t in pending)
            i = len(pending) - c
            if c == 0 or i == 0:
                out.append(-np.log(len(pending)))
            else:
                out.append(np.log(w.lam / c) if consistent(kind, territory) else np.log((1 - w.lam) / i))
    return out


@pytest.mark.parametrize("weights", [PhattWeights.from_params({"scheme": "simple", "c": 1, "i": 0.9, "attack_won.i": 0.6, "fortify.c": 2}),
                                     PhattWeights.from_params({"scheme": "proportional", "lam": 0.8})])
def test_vectorised_phatt_matches_plain_reference(features, small_run, weights):
    hyp = build_hypotheses(load_board("classic"), "cards6")
    ll = phatt_loglik(features, weights)
    checked, kinds = 0, set()
    for game in (0, 3):
        events, missions, config, _ = load_game("mixed", game, small_run)
        obs = features.obs[features.obs.game_id == game]
        by_seq = {}
        for idx, row in obs.iterrows():
            by_seq.setdefault(int(row.seq), []).append(idx)
        owner_before = {}
        prev, before = None, None
        for seq, state in iter_replay(events, missions, config):
            if prev is not None:
                for s in range(prev + 1, seq + 1):
                    owner_before[s] = before
            before = state.owner.copy()
            prev = seq
        for seq, idxs in by_seq.items():
            for idx in idxs:
                row = obs.loc[idx]
                if row.kind == "trade":
                    continue
                ref = _reference_loglik(owner_before[seq], int(row.player), row.kind, int(row.territory), hyp,
                                        weights)
                assert np.allclose(ll[idx], ref, atol=1e-9, rtol=0), (game, seq, row.kind)
                checked += 1
                kinds.add(row.kind)
    assert checked > 200 and {"place", "occupy", "reinforce", "attack_won"} <= kinds


# ---- khan2013: the reference implementation's update ----------------------------------------------------------
def test_khan2013_hand_worked(two_explanations):
    """Player 0 owns N1-N3 and E1. Reinforcing E1 is inside both explanations (x 1). Taking S3: the attack options
    are counted after the conquest, the distinct enemy neighbours E2, E4, S1, S2 (N = 4). North+East holds 2 of
    them and not S3: base = (1 - 0.02 x 2) / 4; East+South holds all 4 and S3: (1 - 0.02 x 4) / 4 + 0.02. Moving
    into S3: x 0.98f for North+East only. Player 1 loses S3, inside East+South only: x 0.98f there."""
    parts = extract_game(_hand_trace(), 2, two_explanations, extended=True)
    f = features_from_parts(parts, two_explanations)
    w = PhattWeights.from_params({"scheme": "khan2013"})
    post = cumulative_posterior(f, phatt_loglik(f, w))
    mine = f.obs.player.to_numpy() == 0
    assert list(f.obs.kind[mine]) == ["reinforce", "attack_won", "occupy"]
    a, b = 0.96 / 4 * KHAN_OUTSIDE, 0.92 / 4 + 0.02
    assert post[mine][0, 0] == pytest.approx(0.5)
    assert post[mine][2, 0] == pytest.approx(a / (a + b), abs=1e-12)
    theirs = post[~mine]
    assert list(f.obs.kind[~mine]) == ["defend_lost"]
    assert theirs[0, 0] == pytest.approx(1 / (1 + KHAN_OUTSIDE), abs=1e-12)
    assert KHAN_OUTSIDE == 0.9800000190734863  # the Java float literal 0.98f, widened


def test_the_turns_view_is_the_full_one_without_setup_placements_and_move_ins(two_explanations, features,
                                                                               small_run):
    plain = features_from_parts(extract_game(_hand_trace(), 2, two_explanations), two_explanations)
    assert "occupy" not in set(plain.obs.kind)
    turns = load_features("mixed", "cards6", small_run, "turns")
    assert {"place", "occupy"} <= set(features.obs.kind) and not {"place", "occupy"} & set(turns.obs.kind)
    keep = ~features.obs.kind.isin(["place", "occupy"]).to_numpy()
    assert (features.obs.seq.to_numpy()[keep] == turns.obs.seq.to_numpy()).all()
    with pytest.raises(ValueError, match="unknown view 'setup'"):
        load_features("mixed", "cards6", small_run, "setup")


def _khan_row(kind, inside, c, n, t, o, variant):
    """One factor of the reference update, written out per row (c, n: attack options inside and in all; t, o: the
    attacker's territories inside and in all, before the conquest)."""
    if kind in ("reinforce", "place", "fortify", "occupy"):
        return 1.0 if inside else KHAN_OUTSIDE
    if kind == "defend_won":
        return KHAN_DEFENCE_WON if inside else 1.0
    if kind == "defend_lost":
        return KHAN_OUTSIDE if inside else 1.0
    if n == 0:
        return 1.0
    if kind == "attack_lost":
        base = (1 - 0.01 * c) / n
        return base + 0.01 if inside else base
    if kind == "attack_won":
        if variant == "head":
            c = max(c, 1)
            share = max(t + inside, 1) // (o + 1)
            base = (1 - 0.02 * c) / n
            return base + 0.02 * (1 - c / n) * share if inside else base
        base = (1 - 0.02 * c) / n
        return base + 0.02 if inside else base
    return 1.0


@pytest.mark.parametrize("variant", ["thesis", "head"])
def test_khan2013_agrees_with_a_per_row_reference(features, small_run, variant):  # features: built once
    f = load_features("mixed", "cards6", small_run)
    ll = phatt_loglik(f, PhattWeights.from_params({"scheme": "khan2013", "variant": variant}))
    rng = np.random.default_rng(0)
    for r in rng.choice(f.n, 400, replace=False):
        kind = f.obs.kind.iat[r]
        for e in range(f.hyp.size):
            inside = (not f.consistent[r, e]) if kind == "defend_lost" else bool(f.consistent[r, e])
            want = _khan_row(kind, inside, f.targets_in[r, e], f.obs.n_targets.iat[r], f.owned_in[r, e],
                             f.obs.n_owned.iat[r], variant)
            assert ll[r, e] == pytest.approx(np.log(want), abs=1e-12), (kind, r, e)


def test_khan2013_later_code_only_changes_conquests(features, small_run):
    f = load_features("mixed", "cards6", small_run)
    thesis = phatt_loglik(f, PhattWeights.from_params({"scheme": "khan2013"}))
    head = phatt_loglik(f, PhattWeights.from_params({"scheme": "khan2013", "variant": "head"}))
    differs = np.flatnonzero((np.abs(thesis - head) > 1e-15).any(axis=1))
    assert len(differs) > 0 and set(f.obs.kind.iloc[differs]) == {"attack_won"}


def test_the_attack_options_of_a_conquest_are_those_after_it(two_explanations):
    """Taking S3 from N1 turns S3's enemy neighbours S1, S2 into options and removes S3: 3 -> 4 distinct targets
    (E2, E4, S3 before; E2, E4, S1, S2 after); the pairs count before it is 3 (N1-S3, E1-E2, E1-E4)."""
    f = features_from_parts(extract_game(_hand_trace(), 2, two_explanations, extended=True), two_explanations)
    won = f.obs.kind.to_numpy() == "attack_won"
    assert f.obs.n_targets[won].tolist() == [4] and f.obs.n_attack[won].tolist() == [3]
    assert f.targets_in[won].tolist() == [[2, 4]]
    reinforce = f.obs.kind.to_numpy() == "reinforce"
    assert f.obs.n_targets[reinforce].tolist() == [3] and f.targets_in[reinforce].tolist() == [[2, 3]]

"""Invariants over 2,000 seeded games of random and mission agents (CI plays the first quarter, `make test-slow` all):
every territory owned, armies >= 1, armies conserved event by event, only legal actions, exactly one winner who
has completed their mission."""

import pytest

from riskcore.engine.actions import Attack, Fortify, Occupy, Place
from riskcore.engine.config import GameConfig
from riskcore.engine import OCCUPY, legal_actions
from riskcore.game import play_game
from riskcore.simulate import game_seeds

BLOCKS = 4  # 4 blocks x 250 games per agent kind = 1,000 each
# the first block in CI, 250 games of each agent kind (the fuzzer plays a thousand more over random configurations)
IN_CI = [b if b < 1 else pytest.param(b, marks=pytest.mark.slow) for b in range(BLOCKS)]
MISSION_MIX = ["mission:focus=0", "mission:focus=0.5", "mission:focus=0.8", "mission:focus=1"]


class InvariantChecker:
    def __init__(self, check_legal_every: int = 0):
        self.total = None
        self.seen = 0
        self.check_legal_every = check_legal_every
        self.steps = 0

    def __call__(self, state, action):
        self._check_since_last(state)
        if self.check_legal_every and self.steps % self.check_legal_every == 0:
            if isinstance(action, (Place, Fortify, Occupy)) or not isinstance(action, Attack):
                assert action in legal_actions(state), f"{action} not among the legal actions"
        self.steps += 1

    def _check_since_last(self, state):
        if self.total is not None:
            delta = 0
            for row in state.log[self.seen:]:
                kind, armies = row[4], row[7]
                if kind in ("place", "reinforce", "claim", "deal"):
                    delta += armies
                elif kind == "trade" and row[6] is not None:
                    delta += 2
                elif kind == "attack":
                    delta -= row[10] + row[11]
            assert int(state.armies.sum()) == self.total + delta, "armies not conserved"
        self.total = int(state.armies.sum())
        self.seen = len(state.log)
        if state.phase == "claim":
            return
        assert (state.owner >= 0).all(), "a territory has no owner"
        low = state.armies < 1
        if state.phase == OCCUPY:
            low[state.occupy[1]] = False  # the conquered territory waits for the occupying move
        assert not low.any(), "a territory has fewer than one army"

    def finish(self, state):
        self._check_since_last(state)
        assert (state.armies >= 1).all()
        if state.winner >= 0 and state.end_reason == "mission":
            p = state.winner
            assert state.missions[p].complete(p, state.owner == p, state.armies, state.held_continents(p),
                                              state.n_players, state.eliminated_by)


def _run_block(agents, block, configs, legal_every):
    """250 seeded games; game i is played under `configs[i % len(configs)]`."""
    seeds = game_seeds(1000 + block, 250)
    outcomes = []
    for i, seed in enumerate(seeds):
        config = configs[i % len(configs)]
        checker = InvariantChecker(legal_every if i < 10 else 0)
        seats = [agents[(s + i) % len(agents)] for s in range(config.n_players)]
        rec = play_game(config, seats, seed, observer=checker)
        checker.finish(rec.state)
        outcomes.append(rec.state.end_reason)
    return outcomes


@pytest.mark.parametrize("block", IN_CI)
def test_mission_agent_games_keep_invariants(block):
    outcomes = _run_block(MISSION_MIX, block, [GameConfig()], legal_every=3)
    assert set(outcomes) <= {"mission", "domination", "turn_cap"}
    assert outcomes.count("mission") > 200  # mission agents finish missions


@pytest.mark.parametrize("block", IN_CI)
def test_random_agent_games_keep_invariants(block):
    # both player counts in every block
    configs = [GameConfig(turn_cap=60, n_players=n) for n in (3, 4)]
    outcomes = _run_block(["random"], block, configs, legal_every=7)
    assert set(outcomes) <= {"mission", "domination", "turn_cap"}


def test_small_board_claim_variant_and_domination_games():
    config = GameConfig(board="small", n_players=3, mode="domination", deal="claim", setup_batch=2)
    for i, seed in enumerate(game_seeds(5, 40)):
        checker = InvariantChecker(check_legal_every=1)
        rec = play_game(config, ["random", "domination", "mission:focus=0.5"], seed, observer=checker)
        checker.finish(rec.state)
        assert rec.state.log[0][4] == "claim"


def test_games_under_the_mover_win_test_keep_invariants_and_end_on_the_winners_own_move():
    config = GameConfig(n_players=5, win_test="mover")
    ends = []
    for i, seed in enumerate(game_seeds(77, 100)):
        checker = InvariantChecker(3 if i < 5 else 0)
        rec = play_game(config, [MISSION_MIX[(s + i) % 4] for s in range(5)], seed, observer=checker)
        checker.finish(rec.state)
        ends.append(rec.state.end_reason)
        if rec.state.winner >= 0:
            *_, before, win = rec.state.log
            assert win[4] == "win" and win[2] == rec.state.winner, "someone else's move won"
            assert before[4] in ("place", "reinforce", "occupy", "fortify") and before[2] == win[2]
    assert ends.count("mission") > 60

"""Fuzzing the rules: seeded games over random configurations, each checked by an independent invariant checker.

The checker rebuilds every game from its event rows alone, with the board's static facts (borders, continents, card
symbols, mission specs), the rule tables of `engine/rules.py` (the one definition of every constant) and its own
code for the rules it checks, never the engine's objects, functions or mission code: ownership and armies, army
conservation (armies change only by placements, card bonuses and battle losses), dice limits and consistent losses,
adjacency of attacks and fortifies, who may act, card conservation (hands, deck and discards always hold every card
once) and the hand limit after trading, the reserve of every turn (territories // 3, at least 3, plus held bonuses,
plus trades), eliminated players owning nothing and acting no more, and the winner really meeting its mission (or
holding every territory). Under `win_test="mover"` it also holds the game to the program Domination's test: a win
comes right after the winner's own placement, occupation or fortification, and every such move after which the
mover holds every territory or (setup over) meets its mission is followed by its win. A game the compiled kernel
played (every seat a `mission` or `domination` agent, territories dealt) is also played in the Python step loop,
and a difference in any event is a violation.

`riskcore fuzz --games N` (`make fuzz GAMES=N`) plays N games over configurations drawn from a seed, in parallel,
and writes a report with the machine it ran on to `reports/benchmarks/fuzz.md`.
"""

from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd

from riskcore.engine.board import load_board
from riskcore.engine.config import GameConfig
from riskcore.engine import EVENT_FIELDS
# the rule tables come from the engine's one definition; the checker's logic is its own
from riskcore.engine.rules import (ESCALATING, ESCALATING_STEP, FIXED, FIXED_MIXED, TERRITORY_BONUS, WILD,
                                   WIN_TESTS, base_reinforcement)
from riskcore.game import play_game
from riskcore.parallel import run_tasks

F = {name: i for i, name in enumerate(EVENT_FIELDS)}
MOVES = ("place", "reinforce", "occupy", "fortify")  # the events after which Domination tests the mover's win
AGENT_MIX = ("random", "mission", "mission:focus=1", "domination", "expert", "bsr")


class Violation(AssertionError):
    """A rule broken in a recorded game; the message names the event."""


class EventChecker:
    """Replays one game's event rows against the rules, independently of the engine."""

    def __init__(self, board, config: GameConfig, missions: list[int]):
        self.b, self.c = board, config
        self.p = config.n_players
        n = board.n_territories
        self.owner = np.full(n, -1)
        self.armies = np.zeros(n, dtype=np.int64)
        self.hands = [[] for _ in range(self.p)]
        self.discard: list[int] = []
        self.deck = set(range(board.n_cards))
        self.alive = [True] * self.p
        self.eliminated_by = [-1] * len(board.colours)
        self.missions = [board.missions[m] for m in missions]
        self.trades = 0
        self.turn_reserve = 0  # armies still to place this turn
        self.bonus_used = False  # the +2 of a traded card, at most once a turn
        self.conquered = -1  # a territory just conquered, empty until the armies move in
        self.setup_left = [config.armies_per_player] * self.p
        self.previous: tuple | None = None  # the event checked last
        self.due: int = -1  # win_test "mover": the player whose last move won the game (its win must follow)

    def fail(self, row, what: str):
        raise Violation(f"event {row[F['seq']]} ({row[F['kind']]}, player {row[F['player']]}): {what}")

    def reserve_of(self, p: int) -> int:
        count = int((self.owner == p).sum())
        bonus = sum(int(self.b.continent_bonus[c]) for c in range(self.b.n_continents)
                    if all(self.owner[t] == p for t in np.flatnonzero(self.b.continent_mask[c])))
        return base_reinforcement(count) + bonus

    def trade_value(self, cards: list[int]) -> int:
        if self.c.card_values == "fixed":
            symbols = [int(self.b.card_symbol[x]) for x in cards]
            plain = [s for s in symbols if s != WILD]
            best = []
            if len(set(plain)) <= 1:
                best.append(FIXED[plain[0]] if plain else max(FIXED))
            if len(set(plain)) == len(plain):
                best.append(FIXED_MIXED)
            return max(best)
        k = self.trades
        value = ESCALATING[k] if k < len(ESCALATING) else ESCALATING[-1] + ESCALATING_STEP * (k - len(ESCALATING) + 1)
        return min(value, self.c.card_cap) if self.c.card_cap else value

    def check(self, rows: list[tuple]) -> None:
        total = 0
        for row in rows:
            kind, p = row[F["kind"]], row[F["player"]]
            before = int(self.armies.sum())
            if kind not in ("deal", "win", "draw", "eliminate") and not self.alive[p]:
                self.fail(row, "an eliminated player acts")
            if self.c.win_test == "mover":
                self.mover_wins(row, kind, p)
            getattr(self, f"_{kind}")(row, p)
            if self.c.win_test == "mover" and kind in MOVES:
                self.due = p if self.won_by(p) else -1
            self.previous = row
            total = int(self.armies.sum())
            delta = total - before
            expected = {"deal": 1, "claim": 1, "place": row[F["armies"]], "reinforce": row[F["armies"]],
                        "trade": 2 if row[F["dst"]] is not None else 0}.get(kind, 0)
            if kind == "attack":
                expected = -(row[F["attacker_losses"]] + row[F["defender_losses"]])
            if delta != expected:
                self.fail(row, f"armies changed by {delta}, the rules allow {expected}")
            empty = (self.armies < 1) & (self.owner >= 0)
            if self.conquered >= 0:
                empty[self.conquered] = False
            if empty.any():
                self.fail(row, f"territory {int(np.flatnonzero(empty)[0])} holds no army")
            cards = sum(len(h) for h in self.hands) + len(self.discard) + len(self.deck)
            if cards != self.b.n_cards:
                self.fail(row, f"{cards} cards in play, the deck has {self.b.n_cards}")

    # ---- one method per event kind -------------------------------------------------------------------------------
    def _deal(self, row, p):
        t = row[F["dst"]]
        if self.owner[t] != -1:
            self.fail(row, f"territory {t} dealt twice")
        self.owner[t], self.armies[t] = p, 1
        self.setup_left[p] -= 1

    def _claim(self, row, p):
        self._deal(row, p)

    def _place(self, row, p):
        t, k = row[F["dst"]], row[F["armies"]]
        if self.owner[t] != p or not 1 <= k <= self.setup_left[p]:
            self.fail(row, f"setup placement of {k} on territory {t} (owner {self.owner[t]})")
        self.setup_left[p] -= k
        self.armies[t] += k

    def _reinforce(self, row, p):
        t, k = row[F["dst"]], row[F["armies"]]
        if self.owner[t] != p or not 1 <= k <= self.turn_reserve:
            self.fail(row, f"reinforcement of {k} on territory {t} with {self.turn_reserve} to place")
        if len(self.hands[p]) >= self.c.forced_trade_at:
            self.fail(row, f"placing while holding {len(self.hands[p])} cards")
        self.turn_reserve -= k
        self.armies[t] += k

    def _trade(self, row, p):
        cards = [int(x) for x in row[F["cards"]].split()]
        if len(set(cards)) != 3 or any(x not in self.hands[p] for x in cards):
            self.fail(row, f"cards {cards} are not three of the hand {self.hands[p]}")
        symbols = [int(self.b.card_symbol[x]) for x in cards]
        if WILD not in symbols and len(set(symbols)) == 2:
            self.fail(row, f"cards {cards} are no set")
        if row[F["armies"]] != self.trade_value(cards):
            self.fail(row, f"trade value {row[F['armies']]}, the rules give {self.trade_value(cards)}")
        bonus = row[F["dst"]]
        if bonus is not None and (bonus not in cards or self.owner[bonus] != p or self.bonus_used):
            self.fail(row, f"+2 on territory {bonus}: not an owned traded card, or a second +2 this turn")
        self.bonus_used |= bonus is not None
        for x in cards:
            self.hands[p].remove(x)
        self.discard += cards
        self.trades += 1
        self.turn_reserve += row[F["armies"]]
        if bonus is not None:
            self.armies[bonus] += TERRITORY_BONUS

    def _attack(self, row, p):
        s, d = row[F["src"]], row[F["dst"]]
        ad, dd, al, dl = (row[F[k]] for k in ("attacker_dice", "defender_dice", "attacker_losses",
                                               "defender_losses"))
        if self.owner[s] != p or self.owner[d] in (p, -1) or not self.b.adjacency[s, d]:
            self.fail(row, f"attack {s} -> {d} is not from own to an adjacent enemy territory")
        if self.owner[d] != row[F["opponent"]]:
            self.fail(row, "the recorded defender does not own the territory")
        if self.armies[s] < 2 or not 1 <= ad <= min(3, self.armies[s] - 1) or not 1 <= dd <= min(2, self.armies[d]):
            self.fail(row, f"{ad} against {dd} dice with {self.armies[s]} against {self.armies[d]} armies")
        if row[F["stop_at"]] is None and (al + dl != min(ad, dd) or min(al, dl) < 0):
            self.fail(row, f"losses {al} and {dl} for one roll of {ad} against {dd}")
        if al > self.armies[s] - 1 or dl > self.armies[d]:
            self.fail(row, f"losses {al} and {dl} exceed the armies")
        self.armies[s] -= al
        self.armies[d] -= dl
        if bool(row[F["conquered"]]) != (self.armies[d] == 0):
            self.fail(row, "the conquest flag contradicts the losses")
        if self.armies[d] == 0:
            self.owner[d], self.conquered = p, d  # the armies move in with the occupying event

    def _occupy(self, row, p):
        s, d, k = row[F["src"]], row[F["dst"]], row[F["armies"]]
        if d != self.conquered or self.owner[s] != p or not 1 <= k <= self.armies[s] - 1:
            self.fail(row, f"moving {k} from {s} ({self.armies[s]} armies) into {d}")
        self.conquered = -1
        self.armies[s] -= k
        self.armies[d] += k

    def _eliminate(self, row, p):
        victim = row[F["opponent"]]
        if (self.owner == victim).any():
            self.fail(row, f"player {victim} eliminated while owning territories")
        taken = [int(x) for x in (row[F["cards"]] or "").split()]
        if sorted(taken) != sorted(self.hands[victim]):
            self.fail(row, f"took cards {taken}, the victim held {self.hands[victim]}")
        self.hands[p] += self.hands[victim]
        self.hands[victim] = []
        self.alive[victim] = False
        self.eliminated_by[victim] = p

    def _retreat(self, row, p) -> None:
        """Only after a single roll by p on the same pair that took nothing and left p armies to roll on."""
        s, d, previous = row[F["src"]], row[F["dst"]], self.previous
        if previous is None or previous[F["kind"]] != "attack" or previous[F["player"]] != p \
                or (previous[F["src"]], previous[F["dst"]]) != (s, d) or previous[F["stop_at"]] is not None \
                or previous[F["conquered"]] or self.armies[s] < 2:
            self.fail(row, f"a retreat from {s} -> {d} that no open battle of single rolls precedes")

    def _end_attack(self, row, p):
        pass

    def _fortify(self, row, p):
        s, d, k = row[F["src"]], row[F["dst"]], row[F["armies"]]
        if self.owner[s] != p or self.owner[d] != p or not 1 <= k <= self.armies[s] - 1:
            self.fail(row, f"fortifying {k} from {s} to {d}")
        if self.c.fortify == "adjacent" and not self.b.adjacency[s, d]:
            self.fail(row, f"fortifying {s} -> {d}: not adjacent")
        self.armies[s] -= k
        self.armies[d] += k

    def _end_turn(self, row, p):
        pass

    def _draw_card(self, row, p):
        card = int(row[F["cards"]])
        if not self.deck:
            self.deck, self.discard = set(self.discard), []
        if card not in self.deck:
            self.fail(row, f"card {card} drawn, not in the deck")
        self.deck.remove(card)
        self.hands[p].append(card)

    def _draw(self, row, p):
        pass

    def _win(self, row, p):
        winner = row[F["opponent"]]
        if (self.owner == winner).all() or sum(self.alive) == 1:
            return
        if self.c.mode != "mission" or not self.mission_done(winner):
            self.fail(row, f"player {winner} wins without meeting its mission")

    def begin_turn(self, row, previous: int) -> None:
        """At the first event of a turn: setup complete, the last turn's reserve placed, the right player."""
        p = row[F["player"]]
        if previous < 0 and any(self.setup_left):
            self.fail(row, f"setup ended with armies left to place: {self.setup_left}")
        if self.turn_reserve:
            self.fail(row, f"the last turn ended with {self.turn_reserve} armies not placed")
        expected = 0 if previous < 0 else next(q % self.p for q in range(previous + 1, previous + 1 + self.p)
                                             if self.alive[q % self.p])
        if p != expected:
            self.fail(row, f"player {p} takes the turn of player {expected}")
        self.turn_reserve, self.bonus_used = self.reserve_of(p), False

    def mover_wins(self, row, kind: str, p: int) -> None:
        """Domination's test, before `row` is applied: a win only and always right after a winning move."""
        if kind == "win" and row[F["opponent"]] != self.due:
            self.fail(row, f"player {row[F['opponent']]} wins, but no move of its own just won the game")
        if kind != "win" and self.due >= 0:
            self.fail(row, f"player {self.due} won with its last move, but the game goes on")

    def won_by(self, p: int) -> bool:
        """Whether the mover p has won under Domination's test: every territory, else its mission (setup over)."""
        if (self.owner == p).all():
            return True
        return self.c.mode == "mission" and not any(self.setup_left) and self.mission_done(p)

    def mission_done(self, p: int) -> bool:
        """The mission spec read directly from the board file, checked by this checker's own code."""
        m = self.missions[p]
        owned = self.owner == p
        held = [c for c in range(self.b.n_continents) if owned[self.b.continent_mask[c]].all()]
        if m["kind"] == "continents":
            named = [self.b.continent_names.index(c) for c in m["continents"]]
            return all(c in held for c in named) and len(held) - len(named) >= m.get("extra_continents", 0)
        if m["kind"] == "territories":
            return int((owned & (self.armies >= m.get("min_armies", 1))).sum()) >= m["territories"]
        colour = m["colour"]
        fallback = colour == p or colour >= self.p or (self.eliminated_by[colour] not in (-1, p))
        if fallback:
            return int(owned.sum()) >= m.get("fallback_territories", 24)
        return self.eliminated_by[colour] == p


def check_game(board, config: GameConfig, missions: list[int], rows: list[tuple]) -> None:
    """Raise `Violation` at the first event of `rows` that breaks a rule (turn starts come from the rows)."""
    checker = EventChecker(board, config, missions)
    turn, player = 0, -1
    for row in rows:
        if row[F["turn"]] != turn and row[F["kind"]] != "draw":
            if row[F["turn"]] != turn + 1:
                checker.fail(row, f"turn {row[F['turn']]} follows turn {turn}")
            checker.begin_turn(row, player)
            turn, player = row[F["turn"]], row[F["player"]]
        checker.check([row])
    if rows and checker.due >= 0 and rows[-1][F["kind"]] != "win":
        checker.fail(rows[-1], f"player {checker.due} won with its last move, but the log ends without its win")


def same_in_python(config: GameConfig, agents: list[str], seed: int, rows: list[tuple]) -> None:
    """Raise `Violation` unless the Python step loop plays the game whose events are `rows` (a compiled game) the
    same, event for event."""
    python = play_game(config, agents, seed, compiled=False).state.log
    for i, (row, expected) in enumerate(zip(rows, python)):
        if row != expected:
            raise Violation(f"event {i}: the compiled game has {row}, the Python step loop {expected}")
    if len(rows) != len(python):
        raise Violation(f"the compiled game has {len(rows)} events, the Python step loop {len(python)}")


def random_config(rng: np.random.Generator) -> GameConfig:
    """A configuration drawn over every rule variant (players 2-6, both modes and deals, card values and caps,
    fortify rules, setup batches, both boards, both win tests)."""
    board = str(rng.choice(["classic", "small"]))
    players = int(rng.integers(2, 7 if board == "classic" else 4))
    return GameConfig(board=board, n_players=players, mode=str(rng.choice(["mission", "domination"])),
                      deal=str(rng.choice(["random", "claim"])), setup_batch=int(rng.choice([1, 2, 5])),
                      card_values=str(rng.choice(["escalating", "fixed"])),
                      card_cap=[None, 20, 30][int(rng.integers(3))], fortify=str(rng.choice(["adjacent", "connected"])),
                      turn_cap=int(rng.choice([60, 120, 200])), win_test=str(rng.choice(WIN_TESTS)))


def fuzz_game(seed: int) -> dict:
    """One game from a seed: its configuration and agents drawn from the seed, played, and checked."""
    rng = np.random.default_rng(seed)
    config = random_config(rng)
    agents = [str(rng.choice(AGENT_MIX)) for _ in range(config.n_players)]
    rec = play_game(config, agents, seed)
    board = load_board(config.board)
    error = ""
    try:
        check_game(board, config, rec.missions, rec.state.log)
        if rec.compiled:
            same_in_python(config, agents, seed, rec.state.log)
    except Violation as exc:
        error = str(exc)
    return {"seed": seed, "board": config.board, "players": config.n_players, "mode": config.mode,
            "deal": config.deal, "card_values": config.card_values, "fortify": config.fortify,
            "win_test": config.win_test, "events": len(rec.state.log), "end": rec.state.end_reason,
            "compiled": rec.compiled, "violation": error}


def _chunk(seeds: list[int]) -> list[dict]:
    return [fuzz_game(s) for s in seeds]


def run_fuzz(games: int, seed: int = 0, workers: int | None = None, dask: str | None = None, progress: bool = True,
             out_dir: Path | None = None) -> pd.DataFrame:
    """Fuzz `games` games; write `fuzz.md` (and the violations, if any) under the benchmarks folder."""
    from riskcore.experiments.bench import write_benchmark
    from riskcore.simulate import game_seeds

    seeds = game_seeds(seed, games)
    chunks = [seeds[i:i + 50] for i in range(0, games, 50)]
    start = time.perf_counter()
    rows = [r for _, part in run_tasks(_chunk, [(c,) for c in chunks], workers, dask, desc="fuzz",
                                       progress=progress) for r in part]
    seconds = time.perf_counter() - start
    df = pd.DataFrame(rows)
    bad = df[df.violation != ""]
    summary = pd.DataFrame([{"games": len(df), "compiled games": int(df.compiled.sum()),
                             "events": int(df.events.sum()), "violations": len(bad),
                             "seconds": round(seconds, 1), "games_per_s": round(len(df) / seconds, 1),
                             "configs": df[["board", "players", "mode", "deal", "card_values", "fortify",
                                            "win_test"]].drop_duplicates().shape[0],
                             "ends": ", ".join(f"{k} {v}" for k, v in sorted(Counter(df.end).items()))}])
    write_benchmark(
        "fuzz", "Rule fuzzing", "Seeded games over random configurations (players 2-6, both modes and deals, card "
        "values and caps, fortify rules, setup batches, both boards, both win tests) and agent mixes, each checked "
        "event by event by an independent checker (`riskcore/experiments/fuzz.py`). Games whose seats are all "
        "mission or domination agents run on the compiled kernel and are played again in the Python step loop: a "
        "difference is a violation too."
        + ("" if bad.empty else "\n\nViolations:\n\n" + bad[["seed", "violation"]].to_markdown(index=False)),
        summary, out_dir, {"seed": seed})
    return df

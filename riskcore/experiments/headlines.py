"""The README's results, word for word: every number from the tables the report reads (`make report` copies them
into the README between its markers)."""

from __future__ import annotations

from riskcore.experiments.recognition.protocol import NAMED
from riskcore.experiments.recognition.generalisation_report import REFERENCE_NAME, YARDSTICK_NAME, Tables, span
from riskcore.experiments.search_report import SearchResults
from riskcore.recognition.recognisers import Recogniser
from riskcore.verdicts import direction, pct

SEARCH_ROWS = ("GB", "GB+learned strikes", "AB turn + GB", "AB one turn shorter")


def _diff(gen: Tables, b: str, family: str, metric: str) -> str:
    d = gen.diff(b, family, metric)
    return f"{d.difference:+.3f} [{d.ci_low:+.3f}, {d.ci_high:+.3f}] {direction(d.ci_low, d.ci_high)}"


def readme_headlines(gen: Tables, named: Recogniser, leaders: str, search: SearchResults) -> str:
    rows = []
    for fam in gen.foreign:
        rows.append(f"| {gen.label[fam]} ({gen.games(fam)}) | {gen.cell(NAMED, fam, 'gain', 1.0, '+.3f')} | "
                    f"{gen.cell(NAMED, fam, 'top1')} | {_diff(gen, YARDSTICK_NAME, fam, 'top1')} | "
                    f"{_diff(gen, REFERENCE_NAME, fam, 'top1')} | {_diff(gen, REFERENCE_NAME, fam, 'top1_vs_reading')} |")
    by, full = search.by, search.full
    search_rows = [f"| {name} | {pct(by.loc[(name, 2, full)].optimal)} | {pct(by.loc[(name, 3, full)].optimal)} |"
                   for name in SEARCH_ROWS
                   if (name, 2, full) in by.index and (name, 3, full) in by.index]  # no shorter search at 1 turn
    targets = [r for r in gen.target_rows() if r["foreign"]]
    missed = [f"{gen.label[r['family']]} {r['short']} (lower bound {r['low']:+.3f})" for r in targets if not r["met"]]
    following = [gen.value(NAMED, f, "top1") for f in gen.following(False)]
    blind = [gen.value(NAMED, f, "top1") for f in gen.riskcore if not gen.follows[f]]
    return f"""
The report, `reports/report.html`, gives every result with its method, figure and limits; the tables are in
`reports/tables/`. These headlines are copied from it by `make report`.

**Mission recognition on other programs' play** (at 100% of the game; 95% intervals over games, differences paired
on the same players; [details](reports/generalisation.md)). riskcore's recogniser ({named.label},
`{named.setting}`) is named on simulated riskcore play alone, by a protocol declared before its candidates were
scored on any other program's play, and nothing of it is fitted on that play. Every family below is a development
set: it was looked at while recognisers were built. The count guesses the card whose continents got most of the
player's placements; the reference is its own recogniser (equal to its published output), at the card level and at
its published reading.

| games (number) | gain over uniform (nats) | riskcore top-1 | riskcore - count | riskcore - reference | riskcore - reference's reading |
|---|---|---|---|---|---|
{chr(10).join(rows)}

Targets on these sets (above 0 at the 95% lower bound): {len(targets) - len(missed)} of {len(targets)} met; missed:
{"; ".join(missed) or "none"}.

On riskcore's own mission-following agent families (in-model: the training population runs their decision code)
riskcore's recogniser reaches {span(following)} top-1 at 100%; on the mission-blind ones {span(blind)} (chance
0.167). No human games are in the repository (the reference's recordings are not redistributable);
[docs/import.md](docs/import.md) gives the commands that score them for a user who has them.

**Goal-based search** ({int(by.loc[("GB", 2, full)].positions)} positions per player count on the small board,
{full} turns of look-ahead; share of positions where the first decision is as good as exhaustive search's;
[details](docs/search.md)):

| search | 2 players | 3 players |
|---|---|---|
{chr(10).join(search_rows)}

**Agents** ([details](docs/agents.md)): in the two-player round robin, {leaders}.
"""

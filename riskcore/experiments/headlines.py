"""The README's results, word for word: every number from the tables the report reads (`make report` copies them
into the README between its markers)."""

from __future__ import annotations

from riskcore.experiments.recognition.protocol import NAMED
from riskcore.experiments.recognition.generalisation_report import REFERENCE_NAME, YARDSTICK_NAME, Tables, span
from riskcore.experiments.search_report import SearchResults
from riskcore.recognition.recognisers import Recogniser
from riskcore.verdicts import direction, pct

SEARCH_ROWS = ("GB", "GB+learned strikes", "AB turn + GB", "AB one turn shorter")


def readme_headlines(gen: Tables, named: Recogniser, leaders: str, search: SearchResults) -> str:
    rows = []
    for fam in gen.foreign:
        dc, dr = gen.diff(REFERENCE_NAME, fam, "top1"), gen.diff(REFERENCE_NAME, fam, "top1_explanation")
        words = [direction(d.ci_low, d.ci_high) for d in (dc, dr)]
        rows.append(f"| {gen.label[fam]} ({gen.games(fam)}) | {gen.cell(NAMED, fam, 'top1')} / "
                    f"{gen.value(NAMED, fam, 'top1_explanation'):.3f} | {gen.value(REFERENCE_NAME, fam, 'top1'):.3f} / "
                    f"{gen.value(REFERENCE_NAME, fam, 'top1_explanation'):.3f} | {dc.difference:+.3f} ({words[0]}) / "
                    f"{dr.difference:+.3f} ({words[1]}) | {gen.value(YARDSTICK_NAME, fam, 'top1'):.3f} |")
    by, full = search.by, search.full
    search_rows = [f"| {name} | {pct(by.loc[(name, 2, full)].optimal)} | {pct(by.loc[(name, 3, full)].optimal)} |"
                   for name in SEARCH_ROWS
                   if (name, 2, full) in by.index and (name, 3, full) in by.index]  # no shorter search at 1 turn
    following = [gen.value(NAMED, f, "top1") for f in gen.held_riskcore(True)]
    blind = [gen.value(NAMED, f, "top1") for f in gen.held_riskcore(False)]
    return f"""
The report, `reports/report.html`, gives every result with its method, figure and limits; the tables are in
`reports/tables/`. These headlines are copied from it by `make report`.

**Mission recognition, against the reference on the same players** (top-1 at 100% of the game, card level / the
reference's reading, 95% intervals over games; [details](reports/generalisation.md)). riskcore's recogniser
({named.label}) is named on riskcore's own agent families before any other program's play is scored, and
nothing of it is fitted on that play; the reference's recogniser reproduces the reference study's own output
exactly; the yardstick guesses the card whose continents got most of the player's placements.

| games (number) | riskcore's recogniser | the reference's recogniser | difference | yardstick |
|---|---|---|---|---|
{chr(10).join(rows)}

On riskcore's own mission-following agent families, each held out by code lineage, riskcore's recogniser reaches
{span(following)} top-1 at 100%; on the mission-blind ones
{span(blind)} (chance 0.167). No human games are in the repository (the
reference's recordings are not redistributable); [docs/import.md](docs/import.md) gives the commands that score
them for a user who has them.

**Goal-based search** ({int(by.loc[("GB", 2, full)].positions)} positions per player count on the small board,
{full} turns of look-ahead; share of positions where the first decision is as good as exhaustive search's;
[details](docs/search.md)):

| search | 2 players | 3 players |
|---|---|---|
{chr(10).join(search_rows)}

**Agents** ([details](docs/agents.md)): in the two-player round robin, {leaders}.
"""

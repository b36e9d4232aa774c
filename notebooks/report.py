# ---
# jupyter:
#   kernelspec:
#     display_name: Python 3 (ipykernel)
#     language: python
#     name: python3
#   language_info:
#     codemirror_mode:
#       name: ipython
#       version: 3
#     file_extension: .py
#     mimetype: text/x-python
#     name: python
#     nbconvert_exporter: python
#     pygments_lexer: ipython3
#     version: 3.11.7
# ---

# %% tags=["parameters"]
default_focus: float = 0.8  # the mission agent's default focus
dataset: str = "default"  # the descriptive dataset
search_experiment: str = "search"  # the search experiment's key in the tables
quick: bool = False  # a reduced run, said on the first line

# %%
import base64
import html

import numpy as np
from IPython.display import HTML, Markdown, display

from riskcore import ENGINE_VERSION, paths
from riskcore.db import query
from riskcore.experiments.agents_report import AgentResults
from riskcore.experiments.recognition.protocol import NAMED, UNIFORM_LOSS
from riskcore.experiments.genetic import reference_engine
from riskcore.experiments.recognition.generalisation_report import (REFERENCE_NAME, YARDSTICK_NAME, Tables, riskcore_recogniser,
                                                        span, verdict)
from riskcore.experiments.headlines import readme_headlines
from riskcore.experiments.recognition.focus_report import RecognitionResults
from riskcore.experiments.report import FIGURES, TITLE, write_headlines
from riskcore.experiments.search import REFERENCES, SEARCHES
from riskcore.experiments.search_aim import NODE_BUDGET, PAPER_LOSS, PAPER_OPTIMAL
from riskcore.experiments.search_report import SearchResults
from riskcore.notebook import load_table
from riskcore.verdicts import HALF_WIDTH, direction, pct

STYLE = """<style>
.jp-RenderedHTMLCommon table { font-size: 0.78em; display: block; max-width: 100%; overflow-x: auto; }
.jp-RenderedHTMLCommon td, .jp-RenderedHTMLCommon th { padding: 0.2em 0.5em; }
figure.rc { margin: 1.2em 0; } figure.rc img { max-width: 100%; height: auto; }
figure.rc figcaption { font-size: 0.9em; color: #333; margin-top: 0.3em; }
</style>"""
display(HTML(STYLE))
if quick:
    display(Markdown("**Quick run: reduced sizes (`make report QUICK=1`); these numbers are not the report's.**"))
display(Markdown(f"# {TITLE}\n*Every number below is computed by `make report` from the data in "
                 "`data/riskcore.duckdb`.*"))


def say(text: str) -> None:
    display(Markdown(text))


def figure(name: str, caption: str, alt: str) -> None:
    """A figure with its caption and alt text (what it shows, for readers who cannot see it)."""
    data = base64.b64encode(paths.notebook_output("figures", f"{name}.png").read_bytes()).decode()
    display(HTML(f'<figure class="rc" id="fig-{name}"><img src="data:image/png;base64,{data}" '
                 f'alt="{html.escape(alt)}"><figcaption><b>Figure {name}.</b> {html.escape(caption)}'
                 f'</figcaption></figure>'))


def table(name: str) -> None:
    say(paths.notebook_output("tables", f"{name}.md").read_text())


rec = RecognitionResults.load(default_focus)
named = riskcore_recogniser()  # named by the training protocol on simulated play alone
best = rec.best_at(0.5)  # exploration: the best of the recognisers tuned on the training runs
best_label = rec.recognisers[best].label
uniform_ll = float(np.log(6))

# %% [markdown]
# ## Contents
# 1. [The engine and the dataset](#The-engine-and-the-dataset)
# 2. [Mission recognition](#Mission-recognition)
# 3. [Recognition on play it was not built from](#Recognition-on-play-it-was-not-built-from)
# 4. [Game-playing agents](#Game-playing-agents)
# 5. [Goal-based game-tree search](#Goal-based-game-tree-search)
# 6. [Limits](#Limits)
# 7. [References](#References)
# 8. [Reproducing this report](#Reproducing-this-report)

# %%
say(f"""
This report answers three questions about the board game RISK, each against a published study: can an observer
infer a player's secret mission card from the actions it sees (after Khan 2013, who applied the PHATT plan
recogniser to RISK); how well do the game-playing agents of the literature play against each other; and how close
does goal-based game-tree search (Lisý et al. 2009) get to exhaustive search, at what share of its tree. One
recogniser, **riskcore's recogniser** ({named.label}), is named in advance on simulated play alone for every
recognition headline; it is compared, player by player, with the placement count and with the reference's own
recogniser on other programs' games.
""")

# %% [markdown]
# ## The engine and the dataset

# %%
g = query("SELECT * FROM games WHERE run = ?", [dataset])
agents = query("SELECT DISTINCT agent FROM players WHERE run = ? ORDER BY agent", [dataset]).agent
say(f"""
**Question.** What do the games the recognisers and agents are studied on look like?

**What was done.** Engine {ENGINE_VERSION} plays the full classic rules (42 territories, the 14 secret missions,
escalating card trades, whole battles drawn from their exact distribution) from one recorded seed per game; every
action and every chance outcome is a row of the trace, so a game replays without a random number generator. The
descriptive dataset `{dataset}` holds {len(g):,} four-player mission games of `mission` agents with focus 0, 0.5,
0.8 and 1 ({", ".join(f"`{a}`" for a in agents)}), seats rotating from game to game.

**What the figures show.** Games last {g.turns.mean():.0f} player turns on average (median {g.turns.median():.0f});
{pct((g.end_reason == "mission").mean())} end by a completed mission, {pct((g.end_reason == "turn_cap").mean())}
reach the turn cap. Win rates by agent and seat carry Wilson 95% intervals; the board shows one game at four
turns, each colour a seat.

**What it means.** Focus decides how readable a player is: a player with focus 0 ignores its mission, one with
focus 1 only ever attacks and reinforces toward it, and the win rates show what that single-mindedness costs or
gains against the others.
""")
figure("traces-win-rates", "Win rates by agent and by seat in the descriptive dataset (Wilson 95% intervals); "
       "dashed: an equal share.", "Two bar charts of win rate, by agent spec and by seat, with confidence intervals.")
figure("traces-game-length", "Game lengths in player turns, stacked by how the game ended.",
       "Histogram of game lengths in player turns, coloured by end reason.")
figure("traces-board", "One game of the dataset after four turns spread over the game; armies on each territory.",
       "Four board maps of one game, territories coloured by owner with army counts and a legend of the players.")
say("How often a player holding each mission card wins the game (all agents of the dataset pooled):")
table("traces-mission-completion")

# %% [markdown]
# ## Mission recognition

# %%
simple_early, simple_late, drift = rec.reference_drift()
ll_named = [rec.metric(named.setting, "log_loss", p)[0] for p in (0.1, 0.3, 0.5, 0.7, 1.0)]
say(f"""
**Question.** From the actions an observer sees, which of the six continent mission cards does a player hold, and
how does that depend on how single-mindedly the player pursues it (its focus)?

**What was done.** For each mission focus (0, 0.5, 0.8, 1) a training run and a test run of {rec.games:,} four-player
games of `mission` agents use disjoint seeds; every number here comes from the test runs. riskcore's recogniser
({named.label}) is applied as the training protocol named it on a simulated population of heuristic and random
agents (other games; `mission` agents among them, so these runs are in-model for it): nothing of it is tuned on
these runs.
Beside it, recognisers whose parameters are chosen on the pooled training runs by mean log loss (exploration: the
best of several is not a headline): the uniform prior; the placement-count
yardstick; goal completion (a softmax of the share of each card's territories owned); PHATT with pending sets
built from the territories a player owns, with equal, simple (a consistent and an inconsistent weight per action
kind) or proportional weights; Bayesian inverse planning with the mission agent as its model of play; and a
logistic-regression classifier on trace features. Every recogniser observes setup placements; the observation
window ends before the game-ending action, so the end state never gives the answer away.

**What the figures show.** At focus {default_focus:g}, riskcore's recogniser names the right card for
{rec.top1(named.setting, 0.5)} of players at half of their window and {rec.top1(named.setting, 1.0)} at its end; its log
loss runs from {ll_named[0]:.2f} at 10% to {ll_named[-1]:.2f} at 100% (uniform: {uniform_ll:.2f}). The best tuned
recogniser, {best_label}, reaches {rec.top1(best, 0.5)} and {rec.top1(best, 1.0)}. PHATT with the reference's weights
(1.0 / 0.98) reaches {pct(simple_early)} at 10% {drift} ({pct(simple_late)} at 100%). At focus 0 the best
recogniser reaches {pct(rec.best_top1_at_focus_zero())} at the end (chance: 16.7%).

**What it means.** Players who pursue their mission reveal it, and a recogniser that models how they choose among
their options reads it; one whose model was built on other agents reads the mission agents too. At focus 0 nothing
of the mission is left in the play.
""")
figure("accuracy-by-focus", "Top-1 at 50% and 100% of the observation window by the players' mission focus, with "
       "95% bootstrap intervals over games; dashed: chance.",
       "Grouped bar chart of top-1 accuracy per recogniser and focus level, two panels for 50% and 100% observed.")
table("accuracy-top1-compact")
figure("convergence-top1", "Top-1 against the share of the observation window, per recogniser and focus (95% "
       "bootstrap bands).", "Line charts of top-1 accuracy over the observation window, one panel per focus level.")
figure("convergence-ptrue", "Mean probability of the true card against the share of the window observed.",
       "Line charts of the mean probability given to the true card, one panel per focus level.")
figure("convergence-examples", f"Card posteriors over the turns of three players at focus {default_focus:g} "
       "(true card in bold).", "Three line charts of the six card probabilities over the turns of one game each.")

# %%
pick, chosen_test, reference_test = rec.phatt_weights()
wl, wl_at, wl_answer = rec.winners(named.setting)
say(f"""
### PHATT weights, and winners against losers

**Question.** Which action kinds carry the evidence PHATT needs, and do winners give their missions away more than
losers?

**What was done.** The `phatt_weights` sweep varies the inconsistent weight of one action kind at a time (the
others at 1.0 / 0.98); every setting is scored on each focus level's training run, where the best (lowest mean log
loss over the checkpoints) is chosen, a grid whose best lies on its edge being widened there, and the chosen
setting is scored on the test run. Winners against losers: in each test game, riskcore's recogniser's top-1 at
half of the window for the winner less the mean for the losers, with a 95% bootstrap interval over games.

**What the figures show.** At focus {default_focus:g} the training run chooses `{pick.kind}` at inconsistent weight
{pick.inconsistent:g}; on the test run it reaches {pct(chosen_test)} top-1 at half of the window, against
{pct(reference_test)} for the reference's weights (1.0 / 0.98). Winners less losers at focus {default_focus:g}:
{wl_at.difference:+.3f} [{wl_at.ci_low:+.3f}, {wl_at.ci_high:+.3f}]: {wl_answer}
({"; ".join(f"focus {r.focus:g}: {r.difference:+.3f} [{r.ci_low:+.3f}, {r.ci_high:+.3f}]" for r in wl.itertuples())}).

**What it means.** The weights are chosen where they can be, on training play; the sensitivity curves show where
the log loss is flat and where it is not.
""")
table("phatt-weights-best")
figure("phatt-weights-heatmap", "PHATT simple on the training runs: top-1 at 50% observed by the inconsistent "
       "weight of each action kind (the others at 1.0 / 0.98), one panel per focus.",
       "Heatmaps of top-1 accuracy, action kind against weight.")
figure("phatt-weights-sensitivity", "Mean log loss over the checkpoints on the training runs against the "
       "inconsistent weight, per action kind and focus.",
       "Line charts of log loss against the inconsistent weight, one line per action kind.")
figure("accuracy-winners-losers", "Winners and losers: top-1 at 50% observed (95% intervals).",
       "Bar charts of top-1 accuracy for winners and losers, per recogniser and focus.")

# %% [markdown]
# ## Recognition on play it was not built from

# %%
gen = Tables()
gval, gcell = gen.value, gen.cell
games_of = gen.protocol["games"]
naming = gen.naming()
following_foreign, following_own = gen.following(True), gen.following(False)
blind_own = [f for f in gen.riskcore if not gen.follows[f]]
say(f"""
**Question.** Does riskcore's recogniser read missions from play it was not trained on, and does it beat, on the
same players, both the simplest baseline (the placement count) and the reference's own recogniser?

**What was done.** riskcore's recogniser is a learned model or a model of play, named by a protocol declared
before its candidates were scored on any other program's play, on {games_of:,} simulated games alone: a population of 3 to 6 players, fixed and escalating cards,
the 81-, 82- and 83-border maps, `mission` agents over focus, `domination` agents valuing their mission's
continents 1 to 100 times (as Domination's own AI does, with 4 upstream and 100 in the reference study), random
agents tilted towards their missions, and mission-blind seats. Three candidates were declared: a logistic model of
what each kind of evidence is worth (the shares of a player's setup placements, reinforcements, conquests, failed
attacks, defences, fortifies and move-ins landing in each card's continents, the share it owns, the count's own
guess, how these change over the game and with the number of players), the same with the log posteriors of the
reference's recogniser and the play-style mixture stacked in, and the play-style mixture. Each lineage of decision
code was held out in turn, and the candidates compared where none of them shares code with the held-out play.
{gen.naming_basis()}. The count's own guess is one of the learned models' features, so the count lies inside their
hypothesis space. The choice is the **{named.label}**. Other programs' games are imported from command logs: the
Domination corpus (its AI, nearly mission-blind), the reference study's own mission-following AI at mission
weight 100 and 4, and Domination's own AI in mission mode; every one of them was looked at while recognisers were built, so they are
development sets, not a test. riskcore's own agent families run decision code the training population runs: on
them the learned models are scored in-model, and they are reported apart. Every recogniser observes setup
placements and move-ins and is read on the reference's game clock.
""")
table("generalisation-naming")
w100, w4 = "fork-ai w100", "fork-ai w4"
say(f"""
**What the figures show.** Gain over uniform first: at 100% of the game riskcore's recogniser gains
{", ".join(f"{gen.label[f]} {gcell(NAMED, f, 'gain', 1.0, '+.3f')}" for f in gen.foreign)} nats on other
programs' play. On the reference's own AI at weight 100 it names the right card for {gcell(NAMED, w100, "top1")}
of players at the end of the game, against the count's {gval(YARDSTICK_NAME, w100, "top1"):.3f} (riskcore less the
count {verdict(gen.diff(YARDSTICK_NAME, w100, "top1"))}) and the reference's published reading's
{gval(REFERENCE_NAME, w100, "top1_explanation"):.3f} ({verdict(gen.diff(REFERENCE_NAME, w100, "top1_vs_reading"))});
at weight 4 {gcell(NAMED, w4, "top1")} against {gval(YARDSTICK_NAME, w4, "top1"):.3f}
({verdict(gen.diff(YARDSTICK_NAME, w4, "top1"))}) and {gval(REFERENCE_NAME, w4, "top1_explanation"):.3f}
({verdict(gen.diff(REFERENCE_NAME, w4, "top1_vs_reading"))}).
""")
table("generalisation-against")
table("generalisation-logloss")
say("**Targets**, each met when the 95% interval's lower bound clears it (where an open target's point estimate "
    "clears it, the games an interval half-width of 0.03 needs):\n\n" + "\n".join(gen.targets()))
n_pairs, n_gains = gen.players_comparisons(gen.foreign)
say(f"By number of players ({n_pairs} paired comparisons and {n_gains} gains against 0, at 95% with no correction "
    "for multiplicity: about one in twenty decided by chance where there is no difference; a single decided row is "
    "a lead, not a finding):")
table("generalisation-players")
figure("generalisation-by-family", "riskcore's recogniser, the reference's own recogniser and the placement count "
       "at 100% of the game on every family (95% bootstrap intervals over games): top-1 and gain over uniform; "
       "other programs' play above the line, riskcore's own families (in-model) below; dashed: chance and uniform.",
       "Two dot-and-interval charts, top-1 and gain over uniform, one row per family.")
figure("generalisation-gain", "riskcore's recogniser: gain over uniform in nats at every checkpoint of the game, "
       "on other programs' play and on riskcore's families; above 0 it is better than knowing nothing.",
       "Two line charts of the gain over uniform against the share of the game, one line per family.")
table("generalisation-gain-foreign")
table("generalisation-in-model")
say(gen.reference_better(gen.riskcore))
figure("generalisation-learning-curve", "The learned models fitted on 10^3 games of the training population "
       "and every tenfold step up to its size, on the development families: gain over uniform and log loss "
       "(checkpoints pooled) and top-1 at 100%, with 95% intervals over the families' games.",
       "Two line charts against the number of training games, one line per family and model.")
table("generalisation-curve")
say(gen.curve_reading())
say(gen.other_candidates_sentence())
say("**Where riskcore's recogniser loses** (every comparison decided against it), on other programs' play:\n\n"
    + "\n".join(gen.losses(gen.foreign)) + "\n\nOn riskcore's families (in-model):\n\n"
    + "\n".join(gen.losses(gen.riskcore)))
say("**What it means.** " + gen.meaning())
say(f"""
**How much the play shows.** A measure of the play itself, which no recogniser's model enters: a player's mission
lean is the share of its actions of a kind landing in its own card's named continents, less the mean share over the
other cards'. Play that ignores the mission leans 0.
""")
table("generalisation-lean")
figure("generalisation-calibration", "Reliability of the top-1 confidence, checkpoints pooled: other programs' play "
       "and riskcore's families; a calibrated recogniser lies on the diagonal.",
       "Two reliability diagrams: accuracy against confidence per recogniser.")
table("generalisation-ece")

# %% [markdown]
# ## Game-playing agents

# %%
agents = AgentResults.load(load_table)
rr, bw, base, versus, mc_row = agents.round_robin, agents.belief, agents.base, agents.versus, agents.dice
rr_sentence, recognition_wins = agents.leaders, agents.recognition_wins()
say(f"""
**Questions.** (1) Which agent is strongest in a two-player game? (2) Does recognising the opponents' missions win
games? (3) Do the minimax agent's tuned weights beat equal weights, and did the genetic search improve anything?
(4) How close does Monte Carlo control of dice choices come to the optimum?

**Decision rules, declared before the numbers.** (1) The leader is decided when its 95% interval clears every other
agent's. (2) Each belief weight above 0 against 0, the difference of win rates with Newcombe's 95% interval: yes if
some weight is decided better, no if none is and some is decided worse. (3) The sign test: the share of decided
head-to-head games the tuned weights win, with its Wilson interval against 50% (draws at the turn cap carry no
sign); progress is the last generation's fittest gene against the first generation's, both measured against equal
weights on the same game seeds. (4) The learned choices are compared with the exactly solved battle game: agreement
and the armies per battle a choice loses against optimal play (no sampling: one learning run, measured exactly),
beside the rule of thumb of always rolling the most dice. An undecided comparison is reported with the size that
would give an interval half-width of {HALF_WIDTH}.

**What was done.** A two-player domination round robin of every agent ({len(rr)} agents, seats rotated); the
`aware` agent, a mission agent that runs PHATT on the public log each turn and attacks the continents each opponent
most likely needs, against three `mission` agents at belief weights {", ".join(f"{x:g}" for x in bw.belief_weight)}
({int(base.games)} games each); genetic tuning of the minimax agent's four leaf weights (reduced sizes in
`pipelines/genetic_tuning.yaml`; the reference sizes below), validated head-to-head against equal weights; and
Monte Carlo control of dice choices.

**Answers.**
(1) {rr_sentence[0].upper() + rr_sentence[1:]}; `{rr.agent.iloc[-1]}` trails ({pct(rr.win_rate.iloc[-1])}).
(2) {recognition_wins.capitalize()}: the `aware` agent wins {pct(base.win_rate)} at belief weight 0 (plain mission
play) and {"; ".join(f"{pct(w.win_rate)} at {w.belief_weight:g}" for w in bw.iloc[1:].itertuples())}; against
weight 0 the differences are {"; ".join(f"{d:+.1%} [{lo:+.1%}, {hi:+.1%}] at {b:g}" for b, d, lo, hi in versus)}.
{"Blocking the opponents' likely missions costs the aware agent more than it saves." if agents.blocking_costs()
 else ""}
(3) Reduced run. {agents.ga_beat} {agents.ga_progress}
(4) The learned attacker agrees with the optimum in {pct(mc_row("attacker", "learned: agrees with the optimum"))} of
states and loses {mc_row("attacker", "learned: armies lost per battle"):.2f} armies per battle; always rolling the
most dice agrees in {pct(mc_row("attacker", "most dice: agrees"))} and loses
{mc_row("attacker", "most dice: armies lost per battle"):.2f}. The defender agrees in
{pct(mc_row("defender", "learned: agrees with the optimum"))} (the rule of thumb in
{pct(mc_row("defender", "most dice: agrees"))}). Where the learned choice is wrong, learning tried the optimal one a
median of {mc_row("attacker", "tries of the optimum where learned is wrong (median)"):g} time(s) for the attacker:
with exploration decaying as 1/episode, a choice that lost its first few battles is never tried again, and the caps
on army counts merge states whose optimum differs. The learned dice choices are worse than the rule of thumb,
which is why the `mc-rl` agent ranks near `random`.
""")
figure("agents-round-robin", "Two-player round robin of every agent: win rates (Wilson 95% CI) and Bradley-Terry "
       "ratings on the Elo scale.", "Two bar charts: win rate and Bradley-Terry rating per agent.")
figure("agents-belief-weight", "The aware agent against three mission agents, by belief_weight (Wilson 95% CI); "
       "dashed: an equal share.", "Line chart of the aware agent's win rate against its belief weight.")
figure("genetic-fitness", "Genetic tuning of the minimax weights: fitness and weights per generation.",
       "Two line charts: fitness per generation, and the mean of each of the four weights.")
table("genetic-yardstick")
reference = paths.tables_dir() / "genetic-reference.md"
if reference.exists():
    made_with = reference_engine(reference.read_text())
    say("At the reference sizes (population 100, 4 generations of 10 tournaments of 10: 3,600 games of tuning, "
        "1,000 of validation; `make genetic`, too long for `make report`, so its table is kept from its last run)"
        + (":" if made_with == ENGINE_VERSION else f", **made with engine {made_with}, not this report's "
           f"{ENGINE_VERSION}: its numbers describe an older engine until `make genetic` remakes it**:"))
    say("\n".join(reference.read_text().splitlines()[2:]))
figure("mcrl-learning", "Monte Carlo control of dice choices: learning curve; the title gives the share of states "
       "whose learned choice is the exact optimum.", "Line chart of the attacker's return per battle over episodes.")
table("mcrl-agreement")

# %% [markdown]
# ## Goal-based game-tree search

# %%
s = SearchResults.load(search_experiment, load_table)
full, deep, by, ab_mean = s.full, s.deep, s.by, s.ab_mean
searched, share, pair, random_answers = s.searched, s.share, s.pair, s.random_answers
like_for_like, own_aim = s.like_for_like(), s.own_aim()
say(f"""
**Question.** How close does goal-based search (GB) get to exhaustive search (AB), and at what share of its tree?
The paper reports 88.1% optimal decisions and a 9.4% mean loss while exploring under 0.002% of the tree.

**Decision rules, declared before the numbers.** A search's first decision is optimal when it has AB's best value
at the same look-ahead. The paper's accuracy counts as met only when the 95% intervals decide it (the share's lower
bound at least {PAPER_OPTIMAL:.1%}, the mean loss's upper bound at most {PAPER_LOSS:.1%}), and is compared like for
like only where the goal-based tree is as small a share of AB's as in the paper (under 0.002%). Two searches, or a
search and random placement, are compared position by position: the mean difference of optimal decisions with a
paired bootstrap 95% interval over positions (McNemar's exact test beside it in the table).

**What was done.** Both searches play the same abstract turn model on the 10-territory board (one placement of all
reinforcements, up to two whole battles with their expected outcome, per-player values searched by max^n). On 2-
and 3-player positions from seeded games, AB searches exhaustively and GB only where a player chooses a goal
(conquer a continent, break one, eliminate a player, secure its borders), following each goal's algorithm for the
rest of the turn. Every search runs to {full} turns on every position ({s.positions(full)} per
player count) and to {deep} turns on the first {s.positions(deep)}. The searches:
{"; ".join(f"`{n}`" for n in SEARCHES)}, and two yardsticks judged the same way: {REFERENCES[0]} and a
{REFERENCES[1]}. The paper's trees were far deeper and wider than any AB can finish here, so its regime is matched
by the share of the tree, not by depth or branching.

**What the figures show.** At {full} turns, where AB's mean tree holds {ab_mean[(2, full)]:,.0f} nodes for 2 players
and {ab_mean[(3, full)]:,.0f} for 3, the paper's GB is right in {searched("GB", 2)} for 2 players and
{searched("GB", 3)} for 3. `GB+learned strikes` reaches {searched("GB+learned strikes", 2)} and
{searched("GB+learned strikes", 3)}; the hybrid `AB turn + GB`, whose first decision is exhaustive, reaches
{searched("AB turn + GB", 2)} and {searched("AB turn + GB", 3)}. One turn deeper, AB's mean tree grows to
{ab_mean[(2, deep)]:,.0f} and {ab_mean[(3, deep)]:,.0f} nodes while the paper's GB explores {share("GB", 2, deep)} and
{share("GB", 3, deep)} of it.

**Answers.**
(1) Against the paper's claim: {like_for_like}. Against riskcore's own aim, the paper's accuracy at no more than
{NODE_BUDGET:.0%} of AB's nodes (the table below the trade-off figure): {own_aim}.
(2) Better than the paper's GB at {full} turns? `GB+learned strikes` {pair("GB+learned strikes", "GB", 2)} (2 players),
{pair("GB+learned strikes", "GB", 3)} (3 players); `AB turn + GB` {pair("AB turn + GB", "GB", 2)} and
{pair("AB turn + GB", "GB", 3)}.
(3) Better than random placement? At {full} turns, {random_answers(full)}; at {deep} turns, where the first
{s.positions(deep)} positions are searched, {random_answers(deep)} (the paired table below).
""")
table("search-summary")
figure("search-accuracy", "Each search's first decision against AB's best at every look-ahead AB finishes (95% "
       "Wilson intervals), with the two yardsticks judged the same way.",
       "Grouped bar charts of the share of optimal decisions per search and look-ahead, for 2 and 3 players.")
figure("search-tradeoff", "Accuracy against the share of AB's nodes, per look-ahead (numbers: turns); shaded: "
       "the paper's accuracy at no more than 1% of AB's nodes.",
       "Scatter plots of accuracy against node share on a log scale, one line per search.")
table("search-aim-compact")
say("Paired comparisons on the same positions (difference of the shares of optimal first decisions; "
    "McNemar's exact p where two searches are compared):")
table("search-paired-compact")
figure("search-nodes", "Nodes explored against look-ahead for AB and the goal-based searches (means, 95% CI).",
       "Line charts of nodes explored on a log scale against look-ahead, per player count.")
figure("search-estimate", "The tree-size estimate (formulas 1-3 of the paper, dashed) against the measured node "
       "counts (solid).", "Line charts of estimated and measured tree sizes against look-ahead, per player count.")
figure("search-scalability", "GB nodes on the classic board by number of players and the goal kinds allowed.",
       "Bar chart of GB tree sizes on a log scale by goal kinds and players.")
agent = load_table("search-agent").set_index("agent")
gb, plain = agent.loc["gb"], agent.loc["mission"]
even = {"higher": "above", "lower": "below", "not decided": "not decided against"}[
    direction(gb.ci_low, gb.ci_high, 0.25)]
say(f"""
(4) Does the goal-based search play the full game well? Playing it, the `gb` agent (look-ahead 2, goal-restricting
opponent model, valuing its own mission's territories) wins {pct(gb.win_rate)} [{pct(gb.ci_low)},
{pct(gb.ci_high)}] of {int(gb.games)} games against three `mission` agents: {even} an equal share (25%)
({pct(agent.loc['gb:mode=eager'].win_rate)} when it searches again before every attack,
{pct(agent.loc['gb:mission_weight=0'].win_rate)} blind to its mission); a `mission` agent in the same lineup wins
{pct(plain.win_rate)}. It is not passive: it makes {gb.attack_rolls_per_game:.1f} attack rolls and
{gb.conquests_per_game:.1f} conquests a game against the mission agents' {plain.attack_rolls_per_game:.1f} and
{plain.conquests_per_game:.1f}; the abstract model it searches (all reinforcements on one territory, at most two
battles a turn, expected outcomes) is coarser than the rules it plays, and these games do not say which of its
simplifications costs it the games.
""")
table("search-agent")

# %% [markdown]
# ## Limits

# %%
blind = [f for f in gen.families if not gen.follows[f]]
small = [f for f in gen.foreign if gen.games(f) < 200]
say(f"""
- **Players who ignore their missions.** Every recogniser here reads a mission from how a player pursues it. On
  mission-blind play little or nothing is left to read: riskcore's recogniser's gain over uniform at 100% is
  {", ".join(f"{gen.label[f]} {gval(NAMED, f, 'gain'):+.3f}" for f in blind)} nats there.
- **In-model and development sets.** riskcore's families run decision code the training population runs, so their
  numbers say how well the models fit the play they were trained on, not how they generalise. Other programs'
  play was looked at while recognisers were built: it is a development set, and a claim about unseen play rests on
  games scored outside this repository.
- **Sizes.** {", ".join(f"{gen.label[f]} has {gen.games(f)} games" for f in small) or "every family is large"}: a
  comparison the tables call not decided needs more games, not a reading of the point estimates.
- **Human play.** No human games are in the repository (the reference's recordings are not redistributable); the
  importer reads Domination's command logs on the map they were played on, so a user who has them scores
  riskcore's recogniser and the reference's on them with the commands `docs/import.md` lists, nothing fitted on them.
- **Cards.** Accuracy is scored on players holding one of the 6 continent cards; the full 14-card deck
  (`--hypotheses deck14`) is supported but not part of these tables.
- **The search model is small.** Goal-based and exhaustive search are compared in an abstract turn model on a
  10-territory board with at most two battles a turn and expected battle outcomes, so that AB can finish; the
  paper's own domain was larger and its tree share smaller.
- **Agents.** Round-robin results are two-player domination games; mission play with four players may rank the
  agents differently.
""")

# %% [markdown]
# ## References
# **Studies this report reproduces and measures against**
# - Khan, A. (2013). *PHATT mission recognition in RISK.* Honours project, University of Edinburgh: the reference
#   recogniser (`phatt:scheme=khan2013`), its recordings and its published accuracies.
# - Geib, C. W. and Goldman, R. P. (2009). A probabilistic plan recognition algorithm based on plan tree grammars.
#   *Artificial Intelligence* 173(11), 1101-1132: PHATT.
# - Lisý, V., Bošanský, B., Jakob, M. and Pěchouček, M. (2009). Adversarial search with procedural knowledge
#   heuristic. *AAMAS 2009*: goal-based game-tree search, 88.1% optimal decisions.
# - The minimax RISK agent with border-security drafting, alpha-beta over simplified battles and four leaf weights
#   tuned by a genetic algorithm with tournaments (the `bsr` and `minimax` agents, `make genetic`).
# - The full-rules Python RISK with Monte Carlo reinforcement learning of dice choices (the `mc-rl` agent), and the
#   Bayesian hidden-role inference with Monte Carlo search of The Resistance (the `aware` agent's belief updates and
#   the `mcs` agent).
#
# **Methods and tools**
# - Baker, C. L., Saxe, R. and Tenenbaum, J. B. (2009). Action understanding as inverse planning. *Cognition*
#   113(3), 329-349: inverse planning and the mixtures of models of play.
# - Hunter, D. R. (2004). MM algorithms for generalized Bradley-Terry models. *Annals of Statistics* 32(1),
#   384-406: the round robin's ratings.
# - Tan, B. (1997). Markov chains and the RISK board game. *Mathematics Magazine* 70(5), 349-357; Osborne, J. A.
#   (2003). Markov chains for the RISK board game revisited. *Mathematics Magazine* 76(2), 129-135: battle outcomes.
# - Cao, Z., Qin, T., Liu, T.-Y., Tsai, M.-F. and Li, H. (2007). Learning to rank: from pairwise approach to
#   listwise approach. *ICML 2007*: the search's learned end scorer.
# - Domination (GPL-3), the Java RISK program whose command logs are imported; DuckDB, Apache Arrow and Parquet,
#   papermill and jupytext, NumPy, pandas, SciPy, scikit-learn, numba, Dask, matplotlib and seaborn.

# %% [markdown]
# ## Reproducing this report
# `make report` regenerates the data, every table and figure, and this page; `make report QUICK=1` runs the same
# path on reduced sizes into its own folder. The command line, the data schema and the methods are described in
# `docs/`.

# %%
say("Figures in this report: " + ", ".join(f"`{f}`" for f in FIGURES) + ".")

# %%
headlines = write_headlines(readme_headlines(gen, named, agents.leaders, s))  # the README's results, word for word

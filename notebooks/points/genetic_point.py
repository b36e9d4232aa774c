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

# %% [markdown]
# # Genetic tuning of the minimax weights: one run
# Runs (or resumes) the GA of `riskcore.tuning.genetic` and validates the tuned weights head-to-head against the
# initial equal weights (`riskcore.experiments.genetic`). Executed by `riskcore sweep pipelines/genetic_tuning.yaml`;
# results go to `ga_history` and `ga_validation`.

# %% tags=["parameters"]
population: int = 100  # genes in the population
generations: int = 4  # generations
tournaments: int = 10  # tournaments per generation
tournament_size: int = 10  # genes per tournament (every pair plays)
games_per_pair: int = 2  # games per pair, seats rotated
top_k: int = 3  # parents taken from each tournament
children: int = 12  # children by averaging two parents
mutants: int = 3  # mutants with one weight redrawn
turn_cap: int = 200  # player turns before a game is a draw
depth: int = 2  # minimax search depth in plies
width: int = 4  # attacks considered per ply
validation_games: int = 1000  # head-to-head games, tuned vs equal weights
yardstick_games: int = 500  # games of each earlier generation's fittest gene against equal weights
seed: int = 0  # GA seed
sweep: str = ""  # set by the sweep runner
point: str = ""  # set by the sweep runner
output_dir: str = ""  # set by the sweep runner: where result tables go

# %%
from riskcore.experiments.genetic import tune_and_validate
from riskcore.notebook import emit
from riskcore.tuning.genetic import GAConfig

cfg = GAConfig(population=population, generations=generations, tournaments=tournaments,
               tournament_size=tournament_size, games_per_pair=games_per_pair, top_k=top_k, children=children,
               mutants=mutants, turn_cap=turn_cap, depth=depth, width=width, seed=seed)
history, validation, yardstick = tune_and_validate(cfg, validation_games,
                                                   name=f"{sweep or 'interactive'}-{point or 'ga'}",
                                                   yardstick_games=yardstick_games)
emit(history, "ga_history", output_dir)
emit(validation, "ga_validation", output_dir)
emit(yardstick, "ga_yardstick", output_dir)
history.groupby("generation").fitness.agg(["mean", "max"]).round(3)

# %%
validation.round(3)

# %%
yardstick.round(3)

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
# # PHATT weight sweep: one point
# Scores a list of inconsistent weights for one action kind at a time (or all kinds) on one focus level's training
# run, where the choice is made, and its test run, where it is reported. A grid whose best weight on the training
# run lies on its edge is widened there (halfway to 0 or to 1) until the best lies inside it. Executed by
# `riskcore sweep pipelines/phatt_weights.yaml`; results go to `phatt_sweep` (column `split`).

# %% tags=["parameters"]
focus: float = 0.8  # mission focus of the recognition experiment's runs to score
scheme: str = "simple"  # PHATT weighting scheme: simple or proportional
kinds: list[str] = ["all", "attack_won", "attack_lost", "reinforce", "defend_won", "defend_lost", "fortify"]  # kinds to vary, one at a time ("all": every kind)
consistent: float = 1.0  # consistent weight of that kind
inconsistent: list[float] = [0.98, 0.9, 0.7, 0.5, 0.3]  # inconsistent weights to score
lam: float = 0.7  # proportional scheme only: probability of a consistent action
widen: int = 4  # at most this many weights added beyond an edge of the grid
sweep: str = ""  # set by the sweep runner
point: str = ""  # set by the sweep runner
output_dir: str = ""  # set by the sweep runner: where result tables go

# %%
import pandas as pd

from riskcore.experiments.recognition.focus import experiment_runs
from riskcore.notebook import emit
from riskcore.recognition.features import load_features
from riskcore.recognition.recognisers import Recogniser
from riskcore.recognition.scoring import Scorer

scorers = {split: Scorer(load_features(experiment_runs(split).set_index("focus").run[focus]))
           for split in ("train", "test")}


def score(kind: str, value: float) -> pd.DataFrame:
    prefix = "" if kind == "all" else f"{kind}."
    rec = Recogniser.from_spec({"name": "phatt", "scheme": scheme, f"{prefix}c": consistent, f"{prefix}i": value,
                                "lam": lam})
    return pd.concat([scorer.phatt(rec.weights).reset_index().rename(columns={"point": "share"}).assign(split=split)
                      for split, scorer in scorers.items()]).assign(
        focus=focus, scheme=scheme, kind=kind, consistent=consistent, inconsistent=value, lam=lam,
        setting=rec.setting, declared=value in inconsistent)


# %%
rows = []
for kind in kinds:
    scored = {value: score(kind, value) for value in inconsistent}
    for _ in range(widen):  # the training run's best on an edge: look beyond it
        train = {v: d[d.split == "train"].log_loss.mean() for v, d in scored.items()}
        best, low, high = min(train, key=train.get), min(train), max(train)
        step = round(best / 2, 4) if best == low else round((1 + best) / 2, 4) if best == high else None
        if step is None or step in scored or not 0 < step < 1:
            break
        scored[step] = score(kind, step)
    rows += scored.values()
scores = pd.concat(rows, ignore_index=True)
emit(scores, "phatt_sweep", output_dir)
scores[(scores.share == 0.5) & (scores.split == "train")].pivot(index="kind", columns="inconsistent",
                                                                 values="top1").round(3)

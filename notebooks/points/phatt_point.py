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
# Scores a list of inconsistent weights for one action kind at a time (or all kinds) on one test run's stored
# pending-set counts. Executed by `riskcore sweep pipelines/phatt_weights.yaml`; results go to `phatt_sweep`.

# %% tags=["parameters"]
focus: float = 0.8  # mission focus of the recognition experiment's test run to score
scheme: str = "simple"  # PHATT weighting scheme: simple or proportional
kinds: list[str] = ["all", "attack_won", "attack_lost", "reinforce", "defend_won", "defend_lost", "fortify"]  # kinds to vary, one at a time ("all": every kind)
consistent: float = 1.0  # consistent weight of that kind
inconsistent: list[float] = [0.98, 0.9, 0.7, 0.5, 0.3]  # inconsistent weights to score
lam: float = 0.7  # proportional scheme only: probability of a consistent action
sweep: str = ""  # set by the sweep runner
point: str = ""  # set by the sweep runner
output_dir: str = ""  # set by the sweep runner: where result tables go

# %%
import pandas as pd

from riskcore.experiments.recognition import experiment_runs
from riskcore.notebook import emit
from riskcore.recognition.features import load_features
from riskcore.recognition.recognisers import Recogniser
from riskcore.recognition.scoring import Scorer

run = experiment_runs("test").set_index("focus").run[focus]
scorer = Scorer(load_features(run))

# %%
rows = []
for kind in kinds:
    prefix = "" if kind == "all" else f"{kind}."
    for value in inconsistent:
        rec = Recogniser.from_spec({"name": "phatt", "scheme": scheme, f"{prefix}c": consistent,
                                    f"{prefix}i": value, "lam": lam})
        score = scorer.phatt(rec.weights).reset_index().rename(columns={"point": "share"})
        rows.append(score.assign(focus=focus, scheme=scheme, kind=kind, consistent=consistent, inconsistent=value,
                                 lam=lam, setting=rec.setting))
scores = pd.concat(rows, ignore_index=True)
emit(scores, "phatt_sweep", output_dir)
scores[scores.share == 0.5].pivot(index="kind", columns="inconsistent", values="top1").round(3)

# %% [markdown]
# # PHATT weight sweep: one point
# Scores a list of inconsistent weights for one action kind (or all kinds) on one test run's stored
# pending-set counts. Executed by `riskcore sweep pipelines/phatt_weights.yaml`; results go to `phatt_sweep`.

# %% tags=["parameters"]
focus: float = 0.8  # mission focus of the test run: reads run "<run_prefix>-f<focus>"
run_prefix: str = "rec-test"  # prefix of the run name
scheme: str = "simple"  # PHATT weighting scheme: simple or proportional
kinds: str = "all,attack_won,attack_lost,reinforce,defend_won,defend_lost,fortify"  # kinds to vary, one at a time
consistent: float = 1.0  # consistent weight of that kind
inconsistent: str = "0.98,0.9,0.7,0.5,0.3"  # comma-separated inconsistent weights to score
lam: float = 0.7  # proportional scheme only: probability of a consistent action
sweep: str = ""  # set by the sweep runner
point: str = ""  # set by the sweep runner
output_dir: str = ""  # set by the sweep runner: where result tables go

# %%
import pandas as pd

from riskcore.notebook import emit
from riskcore.recognition.features import load_features
from riskcore.recognition.phatt import PhattWeights
from riskcore.recognition.scoring import Scorer

run = f"{run_prefix}-f{focus:g}"
scorer = Scorer(load_features(run))

# %%
rows = []
for kind in kinds.split(","):
    prefix = "" if kind == "all" else f"{kind}."
    for value in (float(x) for x in inconsistent.split(",")):
        weights = PhattWeights.parse(scheme, f"{prefix}c={consistent},{prefix}i={value},lam={lam}")
        score = scorer.phatt(weights).reset_index().rename(columns={"point": "share"})
        rows.append(score.assign(focus=focus, scheme=scheme, kind=kind, consistent=consistent, inconsistent=value,
                                 lam=lam, setting=weights.label()))
scores = pd.concat(rows, ignore_index=True)
emit(scores, "phatt_sweep", output_dir)
scores[scores.share == 0.5].pivot(index="kind", columns="inconsistent", values="top1").round(3)

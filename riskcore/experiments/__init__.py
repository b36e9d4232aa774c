"""Experiments: what to run, at which sizes, and where the results go.

The top layer of the package. Each module runs one experiment end to end and writes its tables: the recognition
train/test protocol (`recognition`), goal-based against exhaustive search (`search`, with its result cache and aim
tables), tournaments (`tournament`), the genetic tuning driver and its validation (`genetic`), refitting the
search's end scorer (`scorer`), benchmarks (`bench`), papermill sweeps (`sweep`) and the report (`report`). The
algorithm packages below (`agents`, `recognition`, `search`, `learning`, `tuning`) never import from here.
"""

# `riskcore experiment --seed`'s default; the search experiment's positions of n players come from seed + n
EXPERIMENT_SEED = 2013

"""Goal-based game-tree search for RISK (after Lisy et al., AAMAS 2009) and exhaustive max^n as its yardstick: the
abstract turn model, goals and goal policies, GB search, the tree-size estimate, and the learned end scorer."""

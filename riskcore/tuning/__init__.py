"""Parameter tuning: the genetic algorithm for the minimax agent's leaf weights."""

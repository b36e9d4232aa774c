"""Game-tree search for RISK: simplified-battle minimax (agents) and goal-based search (issue 6)."""

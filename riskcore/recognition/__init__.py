"""Mission recognition: infer a player's secret mission card from the actions an observer sees in a trace."""

"""Learning components: Monte Carlo control for dice choices."""

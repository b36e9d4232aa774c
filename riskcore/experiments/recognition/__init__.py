"""The mission-recognition study in one room: the focus-level experiment (`focus`, `focus_report`), the
generalisation experiment with its protocol (`protocol`, `generalisation`, `generalisation_report`), and the
training of the learned recogniser (`population`, `training`)."""

"""A head calibrated on a user's ratings: `fluency calibrate`.

The way in is `calibrate` (the command: ratings in, a bundle with the new genre out; what it
says of its choice, `report`). The head starts from the bundle's head for the genre (`start`)
and leaves it only where the ratings show better, round by round (`switch`: a paired bootstrap
over the user's inputs, bounds that hold for every candidate at once). How many ratings that
takes is the learning curve (`curves`; the command and its tables `learning_curve`, `python -m
training.calibration.learning_curve`; its figure `curve_plot`), judged against the shipped heads
refitted without the file (`shipped_held_out`). The candidates it fits are those of
`training.heads`.
"""

__all__ = [
    "calibrate",
    "curve_plot",
    "curves",
    "learning_curve",
    "report",
    "shipped_held_out",
    "start",
    "switch",
]

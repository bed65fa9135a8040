"""`python -m training.learning_curve`, the old name of `python -m
training.calibration.learning_curve`, kept for one release: it runs that command."""

from training.calibration.learning_curve import main

if __name__ == "__main__":
    raise SystemExit(main())

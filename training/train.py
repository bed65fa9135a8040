"""`python -m training.train`, the old name of `python -m training.gleu.train` (`fluency
train`), kept for one release: it runs that command."""

import logging

from training.gleu.train import main

if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO)
    raise SystemExit(main())

"""`python -m training.heads.taught`: what the taught heads learn from, read once (`prepare`)."""

from training.heads.taught.prepare import main

raise SystemExit(main())

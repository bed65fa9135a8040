"""`python -m training.heads`: a tier's heads chosen and written (`training.heads.tier`)."""

from training.heads.tier import main

raise SystemExit(main())

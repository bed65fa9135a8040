"""`python -m training.heads.learned`: the learned heads chosen alone (`command`)."""

from training.heads.learned.command import main

raise SystemExit(main())

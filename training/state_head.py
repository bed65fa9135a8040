"""`python -m training.state_head`, the old name of `python -m training.heads.learned` (the
learned heads on SmolLM2's states), kept for one release: it runs that command."""

from training.heads.learned import main

if __name__ == "__main__":
    raise SystemExit(main())

"""What heads are chosen on: judged files read into columns per reading (`files`), a judged file
as `HeadFile` and its cuts into folds of whole inputs (`judged`), and the checks every head must
pass whatever people rated: shuffles, runs and loops (`checks.ScrambleCheck`) and text said again
(`said_again`). A new column, reading or check goes here."""

__all__ = ["checks", "files", "judged", "said_again"]

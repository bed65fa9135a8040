"""The default tier taught by the neural tier's learned head: a ridge on the default's own
columns fitted to what the learned head (the teacher) says of tens of thousands of texts, the
development outputs and the GLEU stage's real and generated sentences, so that the head the
default serves learns from every rating the teacher learned from and from texts nobody rated.

- `texts`: the texts it learns from; `teacher`: SmolLM2's states of them, the teacher refitted
  with a genre left out; `student`: the ridge; `prepare`: all of them read once
  (`python -m training.heads.taught`); `candidates`: the taught heads decided by the one chooser
  beside the linear ones; `report`: their tables from a heads report
  (`python -m training.heads.taught.report`).

    python -m training.heads.taught --jobs 2   # the texts read once (hours on 2 cores)
    python -m training.heads --model default --taught --jobs 2 --write
"""

__all__ = ["candidates", "prepare", "report", "student", "teacher", "texts"]

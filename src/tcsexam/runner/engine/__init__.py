"""The batch engine: a resumable, keyed batch of named runs (`batch`), what its pools run and
return (`contract`), and the in-process pool (`pool`); Ray's pool (`tcsexam.runner.ray`) sits
below it."""

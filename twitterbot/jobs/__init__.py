"""Long-running jobs that post their progress and their result (see `twitterbot.progress`).

Every job has the same shape, one folder each (`pegs/`, `monkey/`, `puzzles/`); copy the one
next door when you add a job:

- **A pure part** (a model, a solver, a simulation: `pegs/board.py`, `pegs/solve.py`,
  `pegs/count.py`, `monkey/simulation.py`, `monkey/texts.py`) that knows nothing of posting,
  printing or the command line. It takes its inputs as values, yields progress events
  (dataclasses such as `Searching`, `Solved`, `Impossible`) and, where a run can be long, can
  save and resume its state. It is tested on its own, against an independent brute force.
- **A job module** (`job.py`) that runs the pure part and turns its events into reporter calls:
  `reporter.update(message, milestone=...)` now and then, `reporter.done(result)` once, a live
  status line on a terminal, files written with `files.write_atomically`.
- **A command module** (`command.py`) with ``register(parser, commands)``, which adds the job's
  subcommand with `arguments.add_command` (taking ``--dry-run``; the progress flags through
  `progress.commands.add_progress_flags`) and one line in `twitterbot.cli.COMMANDS`.

A job may import progress mode, the scheduled post's modules, the networks and the foundation,
never another job (tests/test_layout.py checks it). What jobs share sits beside their folders:
`native.py` builds a job's optional C kernel (the monkey's `kernel.c`), always with a numpy path
that gives the same results.
"""

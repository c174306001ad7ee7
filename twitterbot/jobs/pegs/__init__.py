"""The peg solitaire job: boards, a solver, a level-by-level counter, the job and its command."""

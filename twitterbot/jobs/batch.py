"""Many independent solves, here or on a Dask cluster, their results in the order asked for.

`pegs solve --batch FILE` and `puzzle KIND --batch FOLDER` give each board or puzzle to one task:
a pure function of its input, so a task redone after a lost worker gives the same text::

    for text in in_order(solve_text, [(board,) for board in boards], cluster):
        print(text, end="")
"""

from __future__ import annotations

from typing import Any, Callable, Iterator, Optional, Sequence, Tuple

__all__ = ["in_order"]


def in_order(
    function: Callable[..., Any], arguments: Sequence[Tuple[Any, ...]], cluster: Optional[Any] = None
) -> Iterator[Any]:
    """`function(*args)` for each of `arguments`, in their order: one after another here, or all
    at once on `cluster`'s workers (jobs.cluster.Cluster), each result as soon as it and those
    before it are done."""
    if cluster is None:
        for args in arguments:
            yield function(*args)
        return
    futures = [cluster.submit(function, *args) for args in arguments]
    for future in futures:
        yield cluster.result(future)

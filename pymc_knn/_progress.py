"""Progress bars for the package's own long loops, drawn as PyMC draws its own (rich)."""

from __future__ import annotations

import importlib.util
from collections.abc import Generator, Iterable
from typing import TypeVar

T = TypeVar("T")


def progress(
    items: Iterable[T], total: int, description: str, enabled: bool = True
) -> Generator[T, None, None]:
    """``items`` unchanged, with a progress bar of ``total`` steps while they are consumed.

    The bar is transient (gone once the loop ends) and is drawn only in a terminal, or in a
    notebook with ipywidgets installed (rich's Jupyter display; without it rich would warn), and
    when ``enabled``: a log file or a captured stream gets nothing. A loop that stops early
    (``break``) closes it too.
    """
    if enabled:
        from rich.console import Console

        console = Console()
        enabled = (console.is_terminal and not console.is_dumb_terminal) or (
            console.is_jupyter and importlib.util.find_spec("ipywidgets") is not None
        )
    if not enabled:
        yield from items
        return
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        TextColumn("{task.completed}/{task.total}"),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task(description, total=total)
        for item in items:
            yield item
            bar.advance(task)

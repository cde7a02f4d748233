"""Progress events, as the `progress=` callback of mxq_compile, parse,
quantize and run_cli receives them: the same events the command line's
progress display draws (docs/python.md, "Progress")."""
from dataclasses import dataclass
from typing import Optional


@dataclass(frozen=True)
class ProgressEvent:
    """One step of a command beginning, advancing or ending.

    kind       "begin", "advance" or "end"
    task       the command: "compile", "quantize", "benchmark"
    step       one of the task's steps ("load", "optimize", "calibrate",
               "accuracy-target", "report", "lower", "write"; a
               benchmark's "load", "first run", "warm-up", "measure")
    detail     within the step, e.g. "pass 1/2"; may be ""
    index      the step's place among the task's `steps`, from 1
    done       work done in the step, of `total` `unit`s ("samples",
               "runs", "ms"); total is 0 for a step that is not counted
    elapsed_s  seconds since the step (or pass) began
    eta_s      seconds left in it, estimated from the rate so far; None
               while unknown
    """
    kind: str
    task: str
    step: str
    detail: str
    index: int
    steps: int
    done: int
    total: int
    unit: str
    elapsed_s: float
    eta_s: Optional[float]

    @property
    def fraction(self):
        """done / total, or None for a step that is not counted."""
        return self.done / self.total if self.total > 0 else None


def _adapter(callback):
    """The native part's callback: a dict per event, as a ProgressEvent."""
    if callback is None:
        return None
    if not callable(callback):
        raise TypeError(f"progress must be callable, not {type(callback).__name__}")
    return lambda event: callback(ProgressEvent(**event))

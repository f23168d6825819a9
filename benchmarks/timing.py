"""How the benchmarks time contenders, and the load line they print: the one home of both.

`interleaved(contenders, rounds, block)` runs every contender in rounds, in
turn — A, B, C, then C, B, A on the next round — so that whatever else the
shared machine does falls on every contender alike. Within a round each
contender runs `block` calls back to back, and every call is timed on its
own (wall clock and this process's CPU time): a call preempted by another
process is then one outlier the median drops, whatever the contender's speed
(timing whole blocks would charge the slower contender more preemptions).
`prepare` runs untimed before each call (a pipeline's `reset`, say).

`load()` is the line every script prints with its figures: ratios measured
at load 10 on 2 cores are not figures measured on an idle machine.

Scripts run as `python benchmarks/<name>.py`, which puts this folder on
`sys.path`, so they import it as `from timing import ...`.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from cortex.runtime.threads import machine_cores


@dataclass
class Samples:
    """One contender's per-call times in seconds, in the order they were taken."""

    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)

    def median_us(self) -> float:
        return 1e6 * statistics.median(self.wall)

    def min_us(self) -> float:
        return 1e6 * min(self.wall)


def interleaved(
    contenders: Mapping[str, Callable[[], object]],
    rounds: int,
    block: int = 1,
    prepare: Mapping[str, Callable[[], object]] | None = None,
) -> dict[str, Samples]:
    """`rounds × block` timed calls of every contender, the order alternating per round (see the module)."""
    if rounds < 1 or block < 1:
        raise ValueError(f"rounds and block must be at least 1, got {rounds} and {block}")
    samples = {name: Samples() for name in contenders}
    prepare = prepare or {}
    wall, cpu = time.perf_counter, time.process_time
    forward = list(contenders.items())
    for r in range(rounds):
        for name, fn in forward if r % 2 == 0 else forward[::-1]:
            before = prepare.get(name)
            into = samples[name]
            for _ in range(block):
                if before is not None:
                    before()
                cpu_start = cpu()
                start = wall()
                fn()
                into.wall.append(wall() - start)
                into.cpu.append(cpu() - cpu_start)
    return samples


def load() -> str:
    """`load average 1.23 0.98 0.87 on 2 cores`: printed beside every figure."""
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f} on {machine_cores()} cores"

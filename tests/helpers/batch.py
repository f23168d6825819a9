"""The batch mode's test inputs and its manifest, for the threads and the Ray batch tests alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from helpers.videos import write_video


def clip(path: Path, size: tuple[int, int] = (64, 96), frames: int = 5) -> str:
    """A short synthetic MJPG video at `path` (its folder made), as the path text cortex-run takes."""
    path.parent.mkdir(parents=True, exist_ok=True)
    return str(write_video(path, frames, size))


def manifest(out: Path) -> list[dict[str, Any]]:
    """The records of `out/manifest.jsonl`, one per video, in order."""
    return [json.loads(line) for line in (out / "manifest.jsonl").read_text().splitlines()]

"""Video in and out: the frame sources (`source`), the synthetic video, the overlay pictures.

FFmpeg (inside OpenCV) prints its decoder's complaints about a damaged file straight to the process's
stderr (`[msmpeg4 @ 0x…] ac-tex damaged at 40 8`). Cortex reports what a damaged file costs in its own
words instead (`VideoSource.warnings`: truncated, frames that failed to decode), so importing this package
sets `OPENCV_FFMPEG_LOGLEVEL` to -8 (FFmpeg's AV_LOG_QUIET) unless it is set already: OpenCV reads it when
the process first opens a video, so set it yourself (16: FFmpeg's errors; `OPENCV_FFMPEG_DEBUG=1`: all) to
see FFmpeg's own lines.
"""

import os

os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")

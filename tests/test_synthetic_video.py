"""The synthetic video keeps the promises its ground truth makes, and open_video pads frames."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from cortex.errors import CortexError
from cortex.video.source import DEFAULT_SYNTHETIC_FRAMES, open_video
from cortex.video.synthetic import SCENE_LENGTH, STATIC_AT, SyntheticVideo

N = 60  # three scenes
BLUR_THRESHOLD = 100.0  # the L2 pipeline's blur gate


@pytest.fixture(scope="module")
def video() -> SyntheticVideo:
    return SyntheticVideo()


@pytest.fixture(scope="module")
def frames(video) -> list[np.ndarray]:
    return list(video.frames(N))


def sharpness(frame: np.ndarray) -> float:
    """Variance of the Laplacian of the gray frame: what the blur gate measures."""
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).astype(np.float64)
    return float(cv2.Laplacian(gray, cv2.CV_64F).var())


def mean_abs_diff(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean())


def test_shape_and_dtype(frames):
    assert len(frames) == N
    for f in frames:
        assert f.shape == (480, 640, 3) and f.dtype == np.uint8


@pytest.mark.parametrize("size", [(470, 630), (720, 1280), (64, 96)])
def test_other_sizes(size):
    v = SyntheticVideo(*size)
    f = v.frame(3)
    assert f.shape == (*size, 3) and f.dtype == np.uint8
    assert v.text_blocks(3, 32).shape == (-(-size[0] // 32), -(-size[1] // 32))


def test_deterministic_in_any_order(frames):
    other = SyntheticVideo()
    for i in (37, 5, 20, 5, 59, 0):
        assert np.array_equal(other.frame(i), frames[i]), f"frame {i} differs when asked out of order"


def test_frame_is_a_fresh_array(video):
    """Callers may draw on a frame without changing the video (backgrounds are cached)."""
    f = video.frame(1)
    f[:] = 0
    assert video.frame(1).any()


def test_seed_changes_the_video(frames):
    assert not np.array_equal(SyntheticVideo(seed=1).frame(0), frames[0])


def test_a_scene_s_background_is_built_once_for_all_its_frames(monkeypatch):
    """What keeps a frame cheap: its scene's background (a full-size gradient, dots and noise) is built
    once per scene, and a frame only draws the moving shapes and the text on a copy. Counted, not timed:
    a time bound per frame fails on a loaded machine."""
    import cortex.video.synthetic as synthetic

    built = []
    original = synthetic.make_background
    monkeypatch.setattr(synthetic, "make_background", lambda *args, **kw: built.append(args[1:]) or original(*args, **kw))
    v = SyntheticVideo(seed=424242)  # a seed no other test draws: none of its scenes is cached yet
    for i in range(2 * SCENE_LENGTH):
        v.frame(i)
    assert built == [(480, 640), (480, 640)]


def test_blur_gate_calibration(video, frames):
    """Every blurred frame is far below the gate's threshold, every sharp one far above."""
    blurred = [sharpness(f) for i, f in enumerate(frames) if video.is_blurred(i)]
    sharp = [sharpness(f) for i, f in enumerate(frames) if not video.is_blurred(i)]
    assert len(blurred) >= 3 and sharp
    assert max(blurred) < BLUR_THRESHOLD / 10, blurred
    assert min(sharp) > BLUR_THRESHOLD * 5, min(sharp)


def test_consecutive_blurred_frames_exist(video):
    assert any(video.is_blurred(i) and video.is_blurred(i + 1) for i in range(N - 1))


def test_static_metadata_matches_pixels(video, frames):
    """is_static(i) exactly when frame i repeats frame i − 1."""
    identical = [i for i in range(1, N) if np.array_equal(frames[i], frames[i - 1])]
    assert identical, "the video needs at least one pair of identical frames"
    assert identical == [i for i in range(1, N) if video.is_static(i)]


def test_cut_metadata_matches_pixels(video, frames):
    """A cut changes the picture far more than any other step between frames."""
    cuts = [i for i in range(1, N) if video.is_cut(i)]
    assert cuts == [SCENE_LENGTH, 2 * SCENE_LENGTH]
    diffs = {i: mean_abs_diff(frames[i], frames[i - 1]) for i in range(1, N)}
    others = [d for i, d in diffs.items() if i not in cuts]
    for c in cuts:
        assert diffs[c] > 3 * max(others), (c, diffs[c], max(others))
        # the whole background changes: the mean brightness moves a lot
        assert abs(float(frames[c].mean()) - float(frames[c - 1].mean())) > 40


def test_text_metadata_matches_pixels(video, frames):
    """Fully covered text pixels carry the text colour (text is drawn last), and the text drifts."""
    for i in range(N):
        if video.is_blurred(i):
            continue
        mask = video.text_mask(i)
        core = video.text_coverage(i) == 255
        assert core.sum() > 500 and not (core & ~mask).any()
        colours = np.unique(frames[i][core].reshape(-1, 3), axis=0)
        assert len(colours) == 1, f"frame {i}: text pixels have {len(colours)} colours"
        grid = video.text_blocks(i, 32)
        ys, xs = np.nonzero(mask)
        assert grid[ys // 32, xs // 32].all() and grid.sum() == len(set(zip(ys // 32, xs // 32)))
    assert not np.array_equal(video.text_mask(1), video.text_mask(2)), "the text should drift"
    assert np.array_equal(video.text_mask(STATIC_AT), video.text_mask(STATIC_AT - 1))


def test_shapes_move(video):
    assert not np.array_equal(video.shape_mask(1), video.shape_mask(2))


# ---- open_video --------------------------------------------------------


def test_open_synthetic_default():
    source = open_video(None)
    assert source.size == (480, 640)
    assert source.frame_count == DEFAULT_SYNTHETIC_FRAMES and source.fps > 0
    first = next(iter(source))
    assert np.array_equal(first, SyntheticVideo().frame(0))


def test_open_synthetic_of_any_size_gives_the_frames_as_they_are():
    """No padding in the source: a pipeline pads in IR (cortex.pad_frame, tests/test_pad_frames.py)."""
    source = open_video(None, height=470, width=630, frames=3)
    assert source.size == (470, 630)
    got = list(source)
    assert len(got) == 3 == source.frame_count
    assert got[2].shape == (470, 630, 3) and got[2].dtype == np.uint8
    assert np.array_equal(got[2], SyntheticVideo(470, 630).frame(2))


def test_open_video_takes_its_options_by_name():
    """`block` is gone from the source: a caller still passing it positionally fails loudly."""
    with pytest.raises(TypeError):
        open_video(None, 32, 3)  # type: ignore[misc]


@pytest.fixture(scope="module")
def video_file(tmp_path_factory):
    """A real 470×630 MJPEG file of 6 synthetic frames."""
    path = tmp_path_factory.mktemp("video") / "clip.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 25.0, (630, 470))
    assert writer.isOpened(), "OpenCV cannot write MJPEG here"
    source = SyntheticVideo(470, 630)
    for f in source.frames(6):
        writer.write(f)
    writer.release()
    return path, [source.frame(i) for i in range(6)]


def test_open_file_reads_every_frame(video_file):
    path, originals = video_file
    source = open_video(path)
    assert source.size == (470, 630)
    assert source.fps == pytest.approx(25.0)
    assert source.frame_count == 6
    got = list(source)
    assert len(got) == 6
    for frame, original in zip(got, originals):
        assert frame.shape == (470, 630, 3) and frame.dtype == np.uint8
        assert mean_abs_diff(frame, original) < 8  # JPEG is lossy
    assert all(np.array_equal(a, b) for a, b in zip(got, source)), "a second pass reads the same frames"


def test_open_file_frame_cap(video_file):
    path, _ = video_file
    source = open_video(str(path), frames=4)
    assert source.frame_count == 4 and len(list(source)) == 4


def test_missing_file_is_a_clear_error(tmp_path):
    missing = tmp_path / "nope.mp4"
    with pytest.raises(CortexError, match="no such video file") as e:
        open_video(str(missing))
    assert str(missing) in str(e.value) and "\n" not in str(e.value)


def test_unreadable_file_is_a_clear_error(tmp_path):
    bogus = tmp_path / "notes.mp4"
    bogus.write_text("not a video")
    with pytest.raises(CortexError, match="cannot open|no frame") as e:
        open_video(str(bogus))
    assert str(bogus) in str(e.value)


def test_bad_arguments_are_clear_errors():
    with pytest.raises(CortexError, match="frames"):
        open_video(None, frames=-1)
    with pytest.raises(CortexError, match="64x64"):
        open_video(None, height=10, width=10)

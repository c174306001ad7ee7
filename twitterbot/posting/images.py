"""Pictures and videos in the tweets file: Markdown's image syntax, up to four pictures anywhere
in a line, or one video (MP4, MOV or WebM) alone::

    Sunrise over the beans ![Orange sky above rows of runner beans](photos/sunrise.jpg)
    Bees at the lavender ![Bees landing on lavender flowers, slowed down](clips/bees.mp4)

The post's text is the line without its pictures (the spaces around each one closed up); a path
is read from the tweets file's folder. The checks here are the cheap ones a scheduled run can
afford on every line without Pillow: the alt text is there and short enough for every network in
POST_TO, the file exists and starts like a picture. Fitting each picture to each network
(`pictures.prepare`) happens for the line a run posts, and for every line in `check`::

    split_images("Hi ![A cat](cat.jpg)", folder=Path("/home/pi/bot"))
    # ('Hi', (LineImage(path=PosixPath('/home/pi/bot/cat.jpg'), written='cat.jpg', alt='A cat'),))
    image_problems(text, images, config[POST_TO])    # what is wrong with them, worded for the user
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, List, Optional, Sequence, Tuple

from ..networks import Network
from ..pictures.limits import MAX_IMAGES, VIDEO_ALONE, ImageLimits, strictest_alt
from ..pictures.prepare import Attachment
from ..pictures.video import VIDEO_EXTENSIONS

__all__ = ["LineImage", "MARK", "image_problems", "split_images", "how_sent"]

MARK = "!["  # a line without it has no pictures, and is read exactly as before pictures existed
# ![alt](path): the alt text holds no "]", the path no ")" (Markdown's own rule, without escapes).
_IMAGE = re.compile(r"[ \t]*!\[([^\]\n]*)\]\(([^)\n]*)\)[ \t]*")


@dataclass(frozen=True)
class LineImage:
    """One picture of a line: the file (resolved from the tweets file's folder), the path as the
    line writes it, and its alt text."""

    path: Path
    written: str
    alt: str

    @property
    def is_video(self) -> bool:
        """Whether the line names a video (by its file's extension: .mp4, .m4v, .mov, .webm)."""
        return self.path.suffix.lower() in VIDEO_EXTENSIONS

    @property
    def attachment(self) -> Attachment:
        return Attachment(self.path, self.alt, self.written, kind="video" if self.is_video else "picture")


def split_images(post: str, folder: Path) -> Tuple[str, Tuple[LineImage, ...]]:
    """The text of a line without its pictures, and the pictures in the order written."""
    if MARK not in post:
        return post, ()
    found: List[LineImage] = []

    def take(match: re.Match[str]) -> str:
        written = match.group(2).strip().strip("<>")
        found.append(LineImage(folder / written, written, match.group(1).strip()))
        # A picture between words leaves one space; at the start or end of the line, none.
        inside = match.start() > 0 and match.end() < len(post)
        return " " if inside else ""

    text = _IMAGE.sub(take, post).strip()
    return text, tuple(found)


def image_problems(
    text: str, images: Tuple[LineImage, ...], networks: Sequence[Network], *, home: Optional[Path] = None
) -> List[str]:
    """What keeps a line's pictures from being posted, each worded for the user ("has ..."),
    checked without Pillow: the alt text, the count, the files and their first bytes, and (given
    `home`, the folder of the file the line is in) that no picture is another bot's of a flock."""
    from ..files import not_a_file
    from ..pictures.prepare import PictureError, open_picture_file, sniff
    from ..pictures.video import sniff_video

    problems: List[str] = []
    if images and not text.strip():
        problems.append(
            "has only pictures: add a few words before or after them (the post's text, which also "
            "tells followers without pictures what the post is about)"
        )
    if len(images) > MAX_IMAGES:
        problems.append(f"has {len(images)} pictures; a post takes {MAX_IMAGES}: move the others to another line")
    videos = [image for image in images if image.is_video]
    if videos and len(images) > 1:
        problems.append(
            f"has a video ({videos[0].written}) beside {len(images) - 1} other picture(s) or video(s); "
            f"{VIDEO_ALONE}: move the others to another line"
        )
    strictest = strictest_alt([network.image_limits() for network in networks])
    limit = strictest.max_alt
    for image in images:
        if not image.alt:
            problems.append(
                f"has a picture without alt text ({image.written}): describe what it shows between the "
                f"brackets, ![like this]({image.written}), for people who cannot see it"
            )
        elif len(image.alt) > limit:
            problems.append(
                f"has alt text of {len(image.alt)} characters for {image.written}; {strictest.where} "
                f"takes {limit}: shorten it"
            )
        if not image.written:
            problems.append("has a picture without a path: write the file's path between the parentheses")
            continue
        theirs = _bot_of(image.path) if home is not None else None
        if theirs is not None and theirs != _bot_of(home / ".env"):
            problems.append(
                f"names a picture in another bot's folder ({image.path}): a bot of a flock posts only its own "
                "pictures; copy it into this bot's folder"
            )
            continue
        try:
            found = image.path.stat()
        except FileNotFoundError:
            problems.append(
                f"names a picture that does not exist ({image.path}): check the path (it is read from the tweets file's folder)"
            )
            continue
        except OSError as exc:
            problems.append(
                f"names a picture that cannot be read ({image.path}: {exc.strerror}): check its permissions"
            )
            continue
        kind = not_a_file(found.st_mode)  # a FIFO would block the run, a device never ends: neither is opened
        if kind:
            problems.append(f"names {kind}, not a picture ({image.path}): name the picture file")
            continue
        try:
            with open_picture_file(image.path, image.written) as file:
                head = file.read(16)
        except PictureError as exc:
            problems.append(f"names a picture that cannot be read: {exc}")
            continue
        if image.is_video:
            if sniff_video(head) is None:
                problems.append(f"names {image.written}, which is not a video (MP4, MOV or WebM): replace it")
        elif sniff(head) is None:
            problems.append(f"names {image.written}, which is not a picture (JPEG, PNG, GIF or WebP): replace it")
    return problems


def _bot_of(path: Path) -> Optional[Path]:
    """The bot `path` belongs to: the nearest folder at or above it (links followed) that holds a
    `.env` (a bot's folder of a flock, or the checkout's own); None when no folder above does."""
    try:
        where = path.resolve()
    except (OSError, RuntimeError):
        return None
    for folder in where.parents:
        if (folder / ".env").is_file():
            return folder
    return None


def how_sent(images: Tuple[LineImage, ...], limits: Sequence[ImageLimits]) -> Iterator[Tuple[LineImage, str, object]]:
    """Each picture prepared for each network (`limits`, one per network; `check`): (picture, the
    network's name, the `PreparedImage` or the `PictureError` that keeps it off that network)."""
    from ..pictures.prepare import PictureError

    for image in images:
        for chosen in limits:
            try:
                yield image, chosen.where, image.attachment.prepare(chosen)
            except PictureError as exc:
                yield image, chosen.where, exc

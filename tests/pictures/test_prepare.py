"""pictures/prepare.py: each network gets an upright picture without metadata, within its limits,
and the user's file is never changed."""

from __future__ import annotations

import hashlib
import io
from dataclasses import replace
from pathlib import Path

import images
import pytest
from conftest import REGISTRY
from PIL import Image

from twitterbot.networks.mastodon.instance import limits_from_instance
from twitterbot.pictures.limits import strictest_alt
from twitterbot.pictures.prepare import PictureError, prepare, sniff

# Each network's own limits, as its module states them (REGISTRY.network(name).image_limits()).
LIMITS = {name: REGISTRY.network(name).image_limits() for name in ("x", "mastodon", "bluesky")}


@pytest.fixture(scope="module")
def phone_photo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return images.photo(tmp_path_factory.mktemp("photo") / "garden.jpg")


@pytest.mark.parametrize("network", ["x", "mastodon", "bluesky"])
def test_a_phone_photo_is_turned_upright_stripped_and_fitted(phone_photo: Path, network: str) -> None:
    before = hashlib.sha256(phone_photo.read_bytes()).hexdigest()
    limits = LIMITS[network]
    prepared = prepare(phone_photo, "Beans at sunrise", limits)
    assert hashlib.sha256(phone_photo.read_bytes()).hexdigest() == before  # the user's file is only read
    assert prepared.mime_type == "image/jpeg" and len(prepared.data) <= limits.max_bytes
    assert not images.has_location(prepared.data)
    with Image.open(io.BytesIO(prepared.data)) as picture:
        assert picture.format == "JPEG" and picture.size == (prepared.width, prepared.height)
        assert picture.height > picture.width  # stored 4000x3000 sideways: upright it is portrait
        assert abs(picture.width / picture.height - 3 / 4) < 0.01
        red, green, _ = picture.convert("RGB").getpixel((picture.width - 5, 5))
        assert red > 150 and green < 100  # the red corner ends up at the top right, as orientation 6 says
    assert "turned upright (EXIF orientation)" in prepared.steps and "metadata removed" in prepared.steps


def test_bluesky_gets_a_smaller_photo_x_the_full_one(phone_photo: Path) -> None:
    x = prepare(phone_photo, "alt", LIMITS["x"])
    bluesky = prepare(phone_photo, "alt", LIMITS["bluesky"])
    assert len(bluesky.data) <= 2_000_000 < len(x.data) or bluesky.width < x.width
    assert bluesky.describe().startswith("JPEG, ") and "scaled down from 3000x4000" in bluesky.describe()


def test_a_screenshot_stays_png_when_it_fits(tmp_path: Path) -> None:
    shot = images.screenshot(tmp_path / "shot.png")
    prepared = prepare(shot, "A settings page", LIMITS["x"])
    assert prepared.mime_type == "image/png"
    assert (prepared.width, prepared.height) == (int(1080 * 4096 / 6000), 4096)  # X's longest side
    assert not images.has_location(prepared.data)
    full = prepare(shot, "A settings page", LIMITS["mastodon"])
    assert (full.width, full.height) == (1080, 6000) and full.mime_type == "image/png"


def test_a_png_too_big_as_png_becomes_a_jpeg(tmp_path: Path) -> None:
    noisy = tmp_path / "noise.png"
    Image.effect_noise((1500, 1500), 80).convert("RGB").save(noisy)
    assert noisy.stat().st_size > 2_000_000
    prepared = prepare(noisy, "Static", LIMITS["bluesky"])
    assert prepared.mime_type == "image/jpeg" and len(prepared.data) <= 2_000_000
    assert any("too big: made a JPEG" in step for step in prepared.steps)


def test_a_transparent_png_too_big_is_flattened_on_white(tmp_path: Path) -> None:
    path = tmp_path / "logo.png"
    noise = Image.effect_noise((1500, 1500), 80).convert("RGBA")
    noise.paste((0, 0, 0, 0), (0, 0, 300, 300))
    noise.save(path)
    prepared = prepare(path, "A logo", replace(LIMITS["bluesky"], max_bytes=600_000))
    with Image.open(io.BytesIO(prepared.data)) as picture:
        assert picture.mode == "RGB" and min(picture.getpixel((10, 10))) > 230
    assert len(prepared.data) <= 600_000


def test_an_animated_gif_goes_as_it_is_where_allowed(tmp_path: Path) -> None:
    gif = images.animated_gif(tmp_path / "wave.gif")
    prepared = prepare(gif, "A waving hand", LIMITS["x"])
    assert prepared.data == gif.read_bytes() and prepared.mime_type == "image/gif"
    # Bluesky shows no animated GIF: it gets a video (tests/video), or, where a network takes
    # neither, the GIF is refused.
    no_video = replace(LIMITS["bluesky"], video_bytes=0)
    with pytest.raises(PictureError, match="wave.gif is animated; Bluesky shows no animated pictures"):
        prepare(gif, "A waving hand", no_video)


@pytest.mark.parametrize(
    "make, message",
    [
        (images.damaged, "is damaged and cannot be read"),
        (images.text_named_png, "is not a picture"),
    ],
)
def test_files_that_are_not_pictures_are_named(tmp_path: Path, make, message: str) -> None:
    path = make(tmp_path / "bad.png")
    with pytest.raises(PictureError, match=message) as caught:
        prepare(path, "alt", LIMITS["x"], name="photos/bad.png")
    assert "photos/bad.png" in str(caught.value) and caught.value.exit_status == 65


def test_alt_text_is_required_and_within_the_limit(phone_photo: Path) -> None:
    with pytest.raises(PictureError, match="no alt text"):
        prepare(phone_photo, "  ", LIMITS["x"])
    with pytest.raises(PictureError, match="1001 characters; X takes 1000"):
        prepare(phone_photo, "a" * 1001, LIMITS["x"])


def test_a_grammar_s_picture_may_go_without_alt_text_and_its_bytes_lose_their_metadata(tmp_path: Path) -> None:
    """CBDQ's pictures had no alt text: a drawn or fetched picture (`alt_optional`) goes without,
    and like every picture it is written again from its pixels alone."""
    from twitterbot.pictures.prepare import Attachment

    photo = images.photo(tmp_path / "fetched.jpg", size=(400, 300))
    limits = REGISTRY.network("x").image_limits()
    fetched = Attachment(photo.read_bytes(), "", "fetched.jpg", alt_optional=True)
    prepared = fetched.prepare(limits)
    assert prepared.alt == "" and b"PhoneMaker" not in prepared.data and b"Exif" not in prepared.data
    with pytest.raises(PictureError, match="no alt text"):
        Attachment(photo.read_bytes(), "", "fetched.jpg").prepare(limits)


def test_a_missing_file(tmp_path: Path) -> None:
    with pytest.raises(PictureError, match="does not exist"):
        prepare(tmp_path / "gone.jpg", "alt", LIMITS["x"])


def test_sniff_knows_pictures_by_their_first_bytes(tmp_path: Path, phone_photo: Path) -> None:
    assert sniff(phone_photo.read_bytes()[:16]) == "image/jpeg"
    assert sniff(images.screenshot(tmp_path / "s.png", (40, 40)).read_bytes()[:16]) == "image/png"
    assert sniff(images.animated_gif(tmp_path / "a.gif").read_bytes()[:16]) == "image/gif"
    assert sniff(b"this is not a picture") is None


def test_mastodon_limits_come_from_the_instance() -> None:  # networks/mastodon/instance.py reads them
    instance = {
        "configuration": {
            "media_attachments": {
                "supported_mime_types": ["image/jpeg", "image/png", "video/mp4"],
                "image_size_limit": 16777216,
                "image_matrix_limit": 33177600,
                "description_limit": 1500,
            }
        }
    }
    limits = limits_from_instance(instance)
    assert (limits.max_bytes, limits.max_pixels, limits.max_alt) == (16777216, 33177600, 1500)
    assert limits.mime_types == {"image/jpeg", "image/png"} and not limits.animated_gif_bytes
    assert limits_from_instance({}) == LIMITS["mastodon"]


def test_the_strictest_alt_limit() -> None:
    assert strictest_alt([LIMITS["mastodon"], LIMITS["bluesky"]]).network == "mastodon"
    assert strictest_alt([LIMITS["bluesky"], LIMITS["x"]]).max_alt == 1000


def test_a_photo_over_the_decode_limit_is_decoded_at_half_size(tmp_path: Path) -> None:
    big = images.photo(tmp_path / "big.jpg", size=(5600, 4200), orientation=1, quality=80)  # 23.5 megapixels
    prepared = prepare(big, "A big photo", LIMITS["x"])
    assert (prepared.width, prepared.height) == (2800, 2100)  # 1/2, not X's 4096 a side
    assert "scaled down from 5600x4200 to fit X's limits" in prepared.describe()


# -- hostile files (issue 36): whatever the file, a PictureError, within the memory budget --------


def test_a_picture_of_too_many_pixels_is_refused_from_its_header_naming_its_size(tmp_path: Path) -> None:
    import resource

    bomb = images.many_pixels_png(tmp_path / "bomb.png")  # 144 megapixels in a few hundred kilobytes
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(PictureError, match=r"bomb.png is 12,000x12,000 pixels \(144.0 megapixels in [\d,]+ bytes\)"):
        prepare(bomb, "A bomb", LIMITS["x"])
    grown_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    assert grown_mib < 20  # decoded, it would be 550 MiB and more


def test_a_webp_has_a_lower_pixel_budget_than_a_png(tmp_path: Path) -> None:
    webp = tmp_path / "wide.webp"
    Image.new("RGB", (3000, 2000), (30, 90, 200)).save(webp, "WEBP", quality=10)  # 6 MP: libwebp's buffers are big
    png = tmp_path / "wide.png"
    Image.new("RGB", (3000, 2000), (30, 90, 200)).save(png, "PNG")
    with pytest.raises(PictureError, match="wide.webp is 3,000x2,000 pixels"):
        prepare(webp, "Blue", LIMITS["x"])
    assert prepare(png, "Blue", LIMITS["x"]).mime_type == "image/png"


def test_a_big_jpeg_is_still_decoded_small_rather_than_refused(tmp_path: Path) -> None:
    photo = images.photo(tmp_path / "big.jpg", size=(6000, 4500), orientation=1, quality=60)  # 27 MP
    prepared = prepare(photo, "A big photo", LIMITS["x"])
    assert prepared.width * prepared.height <= 4096 * 4096


def test_a_png_whose_text_chunk_expands_too_far_is_a_picture_error(tmp_path: Path) -> None:
    bomb = images.text_bomb_png(tmp_path / "chatty.png")
    with pytest.raises(PictureError, match="chatty.png is damaged"):  # was ValueError: exit 1
        prepare(bomb, "Chatty", LIMITS["x"])


@pytest.mark.parametrize("cut", [40, 300, 600, -30])
def test_a_damaged_animated_gif_is_a_picture_error(tmp_path: Path, cut: int) -> None:
    data = images.animated_gif(tmp_path / "whole.gif").read_bytes()
    damaged = tmp_path / "damaged.gif"
    damaged.write_bytes(data[:cut] + b"\x17" * 8)
    for network in ("x", "bluesky"):
        with pytest.raises(PictureError, match="damaged.gif"):
            prepare(damaged, "Cut short", LIMITS[network])


@pytest.mark.parametrize("kind", ["fifo", "folder", "device"])
def test_only_a_regular_file_is_opened_as_a_picture(tmp_path: Path, kind: str) -> None:
    import os
    import threading

    path = tmp_path / "picture.jpg"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    else:
        path = Path("/dev/zero")
    raised: list = []
    worker = threading.Thread(target=lambda: raised.append(_error_of(path)), daemon=True)
    worker.start()
    worker.join(10)
    assert not worker.is_alive(), f"preparing a {kind} blocked"  # a FIFO with no writer blocks open() for ever
    (error,) = raised
    assert isinstance(error, PictureError) and "not a picture file" in str(error)


def _error_of(path: Path) -> object:
    try:
        prepare(path, "Anything", LIMITS["x"])
    except Exception as exc:  # noqa: BLE001 - the test looks at what it was
        return exc
    return None


@pytest.mark.parametrize("network", ["x", "mastodon"])
def test_an_animated_gif_loses_its_comment_and_xmp_and_keeps_its_frames(tmp_path: Path, network: str) -> None:
    gif = images.gif_with_metadata(tmp_path / "dance.gif")
    assert b"XMP DataXMP" in gif.read_bytes() and b"Acacia" in gif.read_bytes()
    prepared = prepare(gif, "A dancing dot", LIMITS[network])
    assert prepared.mime_type == "image/gif"
    assert b"XMP" not in prepared.data and b"GPSLatitude" not in prepared.data and b"Acacia" not in prepared.data
    with Image.open(io.BytesIO(prepared.data)) as picture:
        assert picture.n_frames == 4 and picture.info.get("loop") == 0 and "comment" not in picture.info

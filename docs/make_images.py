"""Regenerate the README's pictures and printed numbers from the code as it is (run from the root).

    .venv/bin/python docs/make_images.py            # pictures in docs/images/ and the README blocks
    .venv/bin/python docs/make_images.py --numbers  # the README blocks only (about 15 s)
    .venv/bin/python docs/make_images.py --check    # exit 1 if the README's blocks are out of date

The README's numbers live between ``<!-- generated: NAME -->`` and ``<!-- end generated: NAME -->``
markers; each block is what a ``symbody`` command prints today (see ``BLOCKS``).
``tests/integration/test_readme.py`` recomputes them and fails when the README disagrees.

Pictures: ``symbody demo`` runs into a temporary directory and its drift plot and the last
animation frames (t = 30 s) without and with constraint enforcement are kept as small palette
PNGs, with the Whipple bicycle's eigenvalues against speed from ``symbody linearize --speeds``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import re
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("SYMBODY_QUIET", "1")

from symbody.presentation.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
README = ROOT / "README.md"

#: README block name -> the symbody command whose output it shows.
BLOCKS = {
    "demo-summary": ["demo", "--no-animation", "--quiet"],
    "list": ["list"],
    "bicycle-linearize": ["linearize", "whipple-bicycle", "--set", "v=5", "--quiet"],
}


def command_output(argv: list[str], out_dir: Path | None = None) -> str:
    """What ``symbody ARGV`` prints (demo: its summary.txt), without the list of files written."""
    argv = list(argv)
    if argv[0] == "demo":
        assert out_dir is not None, "demo needs an output directory"
        argv += ["--out", str(out_dir)]
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(argv)
    if code != 0:
        raise RuntimeError(f"symbody {' '.join(argv)} exited with {code}:\n{buffer.getvalue()}")
    if argv[0] == "demo":
        return (out_dir / "summary.txt").read_text(encoding="utf-8")
    return buffer.getvalue()


def compute_blocks(names: list[str] | None = None) -> dict[str, str]:
    """{block name: text} as the commands print them now."""
    blocks = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names or list(BLOCKS):
            blocks[name] = command_output(BLOCKS[name], Path(tmp)).strip("\n") + "\n"
    return blocks


_BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) .*?-->\n```\n)(?P<body>.*?)(```\n<!-- end generated: (?P=name) -->)",
                    re.S)


def readme_blocks(text: str) -> dict[str, str]:
    """{block name: text} as the README has them."""
    return {m["name"]: m["body"] for m in _BLOCK.finditer(text)}


def with_blocks(text: str, blocks: dict[str, str]) -> str:
    """The README text with its generated blocks replaced by ``blocks``."""
    return _BLOCK.sub(lambda m: m.group(1) + blocks.get(m["name"], m["body"]) + m.group(4), text)


# ----------------------------------------------------------------------------- pictures
def small_png(image, path: Path, width: int) -> None:
    """Save ``image`` scaled to ``width`` pixels as a 128-colour PNG."""
    from PIL import Image

    image = image.convert("RGB")
    height = round(image.height * width / image.width)
    image = image.resize((width, height), Image.Resampling.LANCZOS)
    image.quantize(colors=128, method=Image.Quantize.FASTOCTREE).save(path, optimize=True)
    print(f"wrote {path} ({path.stat().st_size // 1024} KiB)")


def last_frame(gif: Path):
    from PIL import Image

    with Image.open(gif) as im:
        im.seek(im.n_frames - 1)
        return im.convert("RGB")


def make_pictures() -> None:
    from PIL import Image

    IMAGES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp)
        if main(["demo", "--out", str(out), "--quiet"]) != 0:
            raise RuntimeError("symbody demo failed")
        small_png(Image.open(out / "drift_comparison.png"), IMAGES / "demo_drift_comparison.png", 1000)
        a = last_frame(out / "animation_without_enforcement.gif")
        b = last_frame(out / "animation_with_enforcement.gif")
        both = Image.new("RGB", (a.width + b.width, max(a.height, b.height)), "white")
        both.paste(a, (0, 0))
        both.paste(b, (a.width, 0))
        small_png(both, IMAGES / "demo_four_bar_final_frames.png", 1000)
        small_png(Image.open(out / "time_histories_with_enforcement.png"),
                  IMAGES / "demo_time_histories.png", 800)
        if main(["linearize", "whipple-bicycle", "--speeds", "0:10:41", "--out", str(out), "--quiet"]) != 0:
            raise RuntimeError("symbody linearize --speeds failed")
        small_png(Image.open(out / "eigenvalues_vs_v.png"), IMAGES / "whipple_eigenvalues_vs_v.png", 640)


def run(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--numbers", action="store_true", help="update the README blocks only")
    parser.add_argument("--check", action="store_true", help="exit 1 if the README blocks are stale")
    args = parser.parse_args(argv)
    text = README.read_text(encoding="utf-8")
    blocks = compute_blocks()
    if args.check:
        stale = [n for n, body in readme_blocks(text).items() if blocks.get(n) != body]
        for name in stale:
            print(f"README block {name!r} is out of date", file=sys.stderr)
        return 1 if stale else 0
    if not args.numbers:
        make_pictures()
    new = with_blocks(text, blocks)
    if new != text:
        README.write_text(new, encoding="utf-8")
        print(f"updated {README}")
    return 0


if __name__ == "__main__":
    sys.exit(run())

"""Regenerate the pictures and printed numbers of the README and the guides from the code as it is.

Run from the root:

    .venv/bin/python docs/make_images.py            # pictures in docs/images/ and the blocks
    .venv/bin/python docs/make_images.py --numbers  # the printed blocks only (about 15 s)
    .venv/bin/python docs/make_images.py --check    # exit 1 if a block is out of date

The numbers live between ``<!-- generated: NAME -->`` and ``<!-- end generated: NAME -->``
markers in the files of ``DOCUMENTS``; each block is what a ``symbody`` command prints today
(see ``BLOCKS``), with its figures rounded to what does not depend on the machine.
``tests/integration/test_readme.py`` recomputes them and fails when a page disagrees beyond
the block's tolerance (``TOLERANCES``).

Pictures: ``symbody demo`` runs into a temporary directory and its drift plot and the last
animation frames (t = 30 s) without and with constraint enforcement are kept as small palette
PNGs, with the Whipple bicycle's eigenvalues against speed from ``symbody linearize --speeds``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import math
import os
import re
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("MPLBACKEND", "Agg")
os.environ.setdefault("SYMBODY_QUIET", "1")

from symbody.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
IMAGES = ROOT / "docs" / "images"
README = ROOT / "README.md"
#: The pages that hold generated blocks (and the README, which shows pictures).
DOCUMENTS = [README, ROOT / "docs" / "guides" / "seed_workflow.md",
             ROOT / "docs" / "guides" / "command_line.md"]

#: README block name -> the symbody command whose output it shows.
BLOCKS = {
    "demo-summary": ["demo", "--no-animation", "--quiet"],
    "list": ["list"],
    "bicycle-linearize": ["linearize", "whipple-bicycle", "--set", "v=5", "--quiet"],
}

#: Relative tolerance to which a block's numbers are reproducible on another machine
#: (docs/guides/reproducibility.md).  Compiled kernels do not give the same last bits everywhere
#: (FMA contraction, vector width), so a figure computed by an integration at ``rtol`` is
#: only known to about ``100 rtol`` relative: the demo's loop opening at rtol = 1e-3 is
#: 0.089 m on one CPU and 0.0935 m on another with the same 1094 rhs calls.  The bicycle's
#: linearization involves no integration and is exact to round-off.
TOLERANCES = {"demo-summary": 100 * 1e-3, "list": 0.0, "bicycle-linearize": 1e-9}

#: Significant digits the README shows of a block's non-integer figures (None: as printed),
#: and the magnitude below which a figure is round-off and shown as ``<1e-12``.
DIGITS = {"demo-summary": 2}
ROUND_OFF = 1e-12

#: The tolerance of a block's runs whose figures are reproducible (the rest, from runs at a loose
#: tolerance, are shown as bounds): at the book's rtol = 1e-3 the demo's energy drift is 0.94 J on
#: one CPU and 0.69 J on another, the loop opening 8.9 or 9.3 cm, because round-off grows through
#: the motion at that tolerance; what holds everywhere is a bound ("<2 J").  A figure belongs to
#: the run of the first ``rtol=`` after it on its line, else of the last one before it.
TIGHT_RTOL = {"demo-summary": "1e-06"}

_NUMBER = re.compile(r"(?<![\w.])[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![A-Za-ik-z_\d]|\.\d)")


def machine_independent(name: str, text: str) -> str:
    """``text`` with its figures rounded to what does not depend on the machine.

    Non-integer figures keep ``DIGITS[name]`` significant digits; figures below
    ``ROUND_OFF`` in magnitude (constraint residuals after projection: a few units in the
    last place, different on every CPU) become ``<1e-12``; figures of runs at a loose
    tolerance (not ``TIGHT_RTOL[name]``) become a bound, ``<b`` with b twice the figure
    rounded up to one significant digit.  A figure in a table column keeps its printed
    width, so the columns stay aligned.
    """
    digits = DIGITS.get(name)
    if digits is None:
        return text
    tight = TIGHT_RTOL.get(name)

    def loose(match: re.Match) -> bool:
        line_start = match.string.rfind("\n", 0, match.start()) + 1
        line_end = match.string.find("\n", match.end())
        line = match.string[line_start:len(match.string) if line_end < 0 else line_end]
        at = match.start() - line_start
        after = re.search(r"rtol=([0-9.eE+-]*[0-9])", line[at + len(match[0]):])
        before = re.findall(r"rtol=([0-9.eE+-]*[0-9])", line[:at])
        run = after[1] if after else (before[-1] if before else None)
        return tight is not None and run != tight

    def fmt(match: re.Match) -> str:
        token = match[0]
        if not any(c in token for c in ".eE"):        # counts, seed numbers: as printed
            return token
        if match.string[max(0, match.start() - 5):match.start()] == "rtol=":
            return token                              # a tolerance, as given
        value = float(token)
        if 0 < abs(value) < ROUND_OFF:
            new = f"<{ROUND_OFF:.0e}"
        elif value and loose(match):
            new = f"<{_bound(2 * abs(value))}"
        else:
            new = f"{value:.{digits}g}"
        table = match.string[max(0, match.start() - 2):match.start()] == "  "
        return new.rjust(len(token)) if table else new

    return _NUMBER.sub(fmt, text)


def _bound(value: float) -> str:
    """``value`` rounded up to one significant digit, printed shortly (1.88 -> '2', 0.178 -> '0.2')."""
    exponent = math.floor(math.log10(value))
    digit = math.ceil(value / 10.0 ** exponent - 1e-9)
    if digit == 10:
        digit, exponent = 1, exponent + 1
    return f"{digit * 10.0 ** exponent:.{max(0, -exponent)}f}" if -4 <= exponent < 4 \
        else f"{digit}e{exponent}"


def _half_unit(token: str) -> float:
    """Half a unit in the last printed digit of ``token`` (0 for a printed zero)."""
    mantissa, _, exponent = token.lower().lstrip("+-").partition("e")
    if float(mantissa) == 0.0:
        return 0.0
    decimals = len(mantissa.split(".", 1)[1]) if "." in mantissa else 0
    return 0.5 * 10.0 ** (int(exponent or 0) - decimals)


def figures_agree(shown: str, computed: str, rtol: float) -> str | None:
    """None if the two texts agree, else a message naming the first difference.

    The texts must be equal outside their figures (up to spacing and the ``<`` of bounds);
    two figures agree when they differ by at most ``rtol`` times the larger plus half a unit
    in the last printed digit of each (the rounding of the printout); a bound ``<b`` shown
    agrees with a computed figure below b (or a computed bound ``<c``, c <= b), and a
    computed bound with nothing else.
    """
    def words(text: str) -> list[str]:          # the text between figures, spacing aside
        return [" ".join(part.replace("<", " ").split()) for part in _NUMBER.split(text)]

    def bounds(text: str) -> list[bool]:         # each figure: a bound?
        return [m.string[max(0, m.start() - 1):m.start()] == "<" for m in _NUMBER.finditer(text)]

    if words(shown) != words(computed):
        for a, b in zip(shown.splitlines(), computed.splitlines()):
            if words(a) != words(b):
                return f"text differs:\n  shown:    {a}\n  computed: {b}"
        return "the texts have different lines"
    for a, b, bound_a, bound_b in zip(_NUMBER.findall(shown), _NUMBER.findall(computed),
                                      bounds(shown), bounds(computed)):
        x, y = float(a), float(b)
        if bound_a:
            if not (y <= x if bound_b else abs(y) < x):
                return f"figure {'<' if bound_b else ''}{b} computed is not below the bound <{a} shown"
        elif bound_b or abs(x - y) > rtol * max(abs(x), abs(y)) + _half_unit(a) + _half_unit(b):
            return (f"figure {a} shown, {'<' if bound_b else ''}{b} computed (relative "
                    f"tolerance {rtol:g})")
    return None


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


def compute_blocks(names: list[str] | None = None, raw: bool = False) -> dict[str, str]:
    """{block name: text} as the commands print them now (``raw``: as printed, not rounded
    to what the pages show; the test checks those figures against the pages' bounds)."""
    blocks = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name in names or list(BLOCKS):
            text = command_output(BLOCKS[name], Path(tmp)).strip("\n") + "\n"
            blocks[name] = text if raw else machine_independent(name, text)
    return blocks


_BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) .*?-->\n```\n)(?P<body>.*?)(```\n<!-- end generated: (?P=name) -->)",
                    re.S)


def readme_blocks(text: str) -> dict[str, str]:
    """{block name: text} as the README has them."""
    return {m["name"]: m["body"] for m in _BLOCK.finditer(text)}


def document_blocks() -> dict[str, str]:
    """{block name: text} over all ``DOCUMENTS``; a block shown twice raises ValueError."""
    blocks: dict[str, str] = {}
    for path in DOCUMENTS:
        for name, body in readme_blocks(path.read_text(encoding="utf-8")).items():
            if name in blocks:
                raise ValueError(f"generated block {name!r} appears twice (again in {path.name})")
            blocks[name] = body
    return blocks


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
    blocks = compute_blocks()
    if args.check:
        stale = [n for n, body in document_blocks().items()
                 if n not in blocks or figures_agree(body, blocks[n], TOLERANCES[n]) is not None]
        for name in stale:
            print(f"generated block {name!r} is out of date", file=sys.stderr)
        return 1 if stale else 0
    if not args.numbers:
        make_pictures()
    for path in DOCUMENTS:
        text = path.read_text(encoding="utf-8")
        new = with_blocks(text, blocks)
        if new != text:
            path.write_text(new, encoding="utf-8")
            print(f"updated {path}")
    return 0


if __name__ == "__main__":
    sys.exit(run())

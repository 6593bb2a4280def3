"""The model zoo: formed equations of motion with default numbers and a drawing.

::

    import symbody as sb
    sb.models.available()                 # {"four-bar": "four-bar linkage, ...", ...}
    model = sb.models.get("n-link-pendulum-on-cart", n=5)
    model = sb.models.four_bar()          # a symbody.models.Model
    model.eom, model.constants, model.initial_state, model.t_span, model.drawing

Each model function forms its equations with symbody.KanesMethod when called.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..errors import InputError
from .andrews_squeezer import DESCRIPTION as _ANDREWS
from .andrews_squeezer import andrews_squeezer
from .ball_on_plane import DESCRIPTION as _BALL
from .ball_on_plane import ball_on_plane
from .base import Drawing, KaneSystem, Model
from .block_on_slope import DESCRIPTION as _BLOCK
from .block_on_slope import block_on_slope
from .bricard import DESCRIPTION as _BRICARD
from .bricard import bricard
from .chaplygin_sleigh import DESCRIPTION as _SLEIGH
from .chaplygin_sleigh import chaplygin_sleigh
from .cylinder_on_slope import DESCRIPTION as _CYLINDER
from .cylinder_on_slope import cylinder_on_slope
from .double_rod_pendulum import DESCRIPTION as _DOUBLE_ROD
from .double_rod_pendulum import double_rod_pendulum
from .flyball_governor import DESCRIPTION as _FLYBALL
from .flyball_governor import flyball_governor
from .four_bar import DESCRIPTION as _FOUR_BAR
from .four_bar import four_bar
from .iftomm_pendulum import DESCRIPTION as _IFTOMM_PENDULUM
from .iftomm_pendulum import iftomm_pendulum
from .jumper import DESCRIPTION as _JUMPER
from .jumper import jumper
from .musculoskeletal_arm import DESCRIPTION as _ARM
from .musculoskeletal_arm import musculoskeletal_arm
from .n_four_bar import DESCRIPTION as _N_FOUR_BAR
from .n_four_bar import n_four_bar
from .n_link_pendulum_on_cart import DESCRIPTION as _N_LINK
from .n_link_pendulum_on_cart import n_link_pendulum_on_cart
from .planar_biped import DESCRIPTION as _BIPED
from .planar_biped import planar_biped
from .planar_hopper import DESCRIPTION as _HOPPER
from .planar_hopper import planar_hopper
from .rimless_wheel import DESCRIPTION as _RIMLESS
from .rimless_wheel import rimless_wheel
from .rolling_disc import DESCRIPTION as _DISC
from .rolling_disc import rolling_disc
from .simplest_walker import DESCRIPTION as _WALKER
from .simplest_walker import simplest_walker
from .snakeboard import DESCRIPTION as _SNAKEBOARD
from .snakeboard import snakeboard
from .two_particle_pendulum import DESCRIPTION as _TWO_PARTICLE
from .two_particle_pendulum import two_particle_pendulum
from .whipple_bicycle import DESCRIPTION as _WHIPPLE
from .whipple_bicycle import whipple_bicycle

__all__ = [
    "Model", "Drawing", "KaneSystem", "available", "get",
    "four_bar", "snakeboard", "double_rod_pendulum", "two_particle_pendulum",
    "n_link_pendulum_on_cart", "rolling_disc", "chaplygin_sleigh", "whipple_bicycle",
    "rimless_wheel", "simplest_walker", "musculoskeletal_arm", "n_four_bar",
    "iftomm_pendulum", "bricard", "flyball_governor", "andrews_squeezer",
    "ball_on_plane", "block_on_slope", "cylinder_on_slope", "jumper", "planar_hopper",
    "planar_biped",
]

_REGISTRY: dict[str, tuple[str, Callable[..., Model]]] = {
    "four-bar": (_FOUR_BAR, four_bar),
    "snakeboard": (_SNAKEBOARD, snakeboard),
    "double-rod-pendulum": (_DOUBLE_ROD, double_rod_pendulum),
    "two-particle-pendulum": (_TWO_PARTICLE, two_particle_pendulum),
    "n-link-pendulum-on-cart": (_N_LINK, n_link_pendulum_on_cart),
    "rolling-disc": (_DISC, rolling_disc),
    "chaplygin-sleigh": (_SLEIGH, chaplygin_sleigh),
    "whipple-bicycle": (_WHIPPLE, whipple_bicycle),
    "rimless-wheel": (_RIMLESS, rimless_wheel),
    "simplest-walker": (_WALKER, simplest_walker),
    "musculoskeletal-arm": (_ARM, musculoskeletal_arm),
    "n-four-bar": (_N_FOUR_BAR, n_four_bar),
    "iftomm-pendulum": (_IFTOMM_PENDULUM, iftomm_pendulum),
    "andrews-squeezer": (_ANDREWS, andrews_squeezer),
    "bricard": (_BRICARD, bricard),
    "flyball-governor": (_FLYBALL, flyball_governor),
    "ball-on-plane": (_BALL, ball_on_plane),
    "block-on-slope": (_BLOCK, block_on_slope),
    "cylinder-on-slope": (_CYLINDER, cylinder_on_slope),
    "jumper": (_JUMPER, jumper),
    "planar-hopper": (_HOPPER, planar_hopper),
    "planar-biped": (_BIPED, planar_biped),
}


def available() -> dict[str, str]:
    """Model names (as used on the command line) -> one-line descriptions."""
    return {name: description for name, (description, _) in _REGISTRY.items()}


def get(name: str, **options: Any) -> Model:
    """Build the model called ``name`` (e.g. "four-bar"; underscores work too).

    ``options`` go to the model function (e.g. ``n=5`` for the n-link
    pendulum).  An unknown name or option raises InputError listing the
    known ones.
    """
    key = str(name).strip().lower().replace("_", "-")
    if key not in _REGISTRY:
        raise InputError(f"unknown model {name!r}; known models: {', '.join(_REGISTRY)}")
    build = _REGISTRY[key][1]
    try:
        return build(**options)
    except TypeError as exc:
        if options and "unexpected keyword" in str(exc):
            raise InputError(f"model {key!r} does not take the option(s) {sorted(options)}: {exc}") from exc
        raise

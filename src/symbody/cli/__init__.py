"""The ``symbody`` command: list, simulate, linearize and demo the model zoo.

::

    symbody list
    symbody simulate MODEL [--tf T] [--constraints MODE] [--set NAME=VALUE ...] [--out DIR]
                           [--fps FPS] [--no-animation] [--quiet]
    symbody linearize MODEL [--set NAME=VALUE ...] [--speeds START:STOP:N] [--out DIR]
    symbody demo [--out DIR] [--tf T] [--no-animation] [--quiet]
    symbody view MODEL [--out PAGE.html] [--tf T] [--fps FPS] [--set NAME=VALUE ...]
                       [--constraints MODE] [--follow NAME] [--quiet]
    symbody view ROBOT.urdf [--floating-base] [--package-dir DIR ...] [--out PAGE.html] [--tf T] ...
    symbody simulate ROBOT.urdf [--floating-base] [--t-final T] [--out DIR] ...

A MODEL ending in ``.urdf`` is a robot file (``symbody.load_urdf``): it falls under gravity
from its zero pose with zero joint torques, drawn with its URDF visual geometry.

Exit codes: 0 success, 1 a run failed (e.g. the integrator stopped), 2 bad arguments
(unknown model or parameter, malformed value), with a message naming the culprit; 141 when
the reader of the output closed the pipe (``symbody list | head -1``), without a message.

The package, one module per concept: ``.parser`` (the argparse parser), ``.entry``
(``main``: exit codes), ``.console``, ``.arguments`` and ``.models`` (reading the
command line), ``.running`` and ``.output`` (simulating, writing files) and one module
per command (``.simulate``, ``.linearize``, ``.view``, ``.demo``, ``.robots``).
"""

from .entry import EXIT_CLOSED_PIPE, main
from .parser import build_parser

__all__ = ["main", "build_parser", "EXIT_CLOSED_PIPE"]

"""``python -m symbody.cli ...``: the ``symbody`` command (:func:`symbody.cli.main`)."""

import sys

from .entry import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""``python -m mdpoly``: the ``mdpoly`` command."""

import sys

from mdpoly.cli import main

sys.exit(main())

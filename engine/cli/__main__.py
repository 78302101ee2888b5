"""`python3 -m engine.cli ...` is `kb ...`."""

import sys

from . import main

sys.exit(main())

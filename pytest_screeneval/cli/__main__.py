"""``python -m pytest_screeneval.cli``: the same as the ``screeneval`` command."""

import sys

from pytest_screeneval.cli.main import main

sys.exit(main())

"""``python -m engines.dueling run|sweep ...``: see :mod:`engines.dueling.cli`."""
import sys

from engines.dueling.cli import main

if __name__ == "__main__":
    sys.exit(main())

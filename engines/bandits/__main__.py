"""``python -m engines.bandits run|sweep ...``: see :mod:`engines.bandits.cli`."""
import sys

from engines.bandits.cli import main

if __name__ == "__main__":
    sys.exit(main())

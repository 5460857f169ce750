"""``python -m engines.watermark embed|verify ...``: see :mod:`engines.watermark.cli`."""
import sys

from engines.watermark.cli import main

if __name__ == "__main__":
    sys.exit(main())

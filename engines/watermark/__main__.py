"""``python -m engines.watermark embed|verify ...``: see :mod:`engines.watermark.cli`."""
import sys

from engines.common.command import main_entry

if __name__ == "__main__":
    sys.exit(main_entry("engines.watermark.cli"))

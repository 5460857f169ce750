"""``python -m engines.codeprm scan PATH ...``: see :mod:`engines.codeprm.cli`."""
import sys

from engines.common.command import main_entry

if __name__ == "__main__":
    sys.exit(main_entry("engines.codeprm.cli"))

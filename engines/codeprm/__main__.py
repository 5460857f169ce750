"""``python -m engines.codeprm scan PATH ...``: see :mod:`engines.codeprm.cli`."""
import sys

from engines.codeprm.cli import main

if __name__ == "__main__":
    sys.exit(main())

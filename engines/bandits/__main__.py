"""``python -m engines.bandits ...``: the former name of ``python -m engines.dueling ...``, for one release."""
import sys

from engines.bandits import MESSAGE
from engines.common.command import main_entry

if __name__ == "__main__":
    print(f"note: {MESSAGE}", file=sys.stderr)
    sys.exit(main_entry("engines.dueling.cli"))

"""``python -m engines.dueling run|sweep ...``: see :mod:`engines.dueling.cli`."""
import gc
import sys

from engines.common.command import main_entry

if __name__ == "__main__":
    status = main_entry("engines.dueling.cli")
    # The process ends here, with numba's and scipy's objects loaded: leave them to the operating
    # system rather than have the interpreter's last collections walk them (0.2 s of CPU).
    gc.freeze()
    sys.exit(status)

"""Where the repository, its assets and the local cache live."""
from __future__ import annotations

import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[2]
ASSETS_DIR = REPO_ROOT / "assets"
CACHE_DIR = Path(os.environ.get("SHOWCASE_CACHE", Path.home() / ".cache" / "icml26-showcase"))

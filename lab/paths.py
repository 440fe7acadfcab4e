"""Where the lab finds the sample bots and the Python SDK, and putting a folder on the import
path."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bots" / "python"
SDK = ROOT / "sdk" / "python" / "src"
"""The Python SDK's modules (``arena_sdk``), for an arena whose environment lacks the SDK's
package."""


def on_path(folder: Path) -> None:
    """Put ``folder`` on the import path (last), once."""
    if str(folder) not in sys.path:
        sys.path.append(str(folder))

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The shared conformance vectors, as the project keeps its own copy of them (a clone stands
# alone); BESIDE is where the team's shared folder lies when the clone has one next to it.
SHARED_COPY = ROOT / "tests" / "vectors" / "shared"
BESIDE = ROOT.parent / "shared" / "conformance"
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

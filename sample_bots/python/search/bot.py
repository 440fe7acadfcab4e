"""search: determinized Monte Carlo search over the tricks (policy.py), as a gRPC bot through
the SDK's policy runner (arena_policy)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from arena_policy import run_policy
from policy import SearchPolicy

if __name__ == "__main__":
    sys.exit(run_policy(SearchPolicy(), "search"))

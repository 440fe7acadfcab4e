"""search: determinized Monte Carlo search over the tricks (policy.py), as a gRPC bot through
the SDK's policy runner (arena_sdk.policy)."""

import sys

from arena_sdk.policy import run_policy
from policy import SearchPolicy

if __name__ == "__main__":
    sys.exit(run_policy(SearchPolicy(), "search"))

#!/usr/bin/python3
"""compare_gate.py - the entry point of `scripts/compare.sh BASE.json NEW.json`, the
regression gate on two runs' JSON; its code and documentation: pbgate/compare.py."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pbgate.compare import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

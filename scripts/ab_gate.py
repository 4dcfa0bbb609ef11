#!/usr/bin/python3
"""ab_gate.py - the entry point of `scripts/compare.sh --ab BASE_BIN NEW_BIN`, the paired
A/B gate (time, instruction counts or both); its code and documentation: pbgate/ab.py."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pbgate.ab import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

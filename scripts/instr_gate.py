#!/usr/bin/python3
"""instr_gate.py - the entry point of `scripts/compare.sh --ab BASE_BIN NEW_BIN
--metric=instructions`, the instruction-count gate under Valgrind; its code and
documentation: pbgate/instr.py."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pbgate.instr import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""pbgate - the regression gates and the run JSON reader, one package (issue 37 item 4).

  record   reading pipebench's Google Benchmark JSON runs (the run record): the document
           validated, case keys (and the legacy adapter of files written before the
           record), times, the typed context, what makes two runs incomparable
  compare  the gate on two runs' JSON (`compare.sh BASE.json NEW.json`): compare.py's
           table, the U test and the verdicts (judge), the thresholds
  ab       the paired A/B time gate (`compare.sh --ab BASE_BIN NEW_BIN`): ABBA / BAAB
           rounds, the second stage, the report and its JSON; --metric picks the others
  instr    the instruction-count gate under Valgrind's Callgrind (`--metric=instructions`)
  both     time and instruction counts together: one decision per case under --fail-on
           (`--metric=both`, the default where Valgrind exists)
  blocks   running two builds: binaries, the synthetic dataset, case lists and filters,
           contexts, the test hook's environment, the driver and its exit statuses
  paired   the paired time statistic (t interval on log ratios) and the verdicts, power
           before a verdict
  plan     the rounds a precision needs, block costs, what a time budget pays for, power

Who uses it: the entry points in scripts/ (compare_gate.py, ab_gate.py, instr_gate.py:
each puts its own folder on sys.path and calls its module's main), gate_calibration.sh
(paired, plan), plot.py, export.py (record) and history.py (record, compare). Its modules
import each other relatively and nothing outside the package but the standard library,
scipy, numpy and Google Benchmark's gbench (compare.import_gbench), in layers without a
cycle: record imports none of them; blocks and compare import record; paired imports
compare; plan paired; instr blocks; both instr; ab the others.
Its tests, in tests/scripts/ as the project keeps them: bench_json_test.py (record, and
the package's imports: PackageImportsTest), compare_gate_test.py, ab_gate_test.py and
instr_gate_test.py.
"""

"""pbgate - the A/B regression gate's shared code, one package (issue 37 item 4).

  blocks   running two builds: binaries, case lists and filters, contexts, the test hook's
           environment, the driver and its exit statuses
  paired   the paired time statistic (ABBA / BAAB rounds, t interval on log ratios) and the
           verdicts, power before a verdict
  plan     the rounds a precision needs, block costs, what a time budget pays for, power
  both     time and instruction counts together: one decision per case under --fail-on

The entry points stay in scripts/: ab_gate.py (the time gate, `compare.sh --ab`),
instr_gate.py (the instruction gate), gate_calibration.sh; each imports this package, and
nothing in it imports them (no cycle). Its tests: tests/scripts/ab_gate_test.py
(PairedStatsTest, PlanTest, BothMetricsTest) and instr_gate_test.py.
"""

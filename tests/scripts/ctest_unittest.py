"""One exit status for ctest from a unittest run: 0 all passed, 1 a failure or error, 77
(ctest's SKIP_RETURN_CODE, set for every Python test in tests/CMakeLists.txt) when nothing
failed but some test skipped, so a skip shows as Skipped in ctest, not as Passed. The five
slowest tests are printed with their wall time in s (CI's time budget is kept by them).

    from ctest_unittest import run_tests
    sys.exit(run_tests(rest))
"""
import sys
import time
import unittest

SKIP = 77


class _TimedResult(unittest.TextTestResult):
    """A TextTestResult that keeps each test's wall time (s)."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.durations = []
        self._started = 0.0

    def startTest(self, test):
        self._started = time.monotonic()
        super().startTest(test)

    def stopTest(self, test):
        self.durations.append((time.monotonic() - self._started, test.id()))
        super().stopTest(test)


def run_tests(argv_rest=(), module="__main__"):
    runner = unittest.TextTestRunner(verbosity=2, resultclass=_TimedResult)
    result = unittest.main(module=module, argv=[sys.argv[0]] + list(argv_rest), exit=False,
                           testRunner=runner).result
    slowest = sorted(result.durations, reverse=True)[:5]
    if slowest:
        print("slowest: " + "; ".join(f"{name.split('.', 1)[-1]} {s:.1f} s"
                                      for s, name in slowest))
    if not result.wasSuccessful():
        return 1
    if result.skipped:
        for test, reason in result.skipped:
            print(f"skipped: {test.id()}: {reason}")
        print(f"{len(result.skipped)} of {result.testsRun} tests skipped: exit {SKIP} (ctest: Skipped)")
        return SKIP
    return 0

"""One exit status for ctest from a unittest run: 0 all passed, 1 a failure or error, 77
(ctest's SKIP_RETURN_CODE, set for every Python test in tests/CMakeLists.txt) when nothing
failed but some test skipped, so a skip shows as Skipped in ctest, not as Passed.

    from ctest_unittest import run_tests
    sys.exit(run_tests(rest))
"""
import sys
import unittest

SKIP = 77


def run_tests(argv_rest=(), module="__main__"):
    result = unittest.main(module=module, argv=[sys.argv[0]] + list(argv_rest), exit=False,
                           verbosity=2).result
    if not result.wasSuccessful():
        return 1
    if result.skipped:
        for test, reason in result.skipped:
            print(f"skipped: {test.id()}: {reason}")
        print(f"{len(result.skipped)} of {result.testsRun} tests skipped: exit {SKIP} (ctest: Skipped)")
        return SKIP
    return 0

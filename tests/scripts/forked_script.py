"""A Python script of scripts/ run as `/usr/bin/python3 SCRIPT ARGS...` would run it, in a
forked child of the test's own process instead of a new interpreter.

Why: compare_gate_test.py, history_test.py, plot_test.py and export_test.py call their
script some 60 to 200 times each, and every new interpreter imports scipy, numpy or
matplotlib again: 0.5 to 1.5 s a call on a 2-core machine, most of those tests' time in CI.
The script is imported once (its top-level code runs once, in the parent: its sys.path set
up and its imports), and each call forks: the child sets sys.argv, calls the script's
main(argv) with its stdout and stderr (file descriptors 1 and 2) sent to files, and exits
with what `sys.exit(main(sys.argv[1:]))` would have exited with: main's return value, a
SystemExit's code (argparse's 2), or 1 with the traceback on stderr for any other
exception, as the interpreter prints it. The child's state dies with it, so one call
cannot leak into the next.

What it does not run is the script's shebang line and its `if __name__ == "__main__"`
block; each test file keeps at least one call through a real subprocess (real=True) so
that the command line a user types stays tested too.

    from forked_script import Script
    gate = Script("/path/to/scripts/compare_gate.py")
    rc, out, err = gate(["a.json", "b.json"])            # forked
    rc, out, err = gate(["a.json", "b.json"], real=True)  # /usr/bin/python3 compare_gate.py
"""

import importlib.util
import os
import signal
import subprocess
import sys
import tempfile
import traceback

PYTHON = "/usr/bin/python3"


class Script:
    def __init__(self, path, warm_up=None):
        """warm_up(module), if given, runs once after the import: what the script imports
        only inside main (compare_gate.py's gbench, which imports scipy.stats), imported
        there in the parent, so that no child imports it again."""
        self.path = os.path.abspath(path)
        self.warm_up = warm_up
        self._module = None

    def module(self):
        """The script imported as a module (once), not as __main__."""
        if self._module is None:
            name = "_script_" + os.path.splitext(os.path.basename(self.path))[0]
            spec = importlib.util.spec_from_file_location(name, self.path)
            module = importlib.util.module_from_spec(spec)
            sys.dont_write_bytecode = True  # no __pycache__ beside the scripts
            spec.loader.exec_module(module)
            if self.warm_up is not None:
                try:
                    self.warm_up(module)
                except Exception:  # noqa: BLE001 - the child meets it again and says so
                    pass
            self._module = module
        return self._module

    def __call__(self, args, timeout=120, real=False):
        """(exit status, stdout, stderr) of the script run with `args`."""
        args = [str(a) for a in args]
        if real:
            p = subprocess.run([PYTHON, self.path, *args], capture_output=True, text=True,
                               timeout=timeout)
            return p.returncode, p.stdout, p.stderr
        main = self.module().main
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:  # the child: never returns
                code = 1
                try:
                    signal.alarm(timeout)  # as subprocess.run's timeout: killed
                    os.dup2(out.fileno(), 1)
                    os.dup2(err.fileno(), 2)
                    sys.stdout = open(1, "w", encoding="utf-8", closefd=False)
                    sys.stderr = open(2, "w", encoding="utf-8", closefd=False)
                    sys.argv = [self.path, *args]
                    code = main(args)
                except SystemExit as e:
                    code = e.code
                except BaseException:  # noqa: B902 - the interpreter's own behaviour
                    traceback.print_exc()
                    code = 1
                finally:
                    if code is None:
                        code = 0
                    elif not isinstance(code, int):
                        print(code, file=sys.stderr)
                        code = 1
                    try:
                        sys.stdout.flush()
                        sys.stderr.flush()
                    finally:
                        os._exit(code & 0xFF)
            _, status = os.waitpid(pid, 0)
            rc = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            return (rc, out.read().decode("utf-8", "replace"),
                    err.read().decode("utf-8", "replace"))

"""The GPU suite's library discovery rehearsed without a GPU, on the target node's layout
(issue 38): a bundle of this build (scripts/bundle.sh, unpacked from its archive) where
cuDNN 9 and cuBLAS / cuBLASLt 13 exist only inside a stand-in site-packages/nvidia/*/lib
tree beside a stand-in python3 (as pip's nvidia-cudnn-cu13 and nvidia-cublas lay them out
in /opt/torch/.venv on the node), with the bundle's RUNPATH cut to $ORIGIN/../lib (patchelf)
and the loader's cache and /usr/local/cuda out of the way (gpu-suite.sh --no-system-libs):

- the layout hides them: without the suite's discovery the loader finds no cuDNN for
  bin/pipebench (the control), and no bundled binary links cuBLAS (it is loaded at run
  time: device/cublas.h);
- the suite finds every library (its ldd pass is clean, and the loader with the
  LD_LIBRARY_PATH it exported finds every library of every bundled ELF file), says where
  each came from and which cuDNN it loaded against the one built with, then fails (exit 1)
  only because pipebench sees no device here;
- with one library removed from the tree it fails before any other step, exit 1, naming
  it: libcudnn.so.9 by its ldd pass (with the binaries that need it), libcublas.so.13 and
  libcublasLt.so.13 by cnn_dump --versions (the loader's reason for cuBLAS);
- the archive with the repository's files stays within 64 MiB, and the suite says the
  bundle's size.

Everything under a temporary folder. Skips (77) without patchelf, ldd or readelf, without
the glibc loader's --inhibit-cache, for a build other than Release, a build without cuDNN,
where this machine has no cuDNN 9 or cuBLAS 13 to lay out, and where nvidia-smi lists a GPU."""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest

from ctest_unittest import run_tests

ARGS = None
LDSO = "/lib64/ld-linux-x86-64.so.2"
LIMIT = 64 * 1024 * 1024
CUDNN = "libcudnn.so.9"
CUBLAS = ("libcublas.so.13", "libcublasLt.so.13")


def read(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def write(path, text, mode=0o644):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, mode)


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def elf_files(root):
    return sorted(os.path.join(d, f) for sub in ("bin", "tests", "lib")
                  for d, _, fs in os.walk(os.path.join(root, sub)) for f in fs
                  if is_elf(os.path.join(d, f)))


def not_found(path, ld_library_path):
    """The libraries the loader does not find for `path`, its cache off."""
    r = subprocess.run([LDSO, "--inhibit-cache", path], capture_output=True, text=True,
                       env=dict(os.environ, LD_LIBRARY_PATH=ld_library_path, LD_TRACE_LOADED_OBJECTS="1"))
    return re.findall(r"^\s*(\S+) => not found", r.stdout, re.M)


def system_lib(name):
    """This machine's copy of a library (ldconfig's cache, then /usr/local/cuda*), or None."""
    r = subprocess.run(["/sbin/ldconfig", "-p"], capture_output=True, text=True)
    m = re.search(rf"^\s*{re.escape(name)} \(.*\) => (\S+)$", r.stdout, re.M)
    if m:
        return os.path.realpath(m.group(1))
    for d in sorted(glob.glob("/usr/local/cuda*/lib64")):
        if os.path.exists(os.path.join(d, name)):
            return os.path.realpath(os.path.join(d, name))
    return None


class Rehearsal(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="pipebench-gpu-rehearsal-")
        made = os.path.join(cls.tmp, "made", "pipebench-bundle")
        cls.made = subprocess.run([os.path.join(ARGS.repo, "scripts", "bundle.sh"), made, "--build", ARGS.build],
                                  capture_output=True, text=True)
        if cls.made.returncode != 0:
            return
        cls.archive = made + ".tar.gz"
        # The node: the archive unpacked, the RUNPATH without /usr/local/cuda/lib64.
        node = os.path.join(cls.tmp, "node")
        os.makedirs(node)
        with tarfile.open(cls.archive) as t:
            t.extractall(node)
        cls.bundle = os.path.join(node, "pipebench-bundle")
        for f in elf_files(cls.bundle):
            if os.sep + "lib" + os.sep not in f[len(cls.bundle):]:
                subprocess.run(["patchelf", "--set-rpath", "$ORIGIN/../lib", f], check=True)
        # The venv: python3 that imports nvidia.cudnn and nvidia.cublas from its site-packages.
        cls.venv = os.path.join(node, "venv")
        cls.site = os.path.join(cls.venv, "lib", "python3.12", "site-packages")
        os.makedirs(os.path.join(cls.venv, "bin"))
        write(os.path.join(cls.venv, "bin", "python3"),
              f"#!/bin/sh\nPYTHONPATH='{cls.site}' exec /usr/bin/python3 \"$@\"\n", 0o755)
        # A node with eight GPUs (as nvidia-smi -L lists them).
        cls.fake = os.path.join(node, "fakebin")
        os.makedirs(cls.fake)
        write(os.path.join(cls.fake, "nvidia-smi"),
              "#!/bin/sh\nfor i in 0 1 2 3 4 5 6 7; do echo \"GPU $i: NVIDIA H200 (UUID: GPU-$i)\"; done\n", 0o755)
        cls.path = os.pathsep.join([os.path.join(cls.venv, "bin"), cls.fake] +
                                   [p for p in os.environ.get("PATH", "").split(os.pathsep)
                                    if p and not os.path.exists(os.path.join(p, "nvidia-smi"))])

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.assertEqual(self.made.returncode, 0, self.made.stdout + self.made.stderr)
        self.lay_out_packages()

    def lay_out_packages(self, without=()):
        """site-packages/nvidia/{cudnn,cublas}/lib as pip installs them, less `without`."""
        nvidia = os.path.join(self.site, "nvidia")
        shutil.rmtree(nvidia, ignore_errors=True)
        cudnn_dir = os.path.dirname(SOURCES[CUDNN])
        packages = {"cudnn": [os.path.basename(p) for p in glob.glob(os.path.join(cudnn_dir, "libcudnn*.so.9"))],
                    "cublas": list(CUBLAS)}
        for pkg, names in packages.items():
            lib = os.path.join(nvidia, pkg, "lib")
            os.makedirs(lib)
            write(os.path.join(nvidia, pkg, "__init__.py"), "")
            for name in names:
                if name in without:
                    continue
                src = SOURCES.get(name) or os.path.realpath(os.path.join(cudnn_dir, name))
                os.symlink(src, os.path.join(lib, name))

    def suite(self, name):
        out = os.path.join(self.tmp, name)
        shutil.rmtree(out, ignore_errors=True)
        t = os.path.join(self.tmp, name + "-tmp")
        shutil.rmtree(t, ignore_errors=True)
        os.makedirs(t)
        env = dict(os.environ, PATH=self.path, LD_LIBRARY_PATH="", TMPDIR=t)
        r = subprocess.run([os.path.join(self.bundle, "gpu-suite.sh"), "--no-system-libs", "--out", out, "--count", "4"],
                           capture_output=True, text=True, env=env, cwd=self.tmp, timeout=300)
        self.assertEqual(os.listdir(t), [], "its temporary folder is removed")
        return r, out

    def test_the_layout_hides_the_libraries(self):
        pipebench = os.path.join(self.bundle, "bin", "pipebench")
        missing = not_found(pipebench, "")
        self.assertIn(CUDNN, missing)
        # cuBLAS is loaded on first use, never linked: no binary needs it at start.
        for f in elf_files(self.bundle):
            needed = subprocess.run(["readelf", "-d", f], capture_output=True, text=True).stdout
            self.assertNotIn("libcublas", needed, f)

    def test_the_suite_finds_every_library(self):
        r, out = self.suite("found")
        s = read(os.path.join(out, "summary.md"))
        log = read(os.path.join(out, "console.log"))
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # no device here: the device step fails
        cudnn_lib = os.path.join(os.path.realpath(self.site), "nvidia", "cudnn", "lib")
        cublas_lib = os.path.join(os.path.realpath(self.site), "nvidia", "cublas", "lib")
        self.assertRegex(s, r"\| libraries \| passed \| \d+ \| ldd: every library of every bundled binary found; "
                            r"cuDNN built with (\d+\.\d+\.\d+), loaded \1 \|")
        self.assertIn("- cuBLAS loaded (libcublas.so.13)", s)
        self.assertIn(f"{CUDNN}: {cudnn_lib} (python3 (", s)
        for name in CUBLAS:
            self.assertIn(f"{name}: {cublas_lib} (python3 (", s)
        self.assertRegex(s, rf"- cuDNN built with \S+, loaded \S+ \({re.escape(os.path.join(cudnn_lib, CUDNN))}\)")
        self.assertIn("(--no-system-libs: no ldconfig -p", s)
        self.assertRegex(log, r"ldd over \d+ ELF files: every library found")
        self.assertNotIn("/usr/local/cuda", log.split("LD_LIBRARY_PATH=", 1)[1].splitlines()[0])
        self.assertIn("GPU 0: NVIDIA H200 (UUID: GPU-0) (and 7 more)", s)
        self.assertRegex(s, r"\| device \| failed \| \d+ \| nvidia-smi lists a GPU but pipebench cannot use it: ")
        self.assertRegex(s, r"- bundle: \S+ \(\d+\.\d MiB in \d+ files; commit ")
        # The loader, its cache off, with what the suite exported: every library of every ELF file.
        ld = re.search(r"^LD_LIBRARY_PATH=(.*)$", log, re.M).group(1)
        checked = 0
        for f in elf_files(self.bundle):
            self.assertEqual(not_found(f, ld), [], f)
            checked += 1
        self.assertGreater(checked, 10)

    def test_a_library_removed_fails_naming_it(self):
        for gone in CUBLAS:  # loaded at run time: cnn_dump --versions says why it does not load
            with self.subTest(gone=gone):
                self.lay_out_packages(without=(gone,))
                r, out = self.suite("gone-" + gone)
                self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                s = read(os.path.join(out, "summary.md"))
                self.assertRegex(s, r"\| libraries \| failed \(exit 1\) \| \d+ \| cnn_dump --versions \(cuBLAS or cuDNN "
                                    rf"does not load\); cnn_dump: cuBLAS could not be loaded \({re.escape(gone)}: ")
                for step in ("data", "device", "stage", "cnn step", "tests", "sanitizer"):
                    self.assertRegex(s, rf"\| {step} \| not run \| 0 \| the bundled binaries do not load")
        for gone in (CUDNN,):
            with self.subTest(gone=gone):
                self.lay_out_packages(without=(gone,))
                r, out = self.suite("gone-" + gone)
                self.assertEqual(r.returncode, 1, r.stdout + r.stderr)
                m = re.search(rf"^gpu-suite: libraries: {re.escape(gone)} not found \(needed by (.*)\)$", r.stderr, re.M)
                self.assertIsNotNone(m, r.stderr)
                self.assertIn("bin/pipebench", m.group(1).split(", "))
                s = read(os.path.join(out, "summary.md"))
                self.assertRegex(s, rf"\| libraries \| failed \| \d+ \| {re.escape(gone)} not found \(needed by ")
                for step in ("data", "device", "stage", "cnn step", "tests", "sanitizer"):
                    self.assertRegex(s, rf"\| {step} \| not run \| 0 \| the bundled binaries do not load")
                self.assertNotIn(">>> gpu-suite: step device", read(os.path.join(out, "console.log")))

    def test_the_archive_fits_with_the_repository(self):
        self.assertRegex(self.made.stdout, r"\.tar\.gz: [\d.]+ MiB, with the repository's files \([\d.]+ MiB\) "
                                           r"[\d.]+ MiB of 64 MiB")
        files = subprocess.run(["git", "-C", ARGS.repo, "ls-files", "-z", "-co", "--exclude-standard"],
                               capture_output=True, text=True).stdout.split("\0")
        repo = sum(os.path.getsize(os.path.join(ARGS.repo, f)) for f in files
                   if f and os.path.isfile(os.path.join(ARGS.repo, f)))
        self.assertLessEqual(os.path.getsize(self.archive) + repo, LIMIT)


SOURCES = {}

if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--repo", required=True)
    p.add_argument("--build", required=True)
    ARGS, rest = p.parse_known_args()

    def skip(why):
        print(f"gpu_rehearsal_test: skipped: {why}")
        sys.exit(77)

    missing = [t for t in ("patchelf", "ldd", "readelf") if shutil.which(t) is None]
    if missing:
        skip(f"{', '.join(missing)} not installed (apt-get install patchelf: scripts/setup.sh)")
    if not os.path.exists(LDSO) or "--inhibit-cache" not in subprocess.run(
            [LDSO, "--help"], capture_output=True, text=True).stdout:
        skip(f"{LDSO} has no --inhibit-cache")
    smi = shutil.which("nvidia-smi")
    if smi and subprocess.run([smi, "-L"], capture_output=True, text=True).stdout.startswith("GPU "):
        skip("this machine has a GPU (nvidia-smi -L): run the bundle's gpu-suite.sh itself")
    settings = {}
    cache = os.path.join(ARGS.build, "CMakeCache.txt")
    if os.path.exists(cache):
        for line in read(cache).splitlines():
            if ":" in line and "=" in line and not line.startswith(("#", "//")):
                k, v = line.split("=", 1)
                settings[k.split(":", 1)[0]] = v.strip()
    if settings.get("PIPEBENCH_SANITIZE") or settings.get("CMAKE_BUILD_TYPE", "Release") != "Release":
        skip(f"{ARGS.build} is a {settings.get('CMAKE_BUILD_TYPE')} build; the bundle is made from a Release build")
    needed = subprocess.run(["readelf", "-d", os.path.join(ARGS.build, "bench", "pipebench")], capture_output=True,
                            text=True).stdout
    if CUDNN not in needed:
        skip("this build's pipebench links no cuDNN 9 (a build without CUDA or cuDNN)")
    for name in (CUDNN,) + CUBLAS:
        SOURCES[name] = system_lib(name)
        if not SOURCES[name]:
            skip(f"this machine has no {name} to lay out as a pip package")
    sys.exit(run_tests(rest))

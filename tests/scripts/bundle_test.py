"""scripts/bundle.sh on the current build (nothing is rebuilt): the bundle is at most
64 MiB, `ldd` (with LD_LIBRARY_PATH empty) resolves every library of every ELF file in it
inside the bundle or to what a target has itself (glibc, libstdc++, libgcc_s, the CUDA
driver and cuBLAS), the OpenCV imgcodecs plugin is left out, and the bundled binaries run
from a folder outside the build tree: a decode case on a small synthetic dataset, with one
line saying the opencv backend is not run. Skips (77) without patchelf or ldd."""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import struct
import unittest

from ctest_unittest import run_tests
import zlib

ARGS = None
LIMIT = 64 * 1024 * 1024
# What the target brings (scripts/bundle.sh keeps the same list).
SYSTEM = re.compile(r"^(linux-vdso|ld-linux|libc\.so|libm\.so|libpthread\.so|libdl\.so|librt\.so|"
                    r"libutil\.so|libresolv\.so|libmvec\.so|libstdc\+\+\.so|libgcc_s\.so)")
TARGET_CUDA = re.compile(r"^(libcuda\.so|libnvidia-|libcublas\.so|libcublasLt\.so|libcudnn)")


def is_elf(path):
    with open(path, "rb") as f:
        return f.read(4) == b"\x7fELF"


def write_png(path, width=2, height=2):
    """A valid 8-bit RGB PNG (PNG spec: signature, IHDR, one IDAT, IEND)."""
    def chunk(kind, data):
        return (struct.pack(">I", len(data)) + kind + data +
                struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))
    rows = b"".join(b"\x00" + b"\x80\x40\x20" * width for _ in range(height))
    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2,
                                                                   0, 0, 0)) +
                chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


class Bundle(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="pipebench-bundle-test-")
        cls.out = os.path.join(cls.tmp, "bundle")
        cls.made = subprocess.run([os.path.join(ARGS.repo, "scripts", "bundle.sh"), cls.out,
                                   "--build", ARGS.build], capture_output=True, text=True)
        cls.env = dict(os.environ, LD_LIBRARY_PATH="")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_made_and_checked(self):
        self.assertEqual(self.made.returncode, 0, self.made.stdout + self.made.stderr)
        self.assertIn("checked", self.made.stdout)

    def test_at_most_64_mib(self):
        total = sum(os.path.getsize(os.path.join(d, f))
                    for d, _, files in os.walk(self.out) for f in files)
        self.assertGreater(total, 1024 * 1024)  # binaries and libraries are there
        self.assertLessEqual(total, LIMIT, f"{total / 2**20:.1f} MiB")

    def test_ldd_resolves_inside_the_bundle(self):
        real_out = os.path.realpath(self.out)
        checked = 0
        for d, _, files in os.walk(self.out):
            for f in files:
                path = os.path.join(d, f)
                if not is_elf(path):
                    continue
                checked += 1
                r = subprocess.run(["ldd", path], capture_output=True, text=True, env=self.env)
                self.assertEqual(r.returncode, 0, path + r.stderr)
                for line in r.stdout.splitlines():
                    m = re.match(r"\s*(\S+) => (.*?)(?: \(0x[0-9a-f]+\))?$", line)
                    if not m or SYSTEM.match(m.group(1)) or TARGET_CUDA.match(m.group(1)):
                        continue
                    name, where = m.groups()
                    self.assertNotEqual(where, "not found", f"{path}: {name}")
                    self.assertTrue(os.path.realpath(where).startswith(real_out + os.sep),
                                    f"{path}: {name} resolves to {where}")
        self.assertGreaterEqual(checked, 4)  # three binaries and at least one library

    def test_opencv_codecs_left_out(self):
        libs = os.listdir(os.path.join(self.out, "lib"))
        self.assertFalse([l for l in libs if "imgcodecs" in l or "gdal" in l.lower()], libs)
        self.assertNotIn("libpipebench_opencv_codecs.so", libs)

    def test_runs_outside_the_build_tree(self):
        work = os.path.join(self.tmp, "elsewhere")
        os.makedirs(work)
        bin_dir = os.path.join(self.out, "bin")
        data = os.path.join(work, "data")
        r = subprocess.run([os.path.join(bin_dir, "pipebench-data"), "synthetic", data, "--count",
                            "4", "--classes", "2"], capture_output=True, text=True, cwd=work,
                           env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = subprocess.run([os.path.join(bin_dir, "pipebench"), "--data=" + data,
                            "--benchmark_filter=BM_Decode/(turbo_full|opencv)",
                            "--benchmark_min_time=0.001", "--quiet"],
                           capture_output=True, text=True, cwd=work, env=self.env, timeout=300)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("BM_Decode/turbo_full", r.stdout)
        self.assertNotIn("ERROR OCCURRED", r.stdout)
        self.assertIn("BM_Decode/opencv not run", r.stderr)
        self.assertIn("OpenCV imgcodecs", r.stderr)
        r = subprocess.run([os.path.join(bin_dir, "pipebench-report"), "--help"],
                           capture_output=True, text=True, cwd=work, env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)

    def test_non_jpeg_is_unsupported_and_says_why(self):
        data = os.path.join(self.tmp, "mixed")
        r = subprocess.run([os.path.join(self.out, "bin", "pipebench-data"), "synthetic", data,
                            "--count", "2", "--classes", "1"], capture_output=True, text=True,
                           env=self.env)
        self.assertEqual(r.returncode, 0, r.stderr)
        cls = os.path.join(data, sorted(os.listdir(data))[0])
        write_png(os.path.join(cls, "drawing.png"))
        r = subprocess.run([os.path.join(self.out, "bin", "pipebench-data"), "inspect", "--check",
                            data], capture_output=True, text=True, env=self.env, timeout=120)
        self.assertEqual(r.returncode, 1, r.stdout + r.stderr)  # one bad file
        text = r.stdout + r.stderr
        self.assertIn("drawing.png", text)
        self.assertIn("OpenCV imgcodecs", text)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--repo", required=True)
    p.add_argument("--build", required=True)
    ARGS, rest = p.parse_known_args()
    missing = [t for t in ("patchelf", "ldd", "readelf") if shutil.which(t) is None]
    if missing:
        print(f"bundle_test: skipped: {', '.join(missing)} not installed "
              "(apt-get install patchelf: scripts/setup.sh)")
        sys.exit(77)
    # The bundle is made from a Release build; a sanitizer build's instrumented binaries
    # (about 145 MiB here) are not what a GPU node gets, and their size means nothing.
    cache = os.path.join(ARGS.build, "CMakeCache.txt")
    settings = {}
    if os.path.exists(cache):
        for line in open(cache, encoding="utf-8", errors="replace"):
            if ":" in line and "=" in line and not line.startswith(("#", "//")):
                key, value = line.split("=", 1)
                settings[key.split(":", 1)[0]] = value.strip()
    if settings.get("PIPEBENCH_SANITIZE") or settings.get("CMAKE_BUILD_TYPE", "Release") != "Release":
        print(f"bundle_test: skipped: {ARGS.build} is a {settings.get('CMAKE_BUILD_TYPE')} build"
              f" (sanitizers: {settings.get('PIPEBENCH_SANITIZE') or 'none'}); "
              "the bundle is made from a Release build")
        sys.exit(77)
    sys.exit(run_tests(rest))

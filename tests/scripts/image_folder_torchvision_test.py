#!/usr/bin/python3
"""pipebench's dataset scanner against torchvision 0.14's own ImageFolder code: on a tree
with nested folders, symbolic links to directories and files, mixed-case extensions,
names whose byte order differs from their path order ("a b" sorts before "a/x"), macOS
"._" files, hidden folders and files that are not images, `pipebench-data inspect --list`
must give exactly torchvision.datasets.folder.make_dataset's samples: the same paths, in
the same order, with the same labels. Then the documented deviations, each checked
against what torchvision does: an empty class (torchvision raises), a symbolic link loop
(torchvision lists files many times over) and a dangling link (torchvision lists it).

Skips (exit 77) where /usr/bin/python3 has no torchvision.

usage: image_folder_torchvision_test.py --pipebench-data BIN
"""
import argparse
import os
import subprocess
import sys
import tempfile
import unittest

from ctest_unittest import run_tests

try:
    from torchvision.datasets.folder import IMG_EXTENSIONS, find_classes, make_dataset
except ImportError:  # pragma: no cover - depends on the machine
    print("torchvision not importable: skipped")
    sys.exit(77)

ARGS = None


def put(path, data=b"x"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)


def pipebench_list(root):
    r = subprocess.run([ARGS.pipebench_data, "inspect", root, "--list"], capture_output=True,
                       timeout=60)
    assert r.returncode == 0, r.stderr
    out = []
    for line in r.stdout.decode().splitlines():
        label, path = line.split("\t", 1)
        out.append((path, int(label)))
    return out


def torchvision_list(root):
    _, class_to_idx = find_classes(root)
    return make_dataset(root, class_to_idx, extensions=IMG_EXTENSIONS)


class TorchvisionRules(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.root = os.path.join(self.tmp.name, "data")
        self.outside = os.path.join(self.tmp.name, "outside")
        r = self.root
        for name in ["b/z.jpg", "b/y.JPEG", "b/x.png", "b/w.Webp", "b/v.TIF", "b/u.tiff",
                     "b/t.ppm", "b/s.pgm", "b/r.bmp", "b/._z.jpg", "b/.hidden.jpg",
                     "a/m.jpeg", "a/a b/1.jpg", "a/a/x.jpg", "a/a/deeper/y.jpg", "a/a-b/2.jpg",
                     "C/k.Jpg", "C/sub/k.jpg", ".hidden_class/h.jpg", "Z/q.jpg.txt",
                     "Z/notes.txt", "Z/img.gif", "Z/ok.jpg", "top.jpg"]:
            put(os.path.join(r, name))
        put(os.path.join(self.outside, "linked", "l1.jpg"))
        put(os.path.join(self.outside, "file.jpg"))
        os.symlink(os.path.join(self.outside, "linked"), os.path.join(r, "a", "link_dir"))
        os.symlink(os.path.join(self.outside, "linked"), os.path.join(r, "linked_class"))
        os.symlink(os.path.join(self.outside, "file.jpg"), os.path.join(r, "b", "link.jpg"))

    def tearDown(self):
        self.tmp.cleanup()

    def test_same_samples_order_and_labels_as_torchvision(self):
        expected = torchvision_list(self.root)
        self.assertGreater(len(expected), 20)
        self.assertEqual(pipebench_list(self.root), expected)

    def test_count_agrees_with_inspect(self):
        r = subprocess.run([ARGS.pipebench_data, "inspect", self.root, "--headers-only"],
                           capture_output=True, timeout=60)
        # Files of one byte are not images: all unreadable, so inspect refuses (exit 2)...
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(b"no readable image among %d image file" % len(torchvision_list(self.root)),
                      r.stderr)
        # ...and --check lists every one of them as bad, exit 1.
        r = subprocess.run([ARGS.pipebench_data, "inspect", self.root, "--check"],
                           capture_output=True, timeout=60)
        self.assertEqual(r.returncode, 1, r.stderr)
        n = len(torchvision_list(self.root))
        self.assertIn(b"checked %d image files: 0 good, %d bad" % (n, n), r.stdout)
        self.assertEqual(r.stdout.count(b"\nbad: "), n)

    def test_deviations_are_reported_not_silent(self):
        os.makedirs(os.path.join(self.root, "empty_class", "sub"))
        with self.assertRaises(FileNotFoundError):  # torchvision refuses the whole set
            torchvision_list(self.root)
        os.symlink("..", os.path.join(self.root, "a", "a", "loop"))
        os.symlink("missing.jpg", os.path.join(self.root, "b", "dangling.jpg"))
        got = pipebench_list(self.root)
        # Without the three deviations, torchvision's list (minus the dangling link it lists).
        os.rmdir(os.path.join(self.root, "empty_class", "sub"))
        os.rmdir(os.path.join(self.root, "empty_class"))
        os.unlink(os.path.join(self.root, "a", "a", "loop"))
        expected = [(p, l) for p, l in torchvision_list(self.root)
                    if not p.endswith("dangling.jpg")]
        self.assertEqual(got, expected)
        os.makedirs(os.path.join(self.root, "empty_class"))
        os.symlink("..", os.path.join(self.root, "a", "a", "loop"))
        r = subprocess.run([ARGS.pipebench_data, "inspect", self.root, "--check"],
                           capture_output=True, timeout=60)
        out = r.stdout.decode()
        self.assertIn("ignored: %s: class directory with no image file"
                      % os.path.join(self.root, "empty_class"), out)
        self.assertIn("ignored: %s: symbolic link loop" % os.path.join(self.root, "a", "a", "loop"),
                      out)
        self.assertIn("ignored: %s: dangling symbolic link" % os.path.join(self.root, "b",
                                                                          "dangling.jpg"), out)


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--pipebench-data", required=True)
    ARGS, rest = p.parse_known_args()
    ARGS.pipebench_data = os.path.abspath(ARGS.pipebench_data)
    sys.exit(run_tests(rest))

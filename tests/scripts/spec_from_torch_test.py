#!/usr/bin/python3
"""scripts/spec_from_torch.py (issue 28 item 5): torchvision transforms -> pipebench spec.

For every pipebench operator with a torchvision class (pipebench --list-ops), a torchvision
object with non-default parameters is converted, and pipebench itself reads the spec, plans
it and runs BM_Sample on a tiny dataset: the run's resolved spec (context pipeline_spec)
must hold the operators and parameters torchvision's semantics give (ColorJitter(0.4) is
[0.6, 1.4], ...), and its plan (pipeline_plan) those operators in order. The README's
example Compose and torchvision's reference recipes give exactly the shipped recipes'
resolved specs and plans; a Compose of 13 transforms runs; what cannot be mapped is one
line each on stderr with the nearest operator and exit 3, the rest still running; bad input
exits 2 with one line; docs/spec-from-torch.md holds the script's mapping table.

Skips (exit 77) where /usr/bin/python3 has no torchvision or PyYAML.

usage: spec_from_torch_test.py --pipebench BIN --scripts DIR
"""
import sys

sys.dont_write_bytecode = True  # loading the script leaves no __pycache__ in scripts/

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import textwrap  # noqa: E402
import unittest  # noqa: E402

from ctest_unittest import run_tests  # noqa: E402

try:
    import torch
    import torchvision.transforms as T
    import yaml
    from PIL import Image
    HAVE = True
    WHY = ""
except ImportError as e:  # pragma: no cover - depends on the machine
    HAVE = False
    WHY = f"{sys.executable} has no torchvision / PyYAML / PIL ({e})"

ARGS = None
TOOL = None  # scripts/spec_from_torch.py, loaded as a module
IMAGENET = ([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
ENV = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")


def load_tool(scripts):
    spec = importlib.util.spec_from_file_location("spec_from_torch", os.path.join(scripts, "spec_from_torch.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def same(got, want):
    """want's structure, numbers within float32 rounding (normalize's imagenet is float32)."""
    if isinstance(want, (list, tuple)):
        return isinstance(got, list) and len(got) == len(want) and all(same(g, w) for g, w in zip(got, want))
    if want is None or isinstance(want, bool) or isinstance(want, str):
        return got == want
    if isinstance(want, dict):
        return isinstance(got, dict) and set(got) == set(want) and all(same(got[k], want[k]) for k in want)
    return (isinstance(got, (int, float)) and not isinstance(got, bool)
            and math.isclose(got, want, rel_tol=1e-6, abs_tol=1e-9))


if HAVE:
    IM = T.InterpolationMode

    class RandomMixup(torch.nn.Module):
        """torchvision 0.14's references/classification/transforms.py RandomMixup (its attributes)."""

        def __init__(self, num_classes, p=0.5, alpha=1.0, inplace=False):
            super().__init__()
            self.num_classes, self.p, self.alpha, self.inplace = num_classes, p, alpha, inplace

    class RandomCutmix(RandomMixup):
        """... and RandomCutmix."""

    # torchvision >= 0.16's v2 classes, as their attributes are (0.14 has no transforms.v2).
    class MixUp:
        def __init__(self, alpha=1.0, num_classes=None):
            self.alpha, self.num_classes = float(alpha), num_classes

        def __call__(self, x):
            return x

    class CutMix(MixUp):
        pass

    class ToDtype:
        def __init__(self, dtype, scale=False):
            self.dtype, self.scale = dtype, scale

        def __call__(self, x):
            return x

    for _cls in (MixUp, CutMix, ToDtype):
        _cls.__module__ = "torchvision.transforms.v2._fake"

    NORM = ("normalize", {"mean": IMAGENET[0], "std": IMAGENET[1]})
    CROP = ("center_crop", {"size": 32})
    DEFAULT_RRC = {"size": 224, "scale": [0.08, 1.0], "ratio": [0.75, 4 / 3], "interpolation": "bilinear"}

    def crop_then(*ts):
        """CenterCrop(32), the transforms, ToTensor, Normalize(ImageNet)."""
        return [T.CenterCrop(32), *ts, T.ToTensor(), T.Normalize(*IMAGENET)]

    # operator -> [(torchvision transforms, batch transform or None, label smoothing,
    #               expected per-sample ops, expected batch ops)]
    CASES = {
        "random_resized_crop": [
            ([T.RandomResizedCrop(32, scale=(0.5, 1.0), ratio=(0.8, 1.25), interpolation=IM.BICUBIC),
              T.ToTensor(), T.Normalize(*IMAGENET)], None, 0,
             [("random_resized_crop", {"size": 32, "scale": [0.5, 1.0], "ratio": [0.8, 1.25],
                                       "interpolation": "bicubic"}), NORM], [])],
        "resize": [
            ([T.Resize((40, 48), interpolation=IM.NEAREST), T.CenterCrop(32), T.ToTensor(), T.Normalize(*IMAGENET)],
             None, 0, [("resize", {"size": [40, 48], "interpolation": "nearest"}), CROP, NORM], []),
            ([T.Resize([36]), T.CenterCrop(32), T.ToTensor(), T.Normalize(*IMAGENET)], None, 0,
             [("resize", {"size": [36], "interpolation": "bilinear"}), CROP, NORM], [])],
        "center_crop": [
            ([T.CenterCrop((24, 24)), T.ToTensor(), T.Normalize(*IMAGENET)], None, 0,
             [("center_crop", {"size": 24}), NORM], [])],
        "random_crop": [
            ([T.RandomCrop(56, padding=4, pad_if_needed=True, fill=7), T.ToTensor(), T.Normalize(*IMAGENET)],
             None, 0, [("random_crop", {"size": 56, "padding": 4, "pad_if_needed": True, "fill": 7}), NORM], []),
            ([T.RandomCrop(32, padding=[2, 2, 2, 2], fill=(9, 9, 9)), T.ToTensor(), T.Normalize(*IMAGENET)],
             None, 0, [("random_crop", {"size": 32, "padding": 2, "pad_if_needed": False, "fill": 9}), NORM], [])],
        "horizontal_flip": [
            (crop_then(T.RandomHorizontalFlip(0.3)), None, 0, [CROP, ("horizontal_flip", {"p": 0.3}), NORM], []),
            # RandomApply of one transform with a probability multiplies it into p.
            (crop_then(T.RandomApply([T.RandomHorizontalFlip(1.0)], p=0.4)), None, 0,
             [CROP, ("horizontal_flip", {"p": 0.4}), NORM], [])],
        "vertical_flip": [
            (crop_then(T.RandomVerticalFlip(0.2)), None, 0, [CROP, ("vertical_flip", {"p": 0.2}), NORM], [])],
        "color_jitter": [
            (crop_then(T.ColorJitter(0.4, (0.5, 1.5), 0.2, 0.1)), None, 0,
             [CROP, ("color_jitter", {"brightness": [0.6, 1.4], "contrast": [0.5, 1.5],
                                      "saturation": [0.8, 1.2], "hue": [-0.1, 0.1]}), NORM], []),
            (crop_then(T.ColorJitter(brightness=1.5)), None, 0,  # the low end clipped at 0
             [CROP, ("color_jitter", {"brightness": [0.0, 2.5], "contrast": [0], "saturation": [0],
                                      "hue": [0]}), NORM], [])],
        "random_grayscale": [
            (crop_then(T.RandomGrayscale(0.3)), None, 0, [CROP, ("random_grayscale", {"p": 0.3}), NORM], []),
            (crop_then(T.Grayscale(3)), None, 0, [CROP, ("random_grayscale", {"p": 1.0}), NORM], [])],
        "gaussian_blur": [
            (crop_then(T.GaussianBlur(5, sigma=(0.5, 1.5))), None, 0,
             [CROP, ("gaussian_blur", {"kernel_size": 5, "sigma": [0.5, 1.5]}), NORM], []),
            (crop_then(T.GaussianBlur((3, 3), sigma=0.7)), None, 0,
             [CROP, ("gaussian_blur", {"kernel_size": 3, "sigma": [0.7, 0.7]}), NORM], [])],
        "random_rotation": [
            (crop_then(T.RandomRotation((-20, 30), interpolation=IM.BILINEAR, fill=(10, 20, 30))), None, 0,
             [CROP, ("random_rotation", {"degrees": [-20, 30], "interpolation": "bilinear", "expand": False,
                                         "fill": [10, 20, 30]}), NORM], [])],
        "random_affine": [
            (crop_then(T.RandomAffine(15, translate=(0.1, 0.2), scale=(0.9, 1.1), shear=(-5, 5, -3, 3), fill=5)),
             None, 0, [CROP, ("random_affine", {"degrees": [-15, 15], "translate": [0.1, 0.2], "scale": [0.9, 1.1],
                                                "shear": [-5, 5, -3, 3], "interpolation": "nearest",
                                                "fill": [5]}), NORM], []),
            (crop_then(T.RandomAffine((-3, 7), shear=4, interpolation=IM.BILINEAR)), None, 0,
             [CROP, ("random_affine", {"degrees": [-3, 7], "translate": [], "scale": [], "shear": [-4, 4],
                                       "interpolation": "bilinear", "fill": [0]}), NORM], [])],
        "random_erasing": [
            ([T.CenterCrop(32), T.ToTensor(), T.Normalize(*IMAGENET),
              T.RandomErasing(p=0.7, scale=(0.1, 0.2), ratio=(0.5, 2.0), value=(1, 2, 3))], None, 0,
             [CROP, NORM, ("random_erasing", {"p": 0.7, "scale": [0.1, 0.2], "ratio": [0.5, 2.0],
                                              "value": [1, 2, 3]})], []),
            ([T.CenterCrop(32), T.ToTensor(), T.RandomErasing(value="random"), T.Normalize(*IMAGENET)], None, 0,
             [CROP, ("to_dtype", {"dtype": "float32", "scale": True}),
              ("random_erasing", {"p": 0.5, "scale": [0.02, 0.33], "ratio": [0.3, 3.3], "value": []}), NORM], [])],
        "rand_augment": [
            (crop_then(T.RandAugment(num_ops=3, magnitude=5, num_magnitude_bins=11, interpolation=IM.BILINEAR,
                                     fill=[1, 2, 3])), None, 0,
             [CROP, ("rand_augment", {"num_ops": 3, "magnitude": 5, "num_magnitude_bins": 11,
                                      "interpolation": "bilinear", "fill": [1, 2, 3], "magnitude_std": 0,
                                      "increasing": False}), NORM], [])],
        "trivial_augment_wide": [
            (crop_then(T.TrivialAugmentWide(num_magnitude_bins=21)), None, 0,
             [CROP, ("trivial_augment_wide", {"num_magnitude_bins": 21, "interpolation": "nearest",
                                              "fill": []}), NORM], [])],
        "auto_augment": [
            (crop_then(T.AutoAugment(T.AutoAugmentPolicy.CIFAR10, fill=4)), None, 0,
             [CROP, ("auto_augment", {"policy": "cifar10", "interpolation": "nearest", "fill": [4]}), NORM], [])],
        "random_autocontrast": [
            (crop_then(T.RandomAutocontrast(0.2)), None, 0, [CROP, ("random_autocontrast", {"p": 0.2}), NORM], [])],
        "random_equalize": [
            (crop_then(T.RandomEqualize(0.3)), None, 0, [CROP, ("random_equalize", {"p": 0.3}), NORM], [])],
        "random_invert": [
            (crop_then(T.RandomInvert(0.4)), None, 0, [CROP, ("random_invert", {"p": 0.4}), NORM], [])],
        "random_posterize": [
            (crop_then(T.RandomPosterize(bits=3, p=0.6)), None, 0,
             [CROP, ("random_posterize", {"bits": 3, "p": 0.6}), NORM], [])],
        "random_solarize": [
            (crop_then(T.RandomSolarize(threshold=100, p=0.7)), None, 0,
             [CROP, ("random_solarize", {"threshold": 100, "p": 0.7}), NORM], [])],
        "random_adjust_sharpness": [
            (crop_then(T.RandomAdjustSharpness(sharpness_factor=1.5, p=0.8)), None, 0,
             [CROP, ("random_adjust_sharpness", {"sharpness_factor": 1.5, "p": 0.8}), NORM], [])],
        "normalize": [
            ([T.CenterCrop(32), T.PILToTensor(), T.ConvertImageDtype(torch.float),
              T.Normalize((0.5, 0.4, 0.3), (0.2, 0.25, 0.3))], None, 0,
             [CROP, ("normalize", {"mean": [0.5, 0.4, 0.3], "std": [0.2, 0.25, 0.3]})], []),
            ([T.CenterCrop(32), T.ToTensor(), T.Normalize([0.5], [0.25])], None, 0,
             [CROP, ("normalize", {"mean": [0.5] * 3, "std": [0.25] * 3})], []),
            # v2 (0.16+): ToDtype without scale keeps 0..255 values: to_dtype {scale: false} first.
            ([T.CenterCrop(32), T.PILToTensor(), ToDtype(torch.float32), T.Normalize([100.0] * 3, [50.0] * 3)],
             None, 0, [CROP, ("to_dtype", {"dtype": "float32", "scale": False}),
                       ("normalize", {"mean": [100.0] * 3, "std": [50.0] * 3})], []),
            ([T.CenterCrop(32), T.PILToTensor(), ToDtype(torch.float32, scale=True), T.Normalize(*IMAGENET)],
             None, 0, [CROP, NORM], [])],
        "to_dtype": [
            ([T.CenterCrop(32), T.ToTensor()], None, 0, [CROP, ("to_dtype", {"dtype": "float32", "scale": True})], [])],
        "mixup": [
            ([T.CenterCrop(32), T.ToTensor(), T.Normalize(*IMAGENET)], RandomMixup(10, p=0.5, alpha=0.4), 0,
             [CROP, NORM], [("mixup", {"alpha": 0.4, "p": 0.5})]),
            ([T.CenterCrop(32), T.ToTensor(), T.Normalize(*IMAGENET)], MixUp(alpha=0.3, num_classes=10), 0,
             [CROP, NORM], [("mixup", {"alpha": 0.3, "p": 1.0})])],
        "cutmix": [
            ([T.CenterCrop(32), T.ToTensor(), T.Normalize(*IMAGENET)], [RandomCutmix(10, p=0.6, alpha=0.9)], 0,
             [CROP, NORM], [("cutmix", {"alpha": 0.9, "p": 0.6})]),
            ([T.CenterCrop(32), T.ToTensor(), T.Normalize(*IMAGENET)], CutMix(alpha=0.7), 0,
             [CROP, NORM], [("cutmix", {"alpha": 0.7, "p": 1.0})])],
        "mixup_cutmix": [
            # P(cutmix) = 0.75 x 0.8 = 0.6, P(mixup) = 0.25 x 0.4 = 0.1: prob 0.7, switch 0.6 / 0.7.
            ([T.CenterCrop(32), T.ToTensor(), T.Normalize(*IMAGENET)],
             T.RandomChoice([RandomMixup(10, p=0.4, alpha=0.2), RandomCutmix(10, p=0.8, alpha=1.0)], p=[1, 3]),
             0, [CROP, NORM], [("mixup_cutmix", {"mixup_alpha": 0.2, "cutmix_alpha": 1.0, "prob": 0.7,
                                                 "switch_prob": 0.6 / 0.7})]),
            ([T.CenterCrop(32), T.ToTensor(), T.Normalize(*IMAGENET)],
             T.RandomChoice([MixUp(alpha=0.8), CutMix(alpha=1.0)]), 0, [CROP, NORM],
             [("mixup_cutmix", {"mixup_alpha": 0.8, "cutmix_alpha": 1.0, "prob": 1.0, "switch_prob": 0.5})])],
        "label_smoothing": [
            ([T.CenterCrop(32), T.ToTensor(), T.Normalize(*IMAGENET)], None, 0.2, [CROP, NORM],
             [("label_smoothing", {"smoothing": 0.2})])],
    }

    # The README's example (imagenet_train) and torchvision's reference recipes, as files.
    RECIPES_PY = textwrap.dedent('''\
        import torch
        import torchvision.transforms as T

        IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
        readme = T.Compose([T.RandomResizedCrop(224), T.RandomHorizontalFlip(), T.ToTensor(),
                            T.Normalize(mean=IMAGENET_MEAN, std=IMAGENET_STD)])
        val = T.Compose([T.Resize(256), T.CenterCrop(224), T.ToTensor(), T.Normalize(IMAGENET_MEAN, IMAGENET_STD)])


        class ClassificationPresetTrain:  # references/classification/presets.py, trimmed
            def __init__(self, crop_size=176):
                self.transforms = T.Compose([
                    T.RandomResizedCrop(crop_size), T.RandomHorizontalFlip(0.5),
                    T.TrivialAugmentWide(interpolation=T.InterpolationMode.BILINEAR),
                    T.PILToTensor(), T.ConvertImageDtype(torch.float),
                    T.Normalize(mean=IMAGENET_MEAN, std=IMAGENET_STD), T.RandomErasing(p=0.1)])

            def __call__(self, img):
                return self.transforms(img)


        class RandomMixup(torch.nn.Module):  # references/classification/transforms.py's attributes
            def __init__(self, num_classes, p=0.5, alpha=1.0, inplace=False):
                super().__init__()
                self.num_classes, self.p, self.alpha, self.inplace = num_classes, p, alpha, inplace


        class RandomCutmix(RandomMixup):
            pass


        v2_train = ClassificationPresetTrain(crop_size=176)
        mixup_cutmix = T.RandomChoice([RandomMixup(1000, p=1.0, alpha=0.2), RandomCutmix(1000, p=1.0, alpha=1.0)])
        ''')
    BIG_PY = textwrap.dedent('''\
        import torchvision.transforms as T
        from torchvision.transforms import InterpolationMode as IM

        print("this print goes to stderr, not into the spec")
        train_transform = T.Compose([
            T.RandomResizedCrop(48, scale=(0.25, 1.0), interpolation=IM.BICUBIC),
            T.RandomHorizontalFlip(), T.RandomVerticalFlip(0.1), T.ColorJitter(0.4, 0.4, 0.4, 0.1),
            T.RandomGrayscale(0.2), T.GaussianBlur(5), T.RandomRotation(10),
            T.RandomAffine(5, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5),
            T.RandAugment(), T.RandomApply([T.RandomEqualize(p=1.0)], p=0.3), T.ToTensor(),
            T.Normalize([0.5, 0.5, 0.5], [0.25, 0.25, 0.25]), T.RandomErasing(0.25, value="random")])
        ''')
    BIG_OPS = ["random_resized_crop", "horizontal_flip", "vertical_flip", "color_jitter", "random_grayscale",
               "gaussian_blur", "random_rotation", "random_affine", "rand_augment", "random_equalize",
               "normalize", "random_erasing"]
    PARTIAL_PY = textwrap.dedent('''\
        import torchvision.transforms as T


        class MyBlur:  # a user's own transform
            def __call__(self, img):
                return img


        class MyCrop(T.RandomCrop):  # a subclass: its own code may differ
            pass


        partial = T.Compose([
            T.Resize(40), T.Lambda(lambda x: x), T.RandomPerspective(), T.AugMix(),
            T.RandomApply([T.ColorJitter(0.4)], p=0.8), T.CenterCrop((32, 30)), MyBlur(), MyCrop(8),
            T.CenterCrop(32), T.ToTensor(), T.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)), T.RandomHorizontalFlip()])
        ''')
    # left-out class -> its nearest operator (None: "no pipebench operator")
    PARTIAL_LEFT_OUT = {"Lambda": None, "RandomPerspective": "random_affine", "AugMix": "rand_augment",
                        "RandomApply": "color_jitter", "CenterCrop": "center_crop", "MyBlur": None,
                        "MyCrop": "random_crop", "RandomHorizontalFlip": "horizontal_flip"}


@unittest.skipUnless(HAVE, WHY)
class SpecFromTorch(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.data = os.path.join(cls.tmp.name, "data")
        for i in range(4):  # 4 JPEGs of 64 x 48 in 2 classes
            folder = os.path.join(cls.data, f"class_{i % 2}")
            os.makedirs(folder, exist_ok=True)
            Image.frombytes("RGB", (64, 48), os.urandom(64 * 48 * 3)).save(
                os.path.join(folder, f"img_{i}.jpg"), quality=90)
        cls.runs = 0

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def file(self, name, text):
        path = os.path.join(self.tmp.name, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def cli(self, *args, cwd=None):
        return subprocess.run([sys.executable, os.path.join(ARGS.scripts, "spec_from_torch.py"), *args],
                              capture_output=True, text=True, timeout=120, cwd=cwd or self.tmp.name, env=ENV)

    def pipebench(self, spec, name, *flags):
        """pipebench runs BM_Sample/<name> of the spec (a file or inline; None: flags name the
        pipeline): (rc, stderr, {spec: the resolved spec, plan})."""
        SpecFromTorch.runs += 1
        out = os.path.join(self.tmp.name, f"run{self.runs}.json")
        pipeline = ["--pipeline=" + spec] if spec else []
        r = subprocess.run([ARGS.pipebench, *pipeline, *flags, "--data=" + self.data,
                            f"--benchmark_filter=BM_Sample/{name}$", "--benchmark_min_time=0.01", "--round=4",
                            "--batch=4", "--system-sample-hz=0", "--presize=off", "--quiet",
                            "--benchmark_out=" + out], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return r.returncode, r.stderr, None
        with open(out) as f:
            doc = json.load(f)
        names = [b["name"] for b in doc["benchmarks"]]
        self.assertEqual(names, [f"BM_Sample/{name}"], r.stderr)
        self.assertNotIn("error_occurred", doc["benchmarks"][0], doc["benchmarks"][0])
        ctx = doc["context"]
        return 0, r.stderr, {"spec": yaml.safe_load(ctx["pipeline_spec"]), "plan": ctx["pipeline_plan"]}

    def convert(self, transforms, batch=None, smoothing=0.0, name="case", one_line=False):
        """In process: the spec text and the left-out lines."""
        c = TOOL.convert(T.Compose(transforms), batch, smoothing)
        return TOOL.render(c, name, "full", one_line, ["test"]), TOOL.left_out_lines(c)

    def assert_ops(self, got, want, what):
        got_ops = [(next(iter(o)), next(iter(o.values()))) for o in got or []]
        self.assertEqual([n for n, _ in got_ops], [n for n, _ in want], what)
        for (n, params), (_, expect) in zip(got_ops, want):
            self.assertTrue(same(params, expect), f"{what}: {n}: pipebench read {params}, expected {expect}")

    def test_every_operator_with_a_torchvision_class(self):
        listing = subprocess.run([ARGS.pipebench, "--list-ops"], capture_output=True, text=True, timeout=60)
        self.assertEqual(listing.returncode, 0, listing.stderr)
        with_class = set(re.findall(r"^(\w+)\s+\[\w+\]\s+torchvision \S+$", listing.stdout, re.M)) - {"decode"}
        self.assertGreaterEqual(len(with_class), 20, listing.stdout)
        # Every operator with a torchvision class has a case (label_smoothing and mixup_cutmix too).
        self.assertEqual(with_class - set(CASES), set(), "operators without a case")
        k = 0
        for op, cases in CASES.items():
            for transforms, batch, smoothing, want, want_batch in cases:
                k += 1
                with self.subTest(op=op, case=k):
                    text, left = self.convert(transforms, batch, smoothing, name=f"case{k}")
                    self.assertEqual(left, [], text)
                    path = self.file(f"case{k}.yaml", text)
                    rc, err, run = self.pipebench(path, f"case{k}")
                    self.assertEqual(rc, 0, f"{text}\n{err}")
                    spec = run["spec"]
                    self.assertEqual(spec["decode"], {"mode": "full"})
                    self.assert_ops(spec["transforms"], want, text)
                    self.assert_ops(spec.get("batch"), want_batch, text)
                    # The plan runs those operators in that order (fused steps joined by +),
                    # the batch operators after the collate ("... => collate -> mixup").
                    head, _, tail = run["plan"].partition(" => ")
                    steps = re.split(r" -> |\+", head.split(" -> ", 1)[1])
                    self.assertEqual([s.split("(")[0] for s in steps], [n for n, _ in want], run["plan"])
                    self.assertEqual(tail.split(" -> ")[1:], [n for n, _ in want_batch], run["plan"])

    def recipe_run(self, recipe):
        rc, err, run = self.pipebench(None, recipe, "--recipe=" + recipe)
        self.assertEqual(rc, 0, err)
        return run

    def test_the_readme_example_and_the_references_are_the_shipped_recipes(self):
        src = self.file("recipes_py.py", RECIPES_PY)
        for attr, recipe, extra in [("readme", "imagenet_train", []), ("val", "imagenet_val", []),
                                    ("v2_train", "torchvision_v2_train",
                                     ["--batch", src + ":mixup_cutmix", "--label-smoothing", "0.1"])]:
            with self.subTest(recipe=recipe):
                out = os.path.join(self.tmp.name, attr + ".yaml")
                r = self.cli(f"{src}:{attr}", "--out", out, *extra)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stderr, "")
                rc, err, ours = self.pipebench(out, attr)
                self.assertEqual(rc, 0, err)
                shipped = self.recipe_run(recipe)
                self.assertEqual(ours["plan"], shipped["plan"])
                for key in ("decode", "transforms", "collate", "batch"):
                    self.assertTrue(same(ours["spec"].get(key), shipped["spec"].get(key)),
                                    f"{key}: ours {ours['spec'].get(key)}, {recipe} {shipped['spec'].get(key)}")
        self.assertEqual(shipped["plan"], "decode(full) -> random_resized_crop+horizontal_flip -> "
                         "trivial_augment_wide -> normalize -> random_erasing => collate -> mixup_cutmix -> "
                         "label_smoothing")

    def test_a_compose_of_13_transforms_runs(self):
        src = self.file("big.py", BIG_PY)
        r = self.cli("big.py")  # the file's one transform, found without an attribute
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr.strip(), "this print goes to stderr, not into the spec")
        self.assertEqual(yaml.safe_load(r.stdout)["name"], "train_transform")
        path = self.file("big.yaml", r.stdout)
        rc, err, run = self.pipebench(path, "train_transform")
        self.assertEqual(rc, 0, err)
        self.assertEqual([next(iter(o)) for o in run["spec"]["transforms"]], BIG_OPS)
        self.assertEqual(run["plan"], "decode(full) -> " + " -> ".join(
            ["random_resized_crop+horizontal_flip"] + BIG_OPS[2:]))
        # The one-line form, inline, is the same pipeline.
        line = self.cli(src + ":train_transform", "--one-line", "--name", "inline")
        self.assertEqual(line.returncode, 0, line.stderr)
        self.assertEqual(len(line.stdout.strip().splitlines()), 1, line.stdout)
        rc, err, inline = self.pipebench(line.stdout.strip(), "inline")
        self.assertEqual(rc, 0, err)
        self.assertEqual(inline["plan"], run["plan"])
        self.assertTrue(same(inline["spec"]["transforms"], run["spec"]["transforms"]))

    def test_what_cannot_be_mapped_is_one_line_each_and_exit_3(self):
        self.file("partial_mod.py", PARTIAL_PY)
        r = self.cli("partial_mod:partial")  # MODULE:ATTRIBUTE from the current folder
        self.assertEqual(r.returncode, 3, r.stderr)
        lines = r.stderr.strip().splitlines()
        self.assertEqual(len(lines), len(PARTIAL_LEFT_OUT), r.stderr)
        pattern = re.compile(r"^spec_from_torch: left out \[(\d+)\] (\w+)\b.*: .+; "
                             r"(nearest pipebench operator: ([\w, ]+)|no pipebench operator)$")
        found = {}
        for line in lines:
            m = pattern.match(line)
            self.assertIsNotNone(m, line)
            found[m.group(2)] = m.group(4)
        self.assertEqual(found, PARTIAL_LEFT_OUT, r.stderr)
        # The rest is still a spec pipebench runs: resize, center_crop, normalize.
        path = self.file("partial.yaml", r.stdout)
        self.assertEqual(r.stdout.count("# left out:"), len(PARTIAL_LEFT_OUT), r.stdout)
        rc, err, run = self.pipebench(path, "partial")
        self.assertEqual(rc, 0, err)
        self.assertEqual(run["plan"], "decode(full) -> resize+center_crop+normalize")

    def test_bad_input_is_one_line_and_exit_2(self):
        self.file("plain.py", "import torchvision.transforms as T\nn = 3\nt = T.CenterCrop(8)\n"
                              "def make():\n    return T.Compose([T.CenterCrop(8), T.PILToTensor()])\n")
        self.file("boom.py", "raise RuntimeError('boom at import')\n")
        self.file("two.py", "import torchvision.transforms as T\na = T.Compose([T.CenterCrop(8)])\n"
                            "b = T.Compose([T.CenterCrop(9)])\n")
        for target, mentions in [("no_such_module_xyz:train", "no_such_module_xyz"),
                                 ("missing.py:train", "missing.py: no such file"),
                                 ("plain.py:nothere", "no attribute nothere"),
                                 ("plain:n", "not a torchvision transform"),
                                 ("plain.py:make", "is a function"),
                                 ("plain.py:T", "not a torchvision transform"),
                                 ("boom.py:x", "boom at import"),
                                 ("two.py", "a, b")]:
            with self.subTest(target=target):
                r = self.cli(target)
                self.assertEqual(r.returncode, 2, r.stdout + r.stderr)
                self.assertEqual(r.stdout, "")
                lines = r.stderr.strip().splitlines()
                self.assertEqual(len(lines), 1, r.stderr)
                self.assertTrue(lines[0].startswith("spec_from_torch: error: "), lines[0])
                self.assertIn(mentions, lines[0])
        r = self.cli("plain.py:make()")  # a factory, called
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("collate: {dtype: uint8, layout: NCHW}", r.stdout)

    def test_the_docs_hold_the_mapping_table(self):
        doc = os.path.join(ARGS.scripts, os.pardir, "docs", "spec-from-torch.md")
        with open(doc) as f:
            text = f.read()
        self.assertIn(TOOL.mapping_markdown(), text, "docs/spec-from-torch.md: paste spec_from_torch.py --mapping")
        for tv_class in [c for c in dir(T) if c[0].isupper() and c not in ("InterpolationMode", "AutoAugmentPolicy")]:
            self.assertIn(f"`{tv_class}", text, f"{tv_class} is not in the docs' tables")


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--pipebench", required=True)
    p.add_argument("--scripts", required=True)
    ARGS, rest = p.parse_known_args()
    ARGS.pipebench = os.path.abspath(ARGS.pipebench)
    ARGS.scripts = os.path.abspath(ARGS.scripts)
    if HAVE:
        TOOL = load_tool(ARGS.scripts)
    sys.exit(run_tests(rest))

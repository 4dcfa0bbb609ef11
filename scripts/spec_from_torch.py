#!/usr/bin/python3
"""Your torchvision transform as a pipebench pipeline spec (issue 28, item 5).

    /usr/bin/python3 scripts/spec_from_torch.py my_transforms:train_transform > train.yaml
    /usr/bin/python3 scripts/spec_from_torch.py path/to/file.py:train_transform
    /usr/bin/python3 scripts/spec_from_torch.py path/to/file.py      # the one transform it defines
    pipebench --pipeline=train.yaml --data=DIR

TARGET is MODULE:ATTRIBUTE (the module imported as Python would from the current folder or
PYTHONPATH), FILE.py:ATTRIBUTE, or FILE.py alone when the file defines one transform (one
Compose, or exactly one transform object). ATTRIBUTE may be dotted (presets.train) and may
end with "()" to call it with no arguments (a factory function). An object that is no
transform itself but holds one in `.transforms` (torchvision's references'
ClassificationPresetTrain) is read through it.

The spec (transforms/README.md's grammar) goes to stdout, or --out FILE; --one-line prints
the one-line form that `pipebench --pipeline='...'` takes inline. Every parameter is
written out, in pipebench's names and units (docs/spec-from-torch.md has the mapping).

Batch transforms: --batch TARGET names the transform applied to collated batches (a
RandomChoice of the references' RandomMixup / RandomCutmix, torchvision v2's MixUp /
CutMix, timm's Mixup); --label-smoothing X adds the loss's label smoothing as pipebench's
label_smoothing batch operator.

Exit codes: 0 everything mapped; 3 something was left out: each such transform is one line
on stderr naming it, why, and the nearest pipebench operator (or "no pipebench operator"),
and the spec of the rest is still printed; 2 bad input (module or file not importable,
attribute missing, not a transform), one line on stderr. --mapping prints the mapping
table (markdown) and exits 0.
"""
import sys

sys.dont_write_bytecode = True  # importing the user's module leaves no __pycache__ behind

import argparse  # noqa: E402
import contextlib  # noqa: E402
import difflib  # noqa: E402
import enum  # noqa: E402
import importlib  # noqa: E402
import importlib.util  # noqa: E402
import math  # noqa: E402
import numbers  # noqa: E402
import os  # noqa: E402
import re  # noqa: E402
import warnings  # noqa: E402

PROG = "spec_from_torch"
EXIT_OK, EXIT_BAD_INPUT, EXIT_LEFT_OUT = 0, 2, 3

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)

# pipebench's operators (pipebench --list-ops), for "nearest" by name.
PIPEBENCH_OPS = [
    "auto_augment", "center_crop", "color_jitter", "convert_color_yuv", "cutmix", "decode",
    "gaussian_blur", "horizontal_flip", "label_smoothing", "mixup", "mixup_cutmix", "normalize",
    "rand_augment", "random_adjust_sharpness", "random_affine", "random_autocontrast",
    "random_crop", "random_equalize", "random_erasing", "random_grayscale", "random_invert",
    "random_mask", "random_posterize", "random_resized_crop", "random_rotation",
    "random_solarize", "resize", "scale", "to_dtype", "trivial_augment_wide", "vertical_flip",
]
RESIZE_INTERPOLATIONS = ("nearest", "bilinear", "bicubic")  # pipebench also has area (OpenCV's)
WARP_INTERPOLATIONS = ("nearest", "bilinear")
# Operators whose `p` is "apply with probability p" (RandomApply([t], q) folds into p * q).
P_OPERATORS = {"horizontal_flip", "vertical_flip", "random_grayscale", "random_autocontrast",
               "random_equalize", "random_invert", "random_posterize", "random_solarize",
               "random_adjust_sharpness", "random_erasing", "mixup", "cutmix"}

# The mapping table (--mapping, docs/spec-from-torch.md): torchvision class, pipebench
# operator, parameters and notes. Classes from torchvision.transforms (0.14) unless marked.
MAPPING = [
    ("Compose, torch.nn.Sequential", "the transforms list", "nested ones are flattened; a list or tuple of transforms reads as a Compose"),
    ("RandomResizedCrop", "random_resized_crop", "size (square only: 224 or (224, 224)), scale, ratio, interpolation (nearest, bilinear, bicubic); antialias is not read: pipebench averages when shrinking, as PIL does"),
    ("Resize", "resize", "size: an int or [s] resizes the shorter side, (h, w) gives [h, w]; interpolation (nearest, bilinear, bicubic); max_size set: left out"),
    ("CenterCrop", "center_crop", "size (square only)"),
    ("RandomCrop", "random_crop", "size (square only); padding: an int, or the same on every side; pad_if_needed; fill: one integer 0-255; padding_mode constant only"),
    ("RandomHorizontalFlip", "horizontal_flip", "p"),
    ("RandomVerticalFlip", "vertical_flip", "p"),
    ("ColorJitter", "color_jitter", "the [min, max] factor ranges torchvision stores: brightness=0.4 is [0.6, 1.4], hue=0.1 is [-0.1, 0.1]; an adjustment that is off is 0"),
    ("RandomGrayscale", "random_grayscale", "p"),
    ("Grayscale", "random_grayscale", "p 1.0; num_output_channels=1: left out (pipebench keeps 3 channels)"),
    ("GaussianBlur", "gaussian_blur", "kernel_size (square only), sigma as [min, max]"),
    ("RandomRotation", "random_rotation", "degrees as [min, max], interpolation (nearest, bilinear), fill; expand=True or a center: left out"),
    ("RandomAffine", "random_affine", "degrees, translate, scale, shear (2 or 4 values), interpolation (nearest, bilinear), fill; a center: left out"),
    ("RandomErasing", "random_erasing", "p, scale, ratio, value (a number, one per channel, or random); on the float tensor: after Normalize, or after ToTensor (to_dtype {scale: true} first)"),
    ("RandAugment", "rand_augment", "num_ops, magnitude, num_magnitude_bins, interpolation (nearest, bilinear), fill (None: none)"),
    ("TrivialAugmentWide", "trivial_augment_wide", "num_magnitude_bins, interpolation (nearest, bilinear), fill"),
    ("AutoAugment", "auto_augment", "policy (imagenet, cifar10, svhn), interpolation (nearest, bilinear), fill"),
    ("RandomAutocontrast", "random_autocontrast", "p"),
    ("RandomEqualize", "random_equalize", "p"),
    ("RandomInvert", "random_invert", "p"),
    ("RandomPosterize", "random_posterize", "bits, p"),
    ("RandomSolarize", "random_solarize", "threshold in pixel levels (x 255 when the sample is ToTensor's [0, 1] floats), p"),
    ("RandomAdjustSharpness", "random_adjust_sharpness", "sharpness_factor, p"),
    ("ToTensor", "normalize (fused) or to_dtype", "pipebench's normalize is ToTensor + Normalize, so ToTensor ... Normalize is one normalize; before another tensor operator or at the end: to_dtype {dtype: float32, scale: true}; image transforms between ToTensor and Normalize stay in order"),
    ("PILToTensor", "collate {dtype: uint8, layout: NCHW}", "a transform that ends with uint8 images (PILToTensor, or none of ToTensor / ConvertImageDtype) gives uint8 NCHW batches; PILToTensor then ConvertImageDtype(torch.float): as ToTensor"),
    ("ConvertImageDtype", "(as ToTensor)", "torch.float32 on a uint8 image (after PILToTensor, or decode_jpeg's tensors) scales to [0, 1] as ToTensor does; torch.uint8 on ToTensor's floats: a uint8 image again; other dtypes: left out (pipebench's tensors are float32)"),
    ("Normalize", "normalize", "mean, std (3 values, or 1 for every channel; ImageNet's are written imagenet); on a float tensor, as torchvision requires (after ToTensor or ConvertImageDtype)"),
    ("ToPILImage", "(nothing)", "back to a uint8 image before the float tensor (pipebench's images are uint8); after Normalize: left out"),
    ("RandomApply", "its transform, p multiplied", "one transform with a probability p (flips, random_grayscale, the random_* photometric ones, random_erasing, mixup, cutmix): p x its p; p=1: the transforms; p=0: nothing; otherwise left out"),
    ("RandomChoice", "mixup_cutmix (batch)", "of one mixup and one cutmix (references' RandomMixup / RandomCutmix, v2 MixUp / CutMix): prob and switch_prob from the weights and each p; otherwise left out"),
    ("RandomMixup (references/classification)", "mixup (batch)", "alpha, p"),
    ("RandomCutmix (references/classification)", "cutmix (batch)", "alpha, p"),
    ("v2.MixUp, v2.CutMix (0.16+)", "mixup, cutmix (batch)", "alpha, p 1.0"),
    ("v2.ToDtype (0.16+)", "(as ConvertImageDtype)", "float32 with scale=True: as ToTensor; scale=False: to_dtype {scale: false}"),
    ("v2.ToImage, v2.ToPureTensor, v2.Identity (0.16+)", "(nothing)", "the sample stays what it is (ToImage: a uint8 image)"),
    ("timm.data.Mixup", "mixup_cutmix + label_smoothing (batch)", "mixup_alpha, cutmix_alpha, mix_prob as prob, switch_prob, label_smoothing; mode batch, no cutmix_minmax, correct_lam only"),
    ("--label-smoothing X", "label_smoothing (batch)", "the loss's label smoothing (CrossEntropyLoss(label_smoothing=X))"),
]

# Classes pipebench has no operator for: (nearest pipebench operator or None, why).
NO_OPERATOR = {
    "AugMix": ("rand_augment", "pipebench has no AugMix (it blends several augmentation chains of RandAugment-like operations)"),
    "RandomPerspective": ("random_affine", "pipebench has no perspective warp"),
    "ElasticTransform": (None, "pipebench has no elastic displacement field"),
    "Pad": ("random_crop", "pipebench pads only inside random_crop (padding, pad_if_needed)"),
    "FiveCrop": ("center_crop", "it returns 5 crops per image; pipebench's samples are one image"),
    "TenCrop": ("center_crop", "it returns 10 crops per image; pipebench's samples are one image"),
    "LinearTransformation": (None, "pipebench has no whitening by a matrix"),
    "Lambda": (None, "arbitrary Python code"),
    "RandomOrder": (None, "pipebench applies its operators in a fixed order"),
    "RandomPhotometricDistort": ("color_jitter", "pipebench has no RandomPhotometricDistort"),
    "RandomChannelPermutation": (None, "pipebench has no channel permutation"),
    "RandomZoomOut": (None, "pipebench has no zoom-out"),
    "RandomIoUCrop": ("random_resized_crop", "pipebench has no IoU crop (boxes)"),
    "ScaleJitter": ("resize", "pipebench has no scale jitter"),
    "RandomShortestSize": ("resize", "pipebench resizes to one size"),
    "RandomResize": ("resize", "pipebench resizes to one size"),
    "GaussianNoise": (None, "pipebench has no noise operator"),
    "JPEG": (None, "pipebench has no JPEG re-encoding"),
    "SanitizeBoundingBoxes": (None, "pipebench has no bounding boxes"),
    "ClampBoundingBoxes": (None, "pipebench has no bounding boxes"),
    "ConvertBoundingBoxFormat": (None, "pipebench has no bounding boxes"),
}


class BadInput(Exception):
    """Exit 2 with this one line."""


class Op:
    """One pipebench operator: name, parameters in order, the source it came from."""

    def __init__(self, name, params, source):
        self.name, self.params, self.source = name, list(params), source

    def param(self, key):
        return dict(self.params)[key]

    def set_param(self, key, value):
        self.params = [(k, value if k == key else v) for k, v in self.params]


class LeftOut(Exception):
    """A transform not mapped: why, and the nearest pipebench operator (None: none)."""

    def __init__(self, why, nearest=None):
        super().__init__(why)
        self.why, self.nearest = why, nearest


# --- values ------------------------------------------------------------------------------

def class_name(t):
    return type(t).__name__


def origin(t):
    """'torchvision', 'timm' or '' (anything else), from the class's module."""
    mod = type(t).__module__ or ""
    if mod == "torchvision" or mod.startswith("torchvision."):
        return "torchvision"
    if mod == "timm" or mod.startswith("timm."):
        return "timm"
    return ""


def short(t, limit=90):
    """A transform's repr on one line, without memory addresses."""
    try:
        text = repr(t)
    except Exception:  # a broken __repr__ of user code
        text = f"<{class_name(t)}>"
    if text.startswith("<"):  # object's default repr, a function: its name
        fn = getattr(t, "__qualname__", None)
        text = f"function {fn}" if fn and not isinstance(t, type) and callable(t) and class_name(t) == "function" \
            else f"{class_name(t)} ({type(t).__module__}.{type(t).__qualname__})"
    text = re.sub(r" at 0x[0-9a-fA-F]+", "", text)
    text = re.sub(r"\s+", " ", text).replace("( ", "(").replace(" )", ")")
    return text if len(text) <= limit else text[:limit - 3] + "..."


def tolist(v):
    """A number, sequence or tensor as a list of Python floats."""
    if hasattr(v, "tolist") and not isinstance(v, (list, tuple)):
        v = v.tolist()
    if isinstance(v, numbers.Number) and not isinstance(v, bool):
        return [float(v)]
    return [float(x) for x in v]


def number(v):
    """A number as given (ints stay ints, floats floats)."""
    if hasattr(v, "item") and not isinstance(v, numbers.Number):
        v = v.item()  # a one-element tensor
    if isinstance(v, bool) or not isinstance(v, numbers.Number):
        raise LeftOut(f"expected a number, got {v!r}")
    return int(v) if isinstance(v, numbers.Integral) else float(v)


def integer(v, what):
    if isinstance(v, numbers.Number) and not isinstance(v, bool) and float(v) == int(v):
        return int(v)
    raise LeftOut(f"{what} {v!r} is not an integer, which pipebench's {what} is")


def pair(v):
    return [number(x) for x in v]


def square(size, what, op, why="makes size x size outputs"):
    """torchvision's size (int, [s], (h, w)) as one side, or LeftOut when h != w."""
    if isinstance(size, numbers.Number):
        return integer(size, what)
    s = list(size)
    if len(s) == 1 or (len(s) == 2 and s[0] == s[1]):
        return integer(s[0], what)
    raise LeftOut(f"{what} {tuple(s)} is not square; pipebench's {op} {why}", op)


def interpolation(v, allowed, op):
    if isinstance(v, enum.Enum):
        v = v.value
    if isinstance(v, int) and not isinstance(v, bool):  # PIL's constants (deprecated in 0.13)
        v = {0: "nearest", 1: "lanczos", 2: "bilinear", 3: "bicubic", 4: "box", 5: "hamming"}.get(v, v)
    name = str(v).lower()
    if name not in allowed:
        raise LeftOut(f"interpolation {name}: pipebench's {op} takes {', '.join(allowed)}", op)
    return name


def unwrap_fill(v):
    """v2 takes fill per input type ({tv_tensors.Image: 127, "others": 0}): the image's."""
    if isinstance(v, dict):
        for k, x in v.items():
            if getattr(k, "__name__", str(k)) in ("Image", "Tensor", "others"):
                return x
        return next(iter(v.values())) if v else None
    return v


def warp_fill(v, op):
    """fill of the warps: none, one number or three."""
    v = unwrap_fill(v)
    if v is None:
        return "none"
    values = tolist(v)
    if len(values) == 1:
        return number(v if isinstance(v, numbers.Number) else list(v)[0])
    if len(values) == 3:
        return values
    raise LeftOut(f"fill {v!r}: pipebench's {op} takes one value or three", op)


def dtype_name(d):
    """'float32', 'uint8', ... of a torch dtype (no torch import needed)."""
    if isinstance(d, dict):  # v2 ToDtype's per-type dtypes: the image's
        for k, x in d.items():
            if getattr(k, "__name__", str(k)) in ("Image", "Tensor", "others"):
                return dtype_name(x)
        return dtype_name(next(iter(d.values()))) if d else "none"
    return str(d).replace("torch.", "")


# --- the conversion ----------------------------------------------------------------------

class Converter:
    """A torchvision transform list into pipebench operators, in order.

    What the sample is in torchvision after each step (`kind`): uint8 (an image: a PIL image
    from ImageFolder's loader, or a uint8 tensor from decode_jpeg or PILToTensor; pipebench's
    decode gives the same uint8 image), float (float in [0, 1]: ToTensor, ConvertImageDtype),
    float255 (float in [0, 255]: v2 ToDtype without scale). pipebench keeps the uint8 image
    until its first tensor operator (normalize, to_dtype, random_erasing) writes the float
    tensor (`tensor`); image operators cannot follow that."""

    def __init__(self):
        self.ops, self.batch, self.left_out = [], [], []
        self.kind, self.tensor = "uint8", False
        self.tensor_source = ""

    # state save / restore, for RandomApply's trial conversion
    def snapshot(self):
        return (list(self.ops), list(self.batch), list(self.left_out), self.kind, self.tensor,
                self.tensor_source)

    def restore(self, s):
        self.ops, self.batch, self.left_out, self.kind, self.tensor, self.tensor_source = (
            list(s[0]), list(s[1]), list(s[2]), s[3], s[4], s[5])

    def leave_out(self, path, t, why, nearest):
        """Recorded with its place among the operators, for the spec's comment."""
        self.left_out.append((len(self.ops), path, short(t), why, nearest))

    def run(self, transforms, path=""):
        for i, t in enumerate(transforms):
            self.one(t, f"{path}[{i}]")

    def one(self, t, path):
        items = sub_transforms(t)
        if items is not None:
            self.run(items, path)
            return
        try:
            self.convert(t, path)
        except LeftOut as e:
            self.leave_out(path, t, e.why, e.nearest)
        except Exception as e:  # noqa: BLE001 - attributes not as expected (another release)
            self.leave_out(path, t, f"its parameters could not be read ({type(e).__name__}: {one_line(e)})",
                           TV_TO_OP.get(class_name(t)))

    # emitting
    def image_op(self, name, params, t, path):
        if self.tensor:
            raise LeftOut(f"it follows the float tensor ({self.tensor_source}), and pipebench's image "
                          "operators come before it: move it before ToTensor / Normalize", name)
        self.ops.append(Op(name, params, f"{path} {class_name(t)}"))

    def tensor_op(self, name, params, t, path):
        self.ops.append(Op(name, params, f"{path} {class_name(t)}"))
        if not self.tensor:
            self.tensor, self.tensor_source = True, f"{class_name(t)} at {path}"

    def need_float_tensor(self, t, path, op):
        """Before a tensor operator that needs floats: the conversion torchvision made."""
        if self.tensor:
            return
        if self.kind == "float":
            self.tensor_op("to_dtype", [("dtype", "float32"), ("scale", True)], t, path)
        elif self.kind == "float255":
            self.tensor_op("to_dtype", [("dtype", "float32"), ("scale", False)], t, path)
        else:
            raise LeftOut("the sample is a uint8 image here (PIL, or a uint8 tensor), and pipebench's "
                          f"{op} works on the float tensor (add ToTensor, or ConvertImageDtype"
                          "(torch.float), before it)", op)

    def batch_op(self, name, params, t, path):
        self.batch.append(Op(name, params, f"{path} {class_name(t)}"))

    def finish(self):
        """The collate step after the last operator: (dtype, comment)."""
        if self.tensor:
            return "float32", None
        if self.kind == "float":
            self.ops.append(Op("to_dtype", [("dtype", "float32"), ("scale", True)], "the end: the float tensor"))
            return "float32", None
        if self.kind == "float255":
            self.ops.append(Op("to_dtype", [("dtype", "float32"), ("scale", False)], "the end: the float tensor"))
            return "float32", None
        return "uint8", ("the transform returns uint8 images: uint8 batches (PIL images need a "
                         "collate_fn for that, as timm's fast_collate)")

    # one transform
    def convert(self, t, path):
        name, org = class_name(t), origin(t)
        if org == "torchvision":
            fn = getattr(self, "tv_" + name, None)
            if fn is not None:
                fn(t, path)
                return
            if name in NO_OPERATOR:
                nearest, why = NO_OPERATOR[name]
                raise LeftOut(why, nearest)
            raise LeftOut(f"torchvision's {name} has no pipebench mapping", nearest_by_name(name))
        if org == "timm" and name == "Mixup":
            self.timm_mixup(t, path)
            return
        if name in ("RandomMixup", "RandomCutmix") and hasattr(t, "alpha") and hasattr(t, "p"):
            op = "mixup" if name == "RandomMixup" else "cutmix"  # references/classification/transforms.py
            self.batch_op(op, [("alpha", number(t.alpha)), ("p", number(t.p))], t, path)
            return
        base = torchvision_base(t)
        if base is not None:
            nearest = TV_TO_OP.get(base) or nearest_by_name(base)
            raise LeftOut(f"a subclass of torchvision's {base} (its own code may differ)", nearest)
        if name in ("function", "builtin_function_or_method", "method", "partial"):
            fn = getattr(t, "__qualname__", getattr(t, "__name__", name))
            raise LeftOut(f"a Python function ({fn}): arbitrary code", None)
        if callable(t) and not isinstance(t, type):
            where = f"{type(t).__module__}.{name}" if org == "" else name
            raise LeftOut(f"{where} is not a torchvision transform", nearest_by_name(name))
        raise LeftOut(f"{name} is not a transform", None)

    # geometry
    def tv_RandomResizedCrop(self, t, path):
        op = "random_resized_crop"
        self.image_op(op, [("size", square(t.size, "size", op)), ("scale", pair(t.scale)),
                           ("ratio", pair(t.ratio)),
                           ("interpolation", interpolation(t.interpolation, RESIZE_INTERPOLATIONS, op))],
                      t, path)

    def tv_Resize(self, t, path):
        op = "resize"
        if getattr(t, "max_size", None) is not None:
            raise LeftOut(f"max_size {t.max_size}: pipebench's resize has no maximum side", op)
        size = t.size
        if size is None:
            raise LeftOut("size None (max_size only): pipebench's resize needs a size", op)
        if isinstance(size, numbers.Number):
            value = integer(size, "size")
        else:
            s = list(size)
            value = integer(s[0], "size") if len(s) == 1 else [integer(x, "size") for x in s]
        self.image_op(op, [("size", value),
                           ("interpolation", interpolation(t.interpolation, RESIZE_INTERPOLATIONS, op))],
                      t, path)

    def tv_CenterCrop(self, t, path):
        self.image_op("center_crop", [("size", square(t.size, "size", "center_crop"))], t, path)

    def tv_RandomCrop(self, t, path):
        op = "random_crop"
        if t.padding_mode != "constant":
            raise LeftOut(f"padding_mode {t.padding_mode}: pipebench's random_crop pads with a constant", op)
        padding = t.padding
        if padding is None:
            pad = 0
        elif isinstance(padding, numbers.Number):
            pad = integer(padding, "padding")
        else:
            sides = list(padding)
            if not sides or any(x != sides[0] for x in sides):
                raise LeftOut(f"padding {padding!r}: pipebench's random_crop pads every side alike", op)
            pad = integer(sides[0], "padding")
        fill = unwrap_fill(t.fill)
        if fill is None:
            fill = 0
        if not isinstance(fill, numbers.Number):
            f = list(fill)
            if not f or any(x != f[0] for x in f):
                raise LeftOut(f"fill {fill!r}: pipebench's random_crop fills with one value", op)
            fill = f[0]
        self.image_op(op, [("size", square(t.size, "size", op)), ("padding", pad),
                           ("pad_if_needed", bool(t.pad_if_needed)), ("fill", integer(fill, "fill"))],
                      t, path)

    def tv_RandomHorizontalFlip(self, t, path):
        self.image_op("horizontal_flip", [("p", number(t.p))], t, path)

    def tv_RandomVerticalFlip(self, t, path):
        self.image_op("vertical_flip", [("p", number(t.p))], t, path)

    def tv_RandomRotation(self, t, path):
        op = "random_rotation"
        if t.expand:
            raise LeftOut("expand=True: pipebench's random_rotation keeps the input's size", op)
        if getattr(t, "center", None) is not None:
            raise LeftOut(f"center {t.center!r}: pipebench rotates about the image's centre", op)
        self.image_op(op, [("degrees", pair(t.degrees)),
                           ("interpolation", interpolation(t.interpolation, WARP_INTERPOLATIONS, op)),
                           ("expand", False), ("fill", warp_fill(t.fill, op))], t, path)

    def tv_RandomAffine(self, t, path):
        op = "random_affine"
        if getattr(t, "center", None) is not None:
            raise LeftOut(f"center {t.center!r}: pipebench warps about the image's centre", op)
        shear = t.shear
        if shear is not None:
            shear = tolist(shear)
            if len(shear) not in (1, 2, 4):
                raise LeftOut(f"shear {t.shear!r}: pipebench takes 1, 2 or 4 values", op)
        self.image_op(op, [("degrees", pair(t.degrees)),
                           ("translate", pair(t.translate) if t.translate is not None else []),
                           ("scale", pair(t.scale) if t.scale is not None else []),
                           ("shear", shear if shear is not None else []),
                           ("interpolation", interpolation(t.interpolation, WARP_INTERPOLATIONS, op)),
                           ("fill", warp_fill(t.fill, op))], t, path)

    # photometric
    def tv_ColorJitter(self, t, path):
        params = []
        for key in ("brightness", "contrast", "saturation", "hue"):
            v = getattr(t, key)
            params.append((key, pair(v) if v is not None else 0))
        self.image_op("color_jitter", params, t, path)

    def tv_RandomGrayscale(self, t, path):
        self.image_op("random_grayscale", [("p", number(t.p))], t, path)

    def tv_Grayscale(self, t, path):
        if t.num_output_channels != 3:
            raise LeftOut(f"num_output_channels={t.num_output_channels}: pipebench's gray images keep "
                          "3 channels", "random_grayscale")
        self.image_op("random_grayscale", [("p", 1.0)], t, path)

    def tv_GaussianBlur(self, t, path):
        op = "gaussian_blur"
        sigma = tolist(t.sigma)
        if len(sigma) == 1:
            sigma = sigma * 2
        self.image_op(op, [("kernel_size", square(t.kernel_size, "kernel_size", op, "has square kernels")), ("sigma", sigma)],
                      t, path)

    def tv_RandomAutocontrast(self, t, path):
        self.image_op("random_autocontrast", [("p", number(t.p))], t, path)

    def tv_RandomEqualize(self, t, path):
        self.image_op("random_equalize", [("p", number(t.p))], t, path)

    def tv_RandomInvert(self, t, path):
        self.image_op("random_invert", [("p", number(t.p))], t, path)

    def tv_RandomPosterize(self, t, path):
        self.image_op("random_posterize", [("bits", integer(t.bits, "bits")), ("p", number(t.p))], t, path)

    def tv_RandomSolarize(self, t, path):
        threshold = number(t.threshold)
        if self.kind == "float" and not self.tensor:  # ToTensor's [0, 1] in pipebench's 0..255 levels
            threshold = float(threshold) * 255.0
        self.image_op("random_solarize", [("threshold", threshold), ("p", number(t.p))], t, path)

    def tv_RandomAdjustSharpness(self, t, path):
        self.image_op("random_adjust_sharpness",
                      [("sharpness_factor", float(t.sharpness_factor)), ("p", number(t.p))], t, path)

    # policies
    def policy_fill(self, t, op):
        fill = unwrap_fill(t.fill)
        return "none" if fill is None else warp_fill(fill, op)

    def tv_RandAugment(self, t, path):
        op = "rand_augment"
        self.image_op(op, [("num_ops", integer(t.num_ops, "num_ops")),
                           ("magnitude", integer(t.magnitude, "magnitude")),
                           ("num_magnitude_bins", integer(t.num_magnitude_bins, "num_magnitude_bins")),
                           ("interpolation", interpolation(t.interpolation, WARP_INTERPOLATIONS, op)),
                           ("fill", self.policy_fill(t, op))], t, path)

    def tv_TrivialAugmentWide(self, t, path):
        op = "trivial_augment_wide"
        self.image_op(op, [("num_magnitude_bins", integer(t.num_magnitude_bins, "num_magnitude_bins")),
                           ("interpolation", interpolation(t.interpolation, WARP_INTERPOLATIONS, op)),
                           ("fill", self.policy_fill(t, op))], t, path)

    def tv_AutoAugment(self, t, path):
        op = "auto_augment"
        policy = t.policy.value if isinstance(t.policy, enum.Enum) else str(t.policy)
        if policy not in ("imagenet", "cifar10", "svhn"):
            raise LeftOut(f"policy {policy}: pipebench has imagenet, cifar10, svhn", op)
        self.image_op(op, [("policy", policy),
                           ("interpolation", interpolation(t.interpolation, WARP_INTERPOLATIONS, op)),
                           ("fill", self.policy_fill(t, op))], t, path)

    # conversions and tensor operators
    def tv_ToTensor(self, t, path):
        if self.tensor or self.kind != "uint8":
            raise LeftOut("ToTensor takes a PIL image or ndarray, and the sample is a float tensor "
                          "here", None)
        self.kind = "float"

    def tv_PILToTensor(self, t, path):
        if self.tensor or self.kind != "uint8":
            raise LeftOut("PILToTensor takes a PIL image, and the sample is a float tensor here", None)

    def tv_ToImage(self, t, path):  # v2: a PIL image becomes a uint8 tensor, tensors stay
        return

    tv_ToImageTensor = tv_ToImage  # v2 of 0.15

    def tv_ToPureTensor(self, t, path):  # v2: unwraps tv_tensors, nothing to do
        return

    def tv_Identity(self, t, path):
        return

    def tv_ToPILImage(self, t, path):
        if self.tensor:
            raise LeftOut(f"back to a PIL image after the float tensor ({self.tensor_source}): "
                          "pipebench's tensors stay tensors", None)
        self.kind = "uint8"

    tv_ToImagePIL = tv_ToPILImage  # v2 of 0.15

    def to_float(self, t, scale):
        """ConvertImageDtype / ToDtype to float32 with (scale) or without scaling."""
        if self.tensor or self.kind in ("float", "float255"):
            return  # already float
        self.kind = "float" if scale else "float255"

    def to_uint8(self, t):
        if self.tensor:
            raise LeftOut(f"uint8 after the float tensor ({self.tensor_source}): pipebench's tensors "
                          "are float32 (for uint8 batches end with PILToTensor)", "to_dtype")
        if self.kind in ("float", "float255"):
            self.kind = "uint8"

    def tv_ConvertImageDtype(self, t, path):
        d = dtype_name(t.dtype)
        if d in ("float32", "float"):
            self.to_float(t, True)
        elif d == "uint8":
            self.to_uint8(t)
        else:
            raise LeftOut(f"dtype {d}: pipebench's tensors are float32 (and uint8 batches)", "to_dtype")

    def tv_ToDtype(self, t, path):  # v2 (0.16+): ToDtype(dtype, scale=False)
        d = dtype_name(t.dtype)
        if d in ("float32", "float"):
            self.to_float(t, bool(getattr(t, "scale", False)))
        elif d == "uint8":
            self.to_uint8(t)
        elif d == "none":
            return
        else:
            raise LeftOut(f"dtype {d}: pipebench's tensors are float32 (and uint8 batches)", "to_dtype")

    def tv_Normalize(self, t, path):
        op = "normalize"
        mean, std = tolist(t.mean), tolist(t.std)
        if len(mean) == 1:
            mean = mean * 3
        if len(std) == 1:
            std = std * 3
        if len(mean) != 3 or len(std) != 3:
            raise LeftOut(f"{len(mean)} means / {len(std)} stds: pipebench normalizes 3 channels", op)
        if not self.tensor:
            if self.kind == "uint8":
                raise LeftOut("torchvision's Normalize takes a float tensor, and the sample is a uint8 "
                              "image here (PIL, or a uint8 tensor: add ToTensor, or "
                              "ConvertImageDtype(torch.float), before it)", op)
            if self.kind == "float255":  # (x - mean) / std on 0..255 values
                self.tensor_op("to_dtype", [("dtype", "float32"), ("scale", False)], t, path)
        params = [("mean", "imagenet" if close(mean, IMAGENET_MEAN) else mean),
                  ("std", "imagenet" if close(std, IMAGENET_STD) else std)]
        self.tensor_op(op, params, t, path)

    def tv_RandomErasing(self, t, path):
        op = "random_erasing"
        value = t.value
        if isinstance(value, str):
            if value != "random":
                raise LeftOut(f"value {value!r}", op)
        elif value is None:
            value = "random"  # v2 stores "random" as None
        else:
            values = tolist(value)
            value = number(value) if isinstance(value, numbers.Number) else (
                values[0] if len(values) == 1 else values)
        self.need_float_tensor(t, path, op)
        self.tensor_op(op, [("p", number(t.p)), ("scale", pair(t.scale)), ("ratio", pair(t.ratio)),
                            ("value", value)], t, path)

    # containers
    def tv_RandomApply(self, t, path):
        p = float(t.p)
        tr = t.transforms
        inner = list(tr) if isinstance(tr, (list, tuple)) or class_name(tr) in ("ModuleList", "Sequential") else [tr]
        if p >= 1.0:
            self.run(inner, path + ".transforms")
            return
        if p <= 0.0:
            return  # never applied
        before = self.snapshot()
        self.run(inner, path + ".transforms")
        made = self.ops[len(before[0]):] + self.batch[len(before[1]):]
        # the conversion a tensor operator needs first (to_dtype after ToTensor) runs always
        core = [o for o in made if o.name != "to_dtype"]
        if (len(self.left_out) == len(before[2]) and self.kind == before[3] and len(core) == 1
                and core[0].name in P_OPERATORS):
            core[0].set_param("p", core[0].param("p") * p)
            core[0].source = f"{path} RandomApply(p={p:g}) of {core[0].source.split(' ', 1)[1]}"
            return
        names = [o.name for o in core]
        self.restore(before)
        if names:
            why = (f"pipebench's {', '.join(names)} always run{'s' if len(names) == 1 else ''}: "
                   "no probability to put p into")
        else:
            why = "its transforms have no pipebench operator"
        raise LeftOut(f"applied with probability {p:g}; {why}", ", ".join(names) if names else None)

    def tv_RandomChoice(self, t, path):
        self.random_choice(t, path)

    def random_choice(self, t, path):
        inner = list(t.transforms)
        weights = list(t.p) if getattr(t, "p", None) is not None else [1.0] * len(inner)
        total = float(sum(weights))
        mix = {}
        for w, x in zip(weights, inner):
            kind = mix_kind(x)
            if kind is None or kind[0] in mix:
                mix = None
                break
            mix[kind[0]] = (w / total, kind[1], kind[2])
        if mix and set(mix) == {"mixup", "cutmix"}:
            wm, am, pm = mix["mixup"]
            wc, ac, pc = mix["cutmix"]
            prob = wm * pm + wc * pc
            switch = wc * pc / prob if prob > 0 else 0.5
            self.batch_op("mixup_cutmix", [("mixup_alpha", am), ("cutmix_alpha", ac), ("prob", prob),
                                           ("switch_prob", switch)], t, path)
            return
        if mix and len(mix) == 1 and len(inner) == 1:
            (name, (w, alpha, p)), = mix.items()
            self.batch_op(name, [("alpha", alpha), ("p", p)], t, path)
            return
        names = [TV_TO_OP.get(class_name(x)) or class_name(x) for x in inner]
        raise LeftOut("pipebench has no random choice between operators (only mixup or cutmix: "
                      "mixup_cutmix)", ", ".join(n for n in names if n in PIPEBENCH_OPS) or None)

    def tv_MixUp(self, t, path):  # v2 (0.16+)
        self.batch_op("mixup", [("alpha", float(t.alpha)), ("p", 1.0)], t, path)

    def tv_CutMix(self, t, path):  # v2 (0.16+)
        self.batch_op("cutmix", [("alpha", float(t.alpha)), ("p", 1.0)], t, path)

    def timm_mixup(self, t, path):
        op = "mixup_cutmix"
        if getattr(t, "mode", "batch") != "batch":
            raise LeftOut(f"mode {t.mode!r}: pipebench mixes per batch (timm's mode 'batch')", op)
        if getattr(t, "cutmix_minmax", None) is not None:
            raise LeftOut("cutmix_minmax: pipebench draws the box from Beta(cutmix_alpha)", op)
        if float(t.cutmix_alpha) > 0 and not getattr(t, "correct_lam", True):
            raise LeftOut("correct_lam=False: pipebench's cutmix labels follow the box's area", op)
        if float(t.mixup_alpha) > 0 or float(t.cutmix_alpha) > 0:
            self.batch_op(op, [("mixup_alpha", float(t.mixup_alpha)), ("cutmix_alpha", float(t.cutmix_alpha)),
                               ("prob", float(t.mix_prob)), ("switch_prob", float(t.switch_prob))], t, path)
        if float(getattr(t, "label_smoothing", 0) or 0) > 0:
            self.batch_op("label_smoothing", [("smoothing", float(t.label_smoothing))], t, path)


def close(a, b):
    return len(a) == len(b) and all(abs(x - y) < 1e-9 for x, y in zip(a, b))


def mix_kind(t):
    """('mixup' | 'cutmix', alpha, p) of a batch mixing transform, else None."""
    name = class_name(t)
    if origin(t) == "torchvision" and name in ("MixUp", "CutMix"):
        return ("mixup" if name == "MixUp" else "cutmix", float(t.alpha), 1.0)
    if name in ("RandomMixup", "RandomCutmix") and hasattr(t, "alpha") and hasattr(t, "p"):
        return ("mixup" if name == "RandomMixup" else "cutmix", float(t.alpha), float(t.p))
    return None


# torchvision class -> pipebench operator, for "nearest" (subclasses, RandomChoice).
TV_TO_OP = {
    "RandomResizedCrop": "random_resized_crop", "Resize": "resize", "CenterCrop": "center_crop",
    "RandomCrop": "random_crop", "RandomHorizontalFlip": "horizontal_flip",
    "RandomVerticalFlip": "vertical_flip", "ColorJitter": "color_jitter",
    "RandomGrayscale": "random_grayscale", "Grayscale": "random_grayscale",
    "GaussianBlur": "gaussian_blur", "RandomRotation": "random_rotation",
    "RandomAffine": "random_affine", "RandomErasing": "random_erasing",
    "RandAugment": "rand_augment", "TrivialAugmentWide": "trivial_augment_wide",
    "AutoAugment": "auto_augment", "RandomAutocontrast": "random_autocontrast",
    "RandomEqualize": "random_equalize", "RandomInvert": "random_invert",
    "RandomPosterize": "random_posterize", "RandomSolarize": "random_solarize",
    "RandomAdjustSharpness": "random_adjust_sharpness", "Normalize": "normalize",
    "ToTensor": "to_dtype", "ConvertImageDtype": "to_dtype", "ToDtype": "to_dtype",
    "MixUp": "mixup", "CutMix": "cutmix", "RandomMixup": "mixup", "RandomCutmix": "cutmix",
}


def snake(name):
    return re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name).lower()


def nearest_by_name(name):
    """The pipebench operator whose name is nearest to a class name, or None."""
    s = snake(name)
    candidates = {op: op for op in PIPEBENCH_OPS}
    for cls, op in TV_TO_OP.items():
        candidates[snake(cls)] = op
    hit = difflib.get_close_matches(s, list(candidates), n=1, cutoff=0.75)
    return candidates[hit[0]] if hit else None


def torchvision_base(t):
    """The torchvision transform class a user's class derives from, or None."""
    for cls in type(t).__mro__[1:]:
        mod = cls.__module__ or ""
        if mod.startswith("torchvision.transforms") or mod.startswith("torchvision.prototype"):
            if cls.__name__ in TV_TO_OP:
                return cls.__name__
    return None


def sub_transforms(t):
    """The list inside a Compose / nn.Sequential / list, else None."""
    if isinstance(t, (list, tuple)):
        return list(t)
    name = class_name(t)
    if name == "Compose" and origin(t) == "torchvision":
        return list(t.transforms)
    if name == "Sequential" and (type(t).__module__ or "").startswith("torch.nn"):
        return list(t)
    return None


def is_transform(obj):
    if isinstance(obj, (list, tuple)):
        return len(obj) > 0 and all(callable(x) for x in obj)
    if isinstance(obj, type) or not callable(obj):
        return False
    if origin(obj) in ("torchvision", "timm"):
        return True
    if any(c.__module__ == "torch.nn.modules.module" and c.__name__ == "Module" for c in type(obj).__mro__):
        return True
    return not (type(obj).__name__ in ("function", "builtin_function_or_method", "method"))


# --- the target --------------------------------------------------------------------------

def split_target(target):
    """(module or file, attribute or None)."""
    head, sep, tail = target.rpartition(":")
    if sep and re.fullmatch(r"[A-Za-z_][\w.]*(\(\))?", tail):
        return head, tail
    return target, None


def import_target(where):
    """The module of MODULE or FILE.py."""
    looks_like_file = where.endswith(".py") or os.sep in where or (os.altsep and os.altsep in where)
    if looks_like_file:
        path = os.path.abspath(where)
        if not os.path.isfile(path):
            raise BadInput(f"{where}: no such file")
        name = "_spec_from_torch_" + re.sub(r"\W", "_", os.path.splitext(os.path.basename(path))[0])
        folder = os.path.dirname(path)
        if folder not in sys.path:
            sys.path.insert(0, folder)  # its sibling modules import as when it runs
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise BadInput(f"{where}: not a Python file")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        run_user_code(lambda: spec.loader.exec_module(module), f"{where}: cannot run it")
        return module
    if not re.fullmatch(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*", where):
        raise BadInput(f"{where}: not a module name (MODULE:ATTRIBUTE) or a .py file")
    if "" not in sys.path and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return run_user_code(lambda: importlib.import_module(where), None)
    except ModuleNotFoundError as e:
        raise BadInput(f"{where}: cannot import it: {e}") from None
    except BadInput:
        raise
    except Exception as e:  # noqa: BLE001 - any error of the user's module
        raise BadInput(f"{where}: cannot import it: {type(e).__name__}: {one_line(e)}") from None


def run_user_code(fn, context):
    """fn() with the user's prints sent to stderr (stdout is the spec) and its warnings
    (torchvision's deprecations) silenced: stderr holds one line per transform left out."""
    try:
        with contextlib.redirect_stdout(sys.stderr), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    except SystemExit as e:
        raise BadInput(f"{context or 'the module'}: it called sys.exit({e.code})") from None
    except Exception as e:  # noqa: BLE001
        if context is None:
            raise
        raise BadInput(f"{context}: {type(e).__name__}: {one_line(e)}") from None


def one_line(e):
    return re.sub(r"\s+", " ", str(e)).strip()[:200]


def resolve(target):
    """(object, name) of TARGET."""
    where, attr = split_target(target)
    module = import_target(where)
    if attr is None:
        found = [(k, v) for k, v in vars(module).items()
                 if not k.startswith("_") and not isinstance(v, type) and type(v).__name__ != "module"
                 and origin(v) == "torchvision" and is_transform(v)]
        composes = [(k, v) for k, v in found if sub_transforms(v) is not None]
        pick = composes if composes else found
        if len(pick) != 1:
            names = ", ".join(k for k, _ in pick) or "none"
            raise BadInput(f"{where}: {len(pick)} torchvision transforms at module level ({names}); "
                           f"name one: {where}:ATTRIBUTE")
        return pick[0][1], pick[0][0]
    call = attr.endswith("()")
    parts = (attr[:-2] if call else attr).split(".")
    obj = module
    for i, part in enumerate(parts):
        if not hasattr(obj, part):
            have = sorted(k for k in dir(obj) if not k.startswith("_"))
            near = difflib.get_close_matches(part, have, n=1)
            hint = f"; did you mean {near[0]}?" if near else ""
            raise BadInput(f"{where}: no attribute {'.'.join(parts[:i + 1])}{hint}")
        obj = getattr(obj, part)
    if call:
        if not callable(obj):
            raise BadInput(f"{target}: {'.'.join(parts)} is a {type(obj).__name__}, not callable")
        obj = run_user_code(obj, f"{target}: calling it failed")
    name = parts[-1]
    if (origin(obj) != "torchvision" and sub_transforms(obj) is None and not isinstance(obj, type)
            and is_transform(getattr(obj, "transforms", None))):
        obj = obj.transforms  # references' ClassificationPresetTrain: .transforms is the Compose
    if isinstance(obj, type):
        raise BadInput(f"{target}: is the class {obj.__name__}, not a transform object "
                       f"(an instance; MODULE:ATTRIBUTE() calls it with no arguments)")
    if type(obj).__name__ in ("function", "builtin_function_or_method", "method") and not call:
        raise BadInput(f"{target}: is a function, not a transform (a factory? write {target}())")
    if not is_transform(obj):
        raise BadInput(f"{target}: not a torchvision transform (a {type(obj).__name__}: {short(obj, 40)})")
    if sub_transforms(obj) == []:
        raise BadInput(f"{target}: is an empty {type(obj).__name__}: no transform to map")
    return obj, name


# --- output ------------------------------------------------------------------------------

def fmt(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return ".nan"
        if math.isinf(v):
            return ".inf" if v > 0 else "-.inf"
        return repr(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(fmt(x) for x in v) + "]"
    return str(v)


def op_text(op):
    return "{" + op.name + ": {" + ", ".join(f"{k}: {fmt(v)}" for k, v in op.params) + "}}"


def op_item(op):
    return op.name + ": {" + ", ".join(f"{k}: {fmt(v)}" for k, v in op.params) + "}"


def spec_name(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "torch"


def convert(obj, batch_obj=None, label_smoothing=0.0):
    """The Converter after the transform (and the batch transform) were mapped."""
    c = Converter()
    items = sub_transforms(obj)
    c.run(items if items is not None else [obj])
    if batch_obj is not None:
        b = Converter()
        items = sub_transforms(batch_obj)
        b.run(items if items is not None else [batch_obj], path="batch")
        end = len(c.ops)
        c.batch += b.batch
        c.left_out += [(end,) + e[1:] for e in b.left_out]
        c.left_out += [(end, o.source.split(" ")[0], o.source.split(" ", 1)[1],
                        "a per-sample transform given as the batch transform (--batch)", o.name)
                       for o in b.ops]
    if label_smoothing > 0:
        c.batch.append(Op("label_smoothing", [("smoothing", float(label_smoothing))], "--label-smoothing"))
    return c


def render(c, name, decode, one_line, header):
    collate, note = c.finish()
    if one_line:
        parts = [f"name: {name}", f"decode: {{mode: {decode}}}",
                 "transforms: [" + ", ".join(op_text(o) for o in c.ops) + "]",
                 f"collate: {{dtype: {collate}, layout: NCHW}}"]
        if c.batch:
            parts.append("batch: [" + ", ".join(op_text(o) for o in c.batch) + "]")
        return "{" + ", ".join(parts) + "}\n"
    lines = [f"# {h}" for h in header]
    lines += [f"name: {name}",
              f"decode: {{mode: {decode}}}" + ("   # torchvision's loader decodes whole images (PIL)"
                                                 if decode == "full" else "")]
    lines.append("transforms:" if c.ops else "transforms: []")
    for i in range(len(c.ops) + 1):
        lines += [f"  # left out: {path} {what}" for pos, path, what, _, _ in c.left_out if pos == i]
        if i < len(c.ops):
            lines.append(f"  - {op_item(c.ops[i])}   # {c.ops[i].source}")
    lines.append(f"collate: {{dtype: {collate}, layout: NCHW}}" + (f"   # {note}" if note else ""))
    if c.batch:
        lines.append("batch:")
        for o in c.batch:
            lines.append(f"  - {op_item(o)}   # {o.source}")
    return "\n".join(lines) + "\n"


def left_out_lines(c):
    out = []
    for _, path, what, why, nearest in c.left_out:
        tail = f"nearest pipebench operator: {nearest}" if nearest else "no pipebench operator"
        out.append(f"{PROG}: left out {path} {what}: {why}; {tail}")
    return out


def mapping_markdown():
    rows = ["| torchvision | pipebench | parameters and notes |", "| --- | --- | --- |"]
    for cls, op, notes in MAPPING:
        rows.append(f"| `{cls}` | {op} | {notes} |")
    rows += ["", "Left out, each with its nearest pipebench operator:", "",
             "| torchvision | nearest pipebench operator | why |", "| --- | --- | --- |"]
    for cls, (near, why) in sorted(NO_OPERATOR.items()):
        rows.append(f"| `{cls}` | {near or 'no pipebench operator'} | {why} |")
    return "\n".join(rows) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(prog="spec_from_torch.py", description=__doc__.split("\n\n")[0])
    ap.add_argument("target", nargs="?", help="MODULE:ATTRIBUTE, FILE.py:ATTRIBUTE or FILE.py")
    ap.add_argument("--batch", metavar="TARGET", help="the batch transform (mixup / cutmix), same forms")
    ap.add_argument("--label-smoothing", type=float, default=0.0, metavar="X",
                    help="the loss's label smoothing, as the label_smoothing batch operator")
    ap.add_argument("--name", help="the spec's name (default: the attribute's)")
    ap.add_argument("--decode", default="full", choices=["full", "scaled", "roi", "auto"],
                    help="decode mode (default full, as PIL; auto: ROI decode of the crop's window)")
    ap.add_argument("--one-line", action="store_true", help="the one-line form for --pipeline='...'")
    ap.add_argument("--out", help="write the spec here (default stdout)")
    ap.add_argument("--mapping", action="store_true", help="print the mapping table (markdown) and exit")
    a = ap.parse_args(argv)
    if a.mapping:
        sys.stdout.write(mapping_markdown())
        return EXIT_OK
    try:
        if not a.target:
            raise BadInput("no TARGET: give MODULE:ATTRIBUTE, FILE.py:ATTRIBUTE or FILE.py")
        if not 0.0 <= a.label_smoothing <= 1.0:
            raise BadInput(f"--label-smoothing {a.label_smoothing:g}: must be in [0, 1]")
        obj, name = resolve(a.target)
        batch_obj = resolve(a.batch)[0] if a.batch else None
        c = convert(obj, batch_obj, a.label_smoothing)
        tv = sys.modules.get("torchvision")
        header = [f"pipebench spec of {a.target}, by scripts/spec_from_torch.py"
                  + (f" (torchvision {tv.__version__})" if tv is not None else ""),
                  "run it: pipebench --pipeline=THIS_FILE --data=DIR (docs/spec-from-torch.md)"]
        text = render(c, spec_name(a.name or name), a.decode, a.one_line, header)
        if a.out:
            try:
                with open(a.out, "w") as f:
                    f.write(text)
            except OSError as e:
                raise BadInput(f"--out {a.out}: {e.strerror}") from None
        else:
            sys.stdout.write(text)
            sys.stdout.flush()
    except BadInput as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return EXIT_BAD_INPUT
    lines = left_out_lines(c)
    for line in lines:
        print(line, file=sys.stderr)
    return EXIT_LEFT_OUT if lines else EXIT_OK


if __name__ == "__main__":
    # Python put this script's folder first on sys.path: the user's modules must not resolve
    # to scripts/*.py (plot, export, ...), so it goes; the current folder comes first instead.
    if sys.path and os.path.abspath(sys.path[0]) == os.path.dirname(os.path.abspath(__file__)):
        sys.path.pop(0)
    sys.exit(main())

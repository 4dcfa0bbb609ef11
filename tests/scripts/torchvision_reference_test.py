#!/usr/bin/python3
"""torchvision_reference_test.py - pipebench's deterministic kernels against torchvision 0.14.

Why it exists: the C++ unit tests check each kernel against hand-written loops; this one
checks the claim the headers make, that the pixels are torchvision's. Debian's
python3-torchvision (0.14) is an independent implementation, so every deterministic kernel
with fixed parameters runs on the same uint8 image through both: pipebench through
kernel_tool (tests/kernel_tool.cpp, one kernel on a PPM), torchvision through
torchvision.transforms.functional on the uint8 CHW tensor.

Two inputs: a 97 x 131 (H x W) pattern built here (smooth gradients, texture, noise, sharp
edges, gray and saturated patches; channels kept off 0 and 255 so autocontrast has work)
and a 224 x 224 photo-like JPEG from `pipebench-data synthetic`, decoded by torchvision.io.

Each case states its tolerance: "exact" for integer operators and for float ones computed
in float32 in torchvision's order; otherwise bounds on the mean and max absolute difference
over the whole output, with the reason. Nearest warps are exact except at exact ties (a
source coordinate on a half-pixel boundary, computed here from torchvision's own inverse
matrix), which are left out and counted. Two references are not torchvision's: `area`
resizing (torchvision 0.14 has none for tensors) and pipebench's bilinear shrink, which is
documented as area averaging, are also compared with float64 area averaging computed here.
erase runs on the normalized float32 tensor (ToTensor + Normalize, ImageNet statistics).
One line per case and image; exit 1 if any fails, 77 when torch or torchvision cannot be
imported (install them with `./scripts/setup.sh --reference`).

  torchvision_reference_test.py --kernel-tool PATH [--pipebench-data PATH]
"""

import argparse
import glob
import os
import subprocess
import sys
import tempfile

SKIP = 77

try:
    import numpy as np
    import torch
    import torchvision
    import torchvision.io
    import torchvision.transforms.functional as F
    from torchvision.transforms import InterpolationMode
except Exception as exc:  # ImportError, or a broken install that fails while importing
    print(f"torchvision_reference_test: SKIP: cannot import torch/torchvision/numpy under "
          f"{sys.executable} ({exc}); install them with ./scripts/setup.sh --reference")
    sys.exit(SKIP)

NEAREST, BILINEAR, BICUBIC = InterpolationMode.NEAREST, InterpolationMode.BILINEAR, InterpolationMode.BICUBIC


# --- images -------------------------------------------------------------------------------

def pattern_image(h, w):
    """H x W x 3 uint8: gradients, texture, seeded noise and sharp-edged patches."""
    y, x = np.mgrid[0:h, 0:w].astype(np.float64)
    r = 20 + 210 * x / (w - 1)
    g = 128 + 110 * np.sin(x * 0.37 + y * 0.23) * np.cos(y * 0.11)
    b = 40 + 170 * y / (h - 1)
    img = np.stack([r, g, b], axis=-1)
    noise = np.random.default_rng(7).integers(-25, 26, size=img.shape)
    img[h // 2:, : w // 3] += noise[h // 2:, : w // 3]                   # noisy quadrant
    img[5:25, w - 40:w - 10] = (230, 15, 40)                              # saturated red
    img[h - 30:h - 8, w - 45:w - 20] = (18, 200, 225)                     # saturated cyan
    img[8:30, 10:35] = 128                                                # flat gray (H undefined)
    img[35:45, 10:60] = np.where(((x[35:45, 10:60] // 4 + y[35:45, 10:60] // 4) % 2 == 1)[..., None],
                                 230, 20)                                 # checkerboard
    diag = np.abs(x - y * (w / h)) < 1.5
    img[diag] = (240, 240, 30)                                            # a one-pixel-wide line
    img[60:70, 70:90, 0] = img[60:70, 70:90, 1]                           # ties: max in two channels
    return np.clip(np.rint(img), 12, 243).astype(np.uint8)


def photo_image(pipebench_data, work):
    """224 x 224 x 3 uint8 from pipebench-data synthetic, decoded by torchvision.io."""
    out = os.path.join(work, "photo")
    cmd = [pipebench_data, "synthetic", out, "--count", "1", "--classes", "1",
           "--width", "224", "--height", "224", "--seed", "11", "--subsampling", "4:4:4"]
    p = subprocess.run(cmd, capture_output=True, text=True)
    jpgs = sorted(glob.glob(os.path.join(out, "**", "*.jpg"), recursive=True))
    if p.returncode != 0 or not jpgs:
        raise RuntimeError(f"{' '.join(cmd)} failed (rc {p.returncode}): {p.stderr.strip()}")
    chw = torchvision.io.decode_jpeg(torchvision.io.read_file(jpgs[0]))
    return chw.permute(1, 2, 0).contiguous().numpy()


def write_ppm(path, hwc):
    h, w, _ = hwc.shape
    with open(path, "wb") as f:
        f.write(f"P6\n{w} {h}\n255\n".encode())
        f.write(np.ascontiguousarray(hwc).tobytes())


def read_ppm(path):
    with open(path, "rb") as f:
        data = f.read()
    fields, pos = [], 0
    while len(fields) < 4:  # magic, width, height, maxval (kernel_tool writes no comments)
        while data[pos:pos + 1].isspace():
            pos += 1
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end].decode())
        pos = end
    assert fields[0] == "P6" and fields[3] == "255", fields
    w, h = int(fields[1]), int(fields[2])
    return np.frombuffer(data[pos + 1:pos + 1 + h * w * 3], dtype=np.uint8).reshape(h, w, 3)


def read_f32(path):
    """kernel_tool's float output: "PBF32 C H W\n" then C*H*W little-endian float32."""
    with open(path, "rb") as f:
        magic, c, h, w = f.readline().split()
        assert magic == b"PBF32", magic
        return np.frombuffer(f.read(), dtype="<f4").reshape(int(c), int(h), int(w))


# --- tolerances ---------------------------------------------------------------------------

class Tol:
    """Bounds on the mean and max of |pipebench - torchvision| over the compared values."""

    def __init__(self, mean=0.0, max=0, reason=""):
        self.mean, self.max, self.reason = mean, max, reason

    def text(self):
        return "exact" if self.mean == 0 and self.max == 0 else f"mean<={self.mean:g} max<={self.max:g}"


EXACT = Tol()
ROUND1 = "float32 arithmetic in another order: a value within float rounding of a rounding boundary may land 1 apart"


class Case:
    """One kernel_tool call against one torchvision call on the same uint8 CHW tensor.
    ref(chw) returns what the tool writes (HWC uint8, or CHW float32 for erase); skip(h, w),
    when given, marks pixels left out of the comparison (exact nearest ties)."""

    def __init__(self, name, tool_args, ref, tol, skip=None, reader=None):
        self.name, self.tool_args, self.ref, self.tol, self.skip = name, tool_args, ref, tol, skip
        self.reader = reader or read_ppm


def to_hwc(t):
    return t.permute(1, 2, 0).numpy()


# --- photometric --------------------------------------------------------------------------

def photometric_cases():
    cases = []
    for f in (0.5, 1.7):
        cases.append(Case(f"adjust_brightness {f}", ["adjust_brightness", str(f)],
                          lambda t, f=f: to_hwc(F.adjust_brightness(t, f)), EXACT))
    for f in (0.4, 1.6):
        cases.append(Case(f"adjust_contrast {f}", ["adjust_contrast", str(f)],
                          lambda t, f=f: to_hwc(F.adjust_contrast(t, f)), EXACT))
    for f in (0.0, 2.0):
        cases.append(Case(f"adjust_saturation {f:g}", ["adjust_saturation", str(f)],
                          lambda t, f=f: to_hwc(F.adjust_saturation(t, f)), EXACT))
    for f in (-0.3, 0.1):
        cases.append(Case(f"adjust_hue {f}", ["adjust_hue", str(f)], lambda t, f=f: to_hwc(F.adjust_hue(t, f)),
                          Tol(0.002, 1, "HSV round trip in float32, truncated: " + ROUND1)))
    cases.append(Case("rgb_to_grayscale", ["rgb_to_grayscale"],
                      lambda t: to_hwc(F.rgb_to_grayscale(t, num_output_channels=3)), EXACT))
    cases.append(Case("autocontrast", ["autocontrast"], lambda t: to_hwc(F.autocontrast(t)), EXACT))
    cases.append(Case("equalize", ["equalize"], lambda t: to_hwc(F.equalize(t)), EXACT))
    for bits in range(1, 8):
        cases.append(Case(f"posterize {bits}", ["posterize", str(bits)],
                          lambda t, b=bits: to_hwc(F.posterize(t, b)), EXACT))
    for th in (0, 128, 255):
        cases.append(Case(f"solarize {th}", ["solarize", str(th)], lambda t, th=th: to_hwc(F.solarize(t, th)), EXACT))
    cases.append(Case("invert", ["invert"], lambda t: to_hwc(F.invert(t)), EXACT))
    for f in (0.0, 0.5, 2.0):
        cases.append(Case(f"adjust_sharpness {f:g}", ["adjust_sharpness", str(f)],
                          lambda t, f=f: to_hwc(F.adjust_sharpness(t, f)),
                          Tol(0.002, 1, "3x3 convolution in float32, rounded, then blended: " + ROUND1)))
    for k, s in ((3, 0.5), (9, 2.0)):
        cases.append(Case(f"gaussian_blur {k} {s}", ["gaussian_blur", str(k), str(s)],
                          lambda t, k=k, s=s: to_hwc(F.gaussian_blur(t, [k, k], [s, s])),
                          Tol(0.002, 1, "separable passes vs torch's 2-D float32 convolution, rounded: " + ROUND1)))
    return cases


# --- warps --------------------------------------------------------------------------------

TIE = 1e-4  # pixels: a nearest sample this close to a half-pixel boundary is a tie


def nearest_ties(matrix):
    """H x W mask of output pixels whose source coordinate (torchvision's inverse matrix and
    grid convention, in float64) lies within TIE of a half-pixel boundary on either axis:
    there torch's float32 grid may land on either side, so either neighbour is right."""
    def mask(h, w):
        y, x = np.mgrid[0:h, 0:w].astype(np.float64)
        px, py = x + 0.5 - w / 2, y + 0.5 - h / 2  # _gen_affine_grid's base grid
        sx = matrix[0] * px + matrix[1] * py + matrix[2] + w / 2 - 0.5  # grid_sample, align_corners=False
        sy = matrix[3] * px + matrix[4] * py + matrix[5] + h / 2 - 0.5
        return (np.abs(sx - np.floor(sx) - 0.5) < TIE) | (np.abs(sy - np.floor(sy) - 0.5) < TIE)
    return mask


def warp_cases():
    nearest_tol = Tol(0, 0, f"nearest: exact except exact ties (source within {TIE:g} px of a half-pixel "
                            "boundary), where torch's float32 grid may land on either side")
    bilinear_tol = Tol(0.002, 1, "bilinear in float32 like torch's grid_sample: " + ROUND1)
    fill = [40.0, 90.0, 200.0]
    cases = []
    for angle in (30, -45):
        ties = nearest_ties(F._get_inverse_affine_matrix([0.0, 0.0], -angle, [0.0, 0.0], 1.0, [0.0, 0.0]))
        for mode, tol, skip in ((NEAREST, nearest_tol, ties), (BILINEAR, bilinear_tol, None)):
            cases.append(Case(f"rotate {angle} {mode.value}", ["rotate", str(angle), mode.value],
                              lambda t, a=angle, m=mode: to_hwc(F.rotate(t, a, interpolation=m)), tol, skip))
    affine_kw = dict(angle=10.0, translate=[5, -3], scale=1.2, shear=[8.0, 0.0])
    aff = ["affine", "10", "5", "-3", "1.2", "8", "0"]
    ties = nearest_ties(F._get_inverse_affine_matrix([0.0, 0.0], 10.0, [5.0, -3.0], 1.2, [8.0, 0.0]))
    for mode, tol, skip in ((NEAREST, nearest_tol, ties), (BILINEAR, bilinear_tol, None)):
        cases.append(Case(f"affine {mode.value}", aff + [mode.value],
                          lambda t, m=mode: to_hwc(F.affine(t, interpolation=m, **affine_kw)), tol, skip))
        # With a fill, as RandomAffine passes one: nearest writes it, bilinear blends it
        # through torchvision's mask channel.
        cases.append(Case(f"affine {mode.value} fill", aff + [mode.value, "40,90,200"],
                          lambda t, m=mode: to_hwc(F.affine(t, interpolation=m, fill=fill, **affine_kw)), tol, skip))
    # RandomRotation's default fill 0 is a list [0.0] * C, so the mask path, not fill=None.
    cases.append(Case("rotate 30 bilinear fill 0", ["rotate", "30", "bilinear", "0"],
                      lambda t: to_hwc(F.rotate(t, 30, interpolation=BILINEAR, fill=[0.0, 0.0, 0.0])), bilinear_tol))
    return cases


# --- resize -------------------------------------------------------------------------------

def area_weights(n_in, n_out):
    """n_out x n_in: output i averages input [i * s, (i + 1) * s), s = n_in / n_out, each input
    pixel weighted by its overlap (fractional at the ends)."""
    s = n_in / n_out
    w = np.zeros((n_out, n_in))
    for o in range(n_out):
        lo, hi = o * s, (o + 1) * s
        for i in range(int(np.floor(lo)), min(n_in, int(np.ceil(hi)))):
            w[o, i] = max(0.0, min(hi, i + 1) - max(lo, i))
        w[o] /= w[o].sum()
    return w


def exact_area(size):
    """Area averaging in float64, rounded: the definition OpenCV's INTER_AREA implements."""
    def f(t):
        img = to_hwc(t).astype(np.float64)
        wy, wx = area_weights(img.shape[0], size[0]), area_weights(img.shape[1], size[1])
        out = np.einsum("pj,ojc->opc", wx, np.einsum("oi,ijc->ojc", wy, img))
        return np.clip(np.rint(out), 0, 255).astype(np.uint8)
    return f


def resize_cases(h, w):
    cases = []
    for tag, size in (("down2.3", [round(h / 2.3), round(w / 2.3)]), ("up1.7", [round(h * 1.7), round(w * 1.7)])):
        args = ["resize", str(size[0]), str(size[1])]
        cases.append(Case(f"resize {tag} nearest", args + ["nearest"],
                          lambda t, s=size: to_hwc(F.resize(t, s, NEAREST)), EXACT))
        if tag == "down2.3":
            # pipebench documents bilinear shrinking as area averaging, "the closest match to
            # torchvision's antialiased bilinear": compared with antialias=True, and with the
            # area definition it implements.
            cases.append(Case(f"resize {tag} bilinear", args + ["bilinear"],
                              lambda t, s=size: to_hwc(F.resize(t, s, BILINEAR, antialias=True)),
                              Tol(2.5, 48, "pipebench shrinks by area averaging (a box filter), torchvision's "
                                           "antialias=True by a triangle filter 2.3 px wide: equal on smooth "
                                           "areas, apart at sharp edges (the pattern's checkerboard and 1-px line)")))
            cases.append(Case(f"resize {tag} bilinear =area", args + ["bilinear"], exact_area(size),
                              Tol(0.25, 1, "OpenCV INTER_AREA in fixed point vs float64 area averaging")))
        else:
            cases.append(Case(f"resize {tag} bilinear", args + ["bilinear"],
                              lambda t, s=size: to_hwc(F.resize(t, s, BILINEAR)),
                              Tol(0.25, 1, "OpenCV INTER_LINEAR's 11-bit fixed-point weights vs torch float32")))
        cases.append(Case(f"resize {tag} bicubic", args + ["bicubic"],
                          lambda t, s=size: to_hwc(F.resize(t, s, BICUBIC)),
                          Tol(0.1, 1, "both A=-0.75 without antialias (torchvision 0.14's tensor default); "
                                      "OpenCV INTER_CUBIC's 11-bit fixed-point weights vs torch float32")))
        cases.append(Case(f"resize {tag} area", args + ["area"], exact_area(size),
                          Tol(0.25, 1, "no torchvision reference: 0.14 has no area mode for tensors, and PIL's "
                                      "BOX (and torch's adaptive-pool 'area') weight pixels whole, not by "
                                      "overlap; so float64 area averaging computed here, vs OpenCV fixed point")))
    return cases


# --- crop and erase -----------------------------------------------------------------------

def crop_cases(h, w):
    cases = []
    # Larger on both sides (an odd difference puts the extra pixel right/bottom), then
    # larger on one side only where the image is not square.
    for size in (max(h, w) + 11, (h + w) // 2 if h != w else max(h, w) + 10):
        cases.append(Case(f"center_crop {size}", ["center_crop", str(size)],
                          lambda t, s=size: to_hwc(F.center_crop(t, [s, s])), EXACT))
    return cases


IMAGENET_MEAN, IMAGENET_STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def erase_cases():
    cases = []
    for value in ([0.0], [0.5, -1.0, 2.0]):
        def ref(t, v=value):
            x = F.normalize(F.convert_image_dtype(t, torch.float32), IMAGENET_MEAN, IMAGENET_STD)
            return F.erase(x, 20, 30, 25, 40, torch.tensor(v).view(-1, 1, 1)).numpy()
        text = ",".join(f"{v:g}" for v in value)
        cases.append(Case(f"erase {text}", ["erase", "20", "30", "25", "40", text], ref,
                          Tol(1e-7, 2e-6, "ToTensor + Normalize in float32, which pipebench may evaluate "
                                          "in another order: a few ULP; the erased box itself is exact"),
                          reader=read_f32))
    return cases


def all_cases(h, w):
    return photometric_cases() + warp_cases() + resize_cases(h, w) + crop_cases(h, w) + erase_cases()


# --- main ---------------------------------------------------------------------------------

def compare(got, want, tol, keep):
    d = np.abs(got.astype(np.float64) - want.astype(np.float64))
    if keep is not None:
        d = d[keep]
    mean, mx = (float(d.mean()), float(d.max())) if d.size else (0.0, 0.0)
    return mean <= tol.mean and mx <= tol.max, mean, mx, float((d > 0).mean() * 100) if d.size else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--kernel-tool", required=True)
    ap.add_argument("--pipebench-data", help="for the photo-like JPEG; without it only the pattern")
    args = ap.parse_args()
    print(f"torchvision {torchvision.__version__}, torch {torch.__version__}, numpy {np.__version__}")

    failures, rows, reasons = [], 0, {}
    with tempfile.TemporaryDirectory(prefix="pb-tvref-") as work:
        images = [("pattern", pattern_image(97, 131))]
        if args.pipebench_data:
            images.append(("photo", photo_image(args.pipebench_data, work)))
        in_ppm, out_file = os.path.join(work, "in.ppm"), os.path.join(work, "out")
        header = f"{'case':<30} {'image':<14} {'tolerance':<22} {'mean':>9} {'max':>8} {'diff%':>7} {'skipped':>7}  result"
        print(header)
        print("-" * len(header))
        for image_name, hwc in images:
            h, w, _ = hwc.shape
            label = f"{image_name} {h}x{w}"
            write_ppm(in_ppm, hwc)
            chw = torch.from_numpy(hwc.copy()).permute(2, 0, 1).contiguous()
            for case in all_cases(h, w):
                rows += 1
                start = f"{case.name:<30} {label:<14} {case.tol.text():<22}"
                p = subprocess.run([args.kernel_tool, in_ppm, out_file] + case.tool_args, capture_output=True, text=True)
                if p.returncode != 0:
                    print(f"{start} kernel_tool rc {p.returncode}: {p.stderr.strip()}  FAIL")
                    failures.append(f"{case.name} on {label}: kernel_tool failed")
                    continue
                got, want = case.reader(out_file), case.ref(chw)
                if got.shape != want.shape:
                    print(f"{start} shape {got.shape} != torchvision's {want.shape}  FAIL")
                    failures.append(f"{case.name} on {label}: shape {got.shape} != {want.shape}")
                    continue
                keep, skipped = None, 0
                if case.skip is not None:
                    ties = case.skip(h, w)
                    keep, skipped = ~ties, int(ties.sum())
                ok, mean, mx, pct = compare(got, want, case.tol, keep)
                print(f"{start} {mean:9.3g} {mx:8.3g} {pct:7.3f} {skipped:7d}  {'pass' if ok else 'FAIL'}")
                if case.tol.reason:
                    names = reasons.setdefault(case.tol.reason, [])
                    if case.name not in names:
                        names.append(case.name)
                if not ok:
                    failures.append(f"{case.name} on {label}: mean {mean:.3g} max {mx:.3g} beyond {case.tol.text()}")
    print("\ndiff% = share of compared values that differ at all; skipped = pixels left out (ties).")
    print("Why each tolerance that is not plainly exact:")
    for why, names in reasons.items():
        print(f"  {', '.join(names)}: {why}")
    if failures:
        print(f"\ntorchvision_reference_test: FAIL: {len(failures)} of {rows} comparisons")
        for f in failures:
            print(f"  {f}")
        return 1
    print(f"\ntorchvision_reference_test: all {rows} comparisons within their stated tolerance")
    return 0


if __name__ == "__main__":
    sys.exit(main())

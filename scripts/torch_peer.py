#!/usr/bin/python3
"""Your framework's loader (issue 8, candidate 6): the run's pipeline spec through
torchvision 0.14 transforms and a torch DataLoader on the same ImageFolder files, for a
num_workers sweep, so pipebench-report --peer can show what rewriting the loader buys.

    /usr/bin/python3 scripts/torch_peer.py --run out/run.json [--out peer.json]
    /usr/bin/python3 scripts/torch_peer.py --spec SPEC --data DIR [--size 224] [--out peer.json]

SPEC is what pipebench's --pipeline takes (a YAML file or inline YAML); --run reads the
resolved spec (context pipeline_spec) and dataset (context dataset) of a pipebench run.
Each num_workers count builds a fresh DataLoader(ImageFolder(DIR, transform), batch,
shuffle, drop_last, pin_memory), skips --warmup batches (worker start-up) and times the
next --batches batches: images/s = batches x batch / seconds (wall time, loader alone, no
training step), the number to set beside BM_Loader's items_per_second.

The transforms map one to one to torchvision's classes (pipebench's operators are named
after them, README.md's table); decode is PIL's (torchvision's default loader: no ROI or
DCT-scaled decode). Operators torchvision 0.14 has no class for (batch mixing, label
smoothing, the case study's steps, uint8 output) are left out and listed in the JSON
(`left_out`); so are parameters it cannot take (`approximated`). ToTensor() goes right
before the first tensor operator (normalize, random_erasing), or at the end.

Output (JSON, stdout or --out): versions, dataset, spec, the torchvision transform,
left_out, approximated, batch_size, pin_memory (asked) and pin_memory_effective (CUDA
present), results [{num_workers, images_per_second, seconds, batches_timed,
first_batch_s}], best.

Exit codes: 0 written; 2 bad input (unreadable spec, run or dataset; an operator whose
parameters torchvision rejects), one line on stderr; 77 skipped: this Python has no torch
or torchvision (Debian: apt install python3-torch python3-torchvision), with a message.
"""
import argparse
import json
import os
import platform
import sys
import time

SKIP = 77


def fail(msg):
    print(f"torch_peer: error: {msg}", file=sys.stderr)
    sys.exit(2)


def load_spec(text, size):
    """The spec as (name, decode mode, [(op, params)], [(batch op, params)]) from YAML."""
    import yaml
    if os.path.isfile(text) or text.endswith((".yaml", ".yml")):
        try:
            with open(text) as f:
                doc = yaml.safe_load(f)
        except OSError as e:
            fail(f"{text}: {e.strerror}")
        default_name = os.path.splitext(os.path.basename(text))[0]
    else:
        doc = yaml.safe_load(text)
        default_name = "custom"
    if isinstance(doc, list):
        doc = {"transforms": doc}
    if not isinstance(doc, dict):
        fail(f"{text[:60]}: not a pipeline spec (a list of operators or a map with transforms)")

    def entries(items):
        out = []
        for item in items or []:
            if isinstance(item, str):
                out.append((item, {}))
            elif isinstance(item, dict) and len(item) == 1:
                (name, params), = item.items()
                out.append((name, dict(params or {})))
            else:
                fail(f"not an operator: {item!r}")
        return out

    ops = entries(doc.get("transforms"))
    decode = (doc.get("decode") or {}).get("mode", "full")
    if ops and ops[0][0] == "decode":
        decode = ops[0][1].get("mode", decode)
        ops = ops[1:]
    batch_names = {"mixup", "cutmix", "mixup_cutmix", "label_smoothing"}
    batch = entries(doc.get("batch")) + [o for o in ops if o[0] in batch_names]
    ops = [o for o in ops if o[0] not in batch_names]
    for name, params in ops:
        if name in ("random_resized_crop", "center_crop", "random_crop") and "size" not in params:
            params["size"] = size
    return doc.get("name", default_name), decode, ops, batch


IMAGENET_MEAN = [0.485, 0.456, 0.406]
IMAGENET_STD = [0.229, 0.224, 0.225]
TENSOR_OPS = {"normalize", "random_erasing"}
# No torchvision 0.14 class: the reason shown in the JSON.
NO_EQUIVALENT = {
    "random_mask": "the case study's masking step (no torchvision class)",
    "convert_color_yuv": "the case study's colour conversion (no torchvision class)",
    "scale": "the case study's scaling step (no torchvision class)",
    "to_dtype": "v2.ToDtype is torchvision 0.16+ (ToTensor already gives float32)",
    "mixup": "v2.MixUp is torchvision 0.16+ (a batch operator)",
    "cutmix": "v2.CutMix is torchvision 0.16+ (a batch operator)",
    "mixup_cutmix": "timm's Mixup, not in torchvision (a batch operator)",
    "label_smoothing": "a loss-side change in torch (CrossEntropyLoss(label_smoothing)), no transform",
}


def build_transform(ops):
    """torchvision.transforms.Compose of the spec, and what was left out or approximated."""
    import torchvision.transforms as T
    from torchvision.transforms import InterpolationMode as IM

    def interp(p, default="bilinear"):
        return IM(p.get("interpolation", default))

    def fill(p, default=None):
        v = p.get("fill", default)
        return None if v in (None, "none") else v

    def flist(v):
        return v if isinstance(v, list) else [v, v]

    def size(v):
        return int(v[0]) if isinstance(v, list) and len(v) == 1 else (
            [int(x) for x in v] if isinstance(v, list) else int(v))

    left_out, approximated, out = [], [], []
    tensor = False
    for name, p in ops:
        if name in NO_EQUIVALENT:
            left_out.append({"operator": name, "reason": NO_EQUIVALENT[name]})
            continue
        if name in TENSOR_OPS and not tensor:
            out.append(T.ToTensor())
            tensor = True
        if name == "random_resized_crop":
            out.append(T.RandomResizedCrop(size(p["size"]), scale=tuple(p.get("scale", (0.08, 1.0))),
                                           ratio=tuple(p.get("ratio", (3 / 4, 4 / 3))), interpolation=interp(p)))
        elif name == "center_crop":
            out.append(T.CenterCrop(size(p["size"])))
        elif name == "random_crop":
            out.append(T.RandomCrop(size(p["size"]), padding=p.get("padding", 0) or None,
                                    pad_if_needed=p.get("pad_if_needed", False), fill=p.get("fill", 0)))
        elif name == "resize":
            out.append(T.Resize(size(p["size"]), interpolation=interp(p)))
        elif name == "horizontal_flip":
            out.append(T.RandomHorizontalFlip(p.get("p", 0.5)))
        elif name == "vertical_flip":
            out.append(T.RandomVerticalFlip(p.get("p", 0.5)))
        elif name == "normalize":
            mean = p.get("mean", "imagenet")
            std = p.get("std", "imagenet")
            out.append(T.Normalize(IMAGENET_MEAN if mean == "imagenet" else mean,
                                   IMAGENET_STD if std == "imagenet" else std))
        elif name == "color_jitter":
            out.append(T.ColorJitter(p.get("brightness", 0), p.get("contrast", 0),
                                     p.get("saturation", 0), p.get("hue", 0)))
        elif name == "rand_augment":
            if p.get("magnitude_std", 0) or p.get("increasing", False):
                approximated.append({"operator": name, "reason": "timm's magnitude_std / increasing "
                                     "ranges have no torchvision 0.14 parameter: plain RandAugment"})
            out.append(T.RandAugment(p.get("num_ops", 2), p.get("magnitude", 9),
                                     p.get("num_magnitude_bins", 31), interp(p, "nearest"), fill(p)))
        elif name == "trivial_augment_wide":
            out.append(T.TrivialAugmentWide(p.get("num_magnitude_bins", 31), interp(p, "nearest"), fill(p)))
        elif name == "auto_augment":
            out.append(T.AutoAugment(T.AutoAugmentPolicy(p.get("policy", "imagenet")),
                                     interp(p, "nearest"), fill(p)))
        elif name == "random_erasing":
            value = p.get("value", 0)
            out.append(T.RandomErasing(p.get("p", 0.5), tuple(p.get("scale", (0.02, 0.33))),
                                       tuple(p.get("ratio", (0.3, 3.3))), value))
        elif name == "gaussian_blur":
            out.append(T.GaussianBlur(p["kernel_size"], tuple(p.get("sigma", (0.1, 2.0)))))
        elif name == "random_grayscale":
            out.append(T.RandomGrayscale(p.get("p", 0.1)))
        elif name == "random_invert":
            out.append(T.RandomInvert(p.get("p", 0.5)))
        elif name == "random_posterize":
            out.append(T.RandomPosterize(int(p["bits"]), p.get("p", 0.5)))
        elif name == "random_solarize":
            out.append(T.RandomSolarize(p["threshold"], p.get("p", 0.5)))
        elif name == "random_adjust_sharpness":
            out.append(T.RandomAdjustSharpness(p["sharpness_factor"], p.get("p", 0.5)))
        elif name == "random_autocontrast":
            out.append(T.RandomAutocontrast(p.get("p", 0.5)))
        elif name == "random_equalize":
            out.append(T.RandomEqualize(p.get("p", 0.5)))
        elif name == "random_rotation":
            out.append(T.RandomRotation(p["degrees"], interp(p, "nearest"), p.get("expand", False),
                                        fill=p.get("fill", 0)))
        elif name == "random_affine":
            out.append(T.RandomAffine(p["degrees"], tuple(p["translate"]) if p.get("translate") else None,
                                      tuple(p["scale"]) if p.get("scale") else None,
                                      p.get("shear") or None, interp(p, "nearest"), p.get("fill", 0)))
        else:
            left_out.append({"operator": name, "reason": "not mapped to torchvision by torch_peer.py"})
    if not tensor:
        out.append(T.ToTensor())
    return T.Compose(out), left_out, approximated


def measure(dataset, batch, workers, batches, warmup, pin, seed):
    """images/s of one DataLoader over `batches` batches after `warmup` ones."""
    import torch
    g = torch.Generator()
    g.manual_seed(seed)
    loader = torch.utils.data.DataLoader(dataset, batch_size=batch, shuffle=True, drop_last=True,
                                         num_workers=workers, pin_memory=pin, generator=g)
    need = warmup + batches
    t0 = time.perf_counter()
    first = None
    done = 0
    start = None
    while done < need:
        for images, _labels in loader:
            done += 1
            if first is None:
                first = time.perf_counter() - t0
            if done == warmup:
                start = time.perf_counter()
            if done >= need:
                break
    if start is None:  # warmup 0
        start = t0
    seconds = time.perf_counter() - start
    return {"num_workers": workers, "images_per_second": batches * batch / seconds, "seconds": seconds,
            "batches_timed": batches, "first_batch_s": first}


def versions():
    import PIL
    import torch
    import torchvision
    return {"python": platform.python_version(), "torch": torch.__version__,
            "torchvision": torchvision.__version__, "pillow": PIL.__version__}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", help="a pipebench run JSON: its context's pipeline_spec and dataset")
    ap.add_argument("--spec", help="a pipeline spec (YAML file or inline), as pipebench --pipeline takes")
    ap.add_argument("--data", help="ImageFolder root (default: the run's dataset)")
    ap.add_argument("--size", type=int, default=224, help="crop size where the spec omits it (default 224)")
    ap.add_argument("--batch", type=int, help="batch size (default: the run's, else 64)")
    ap.add_argument("--workers", default=None,
                    help="num_workers to sweep, e.g. 0,1,2 (default 0,1,2,4,... up to 2x cores)")
    ap.add_argument("--batches", type=int, default=20, help="timed batches per count (default 20)")
    ap.add_argument("--warmup", type=int, default=2, help="batches not timed first (default 2)")
    ap.add_argument("--no-pin-memory", action="store_true", help="pin_memory=False")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", help="write the JSON here (default stdout)")
    a = ap.parse_args()
    try:  # imported here, so that a machine without torch gets the skip message
        import torch
        import torchvision
    except ImportError as e:
        print(f"torch_peer: skipped: {sys.executable} has no torch/torchvision ({e}); on Debian: "
              "apt install python3-torch python3-torchvision", file=sys.stderr)
        return SKIP

    ctx = {}
    if a.run:
        try:
            with open(a.run) as f:
                ctx = json.load(f).get("context", {})
        except (OSError, ValueError) as e:
            fail(f"{a.run}: {e}")
    spec = a.spec or ctx.get("pipeline_spec")
    data = a.data or ctx.get("dataset")
    if not spec:
        fail("no spec: give --spec, or --run with a run whose context has pipeline_spec")
    if not data or not os.path.isdir(data):
        fail(f"{data}: no dataset folder (give --data)")
    batch = a.batch or int(float(ctx.get("batch_size", 64)))
    name, decode, ops, batch_ops = load_spec(spec, a.size)

    try:
        transform, left_out, approximated = build_transform(ops)
    except (TypeError, ValueError, KeyError) as e:
        fail(f"{spec[:80]}: torchvision rejects an operator's parameters: {e}")
    left_out += [{"operator": n, "reason": NO_EQUIVALENT.get(n, "a batch operator")} for n, _ in batch_ops]
    if decode not in ("full",):
        approximated.append({"operator": "decode", "reason": f"decode mode {decode}: torchvision "
                             "decodes with PIL, whole images (no ROI or DCT-scaled decode)"})
    try:
        dataset = torchvision.datasets.ImageFolder(data, transform=transform)
    except (FileNotFoundError, RuntimeError) as e:
        fail(f"{data}: {e}")
    if len(dataset) < batch:
        fail(f"{data}: {len(dataset)} images, fewer than one batch of {batch}")
    cores = os.cpu_count() or 1
    if a.workers:
        counts = [int(w) for w in a.workers.split(",")]
    else:
        counts, w = [0], 1
        while w <= 2 * cores:
            counts.append(w)
            w *= 2
    torch.set_num_threads(1)  # the main process as one worker, as pipebench's are
    pin = not a.no_pin_memory
    # pin_memory without CUDA only warns and does nothing: ask for it only where it acts.
    results = [measure(dataset, batch, w, a.batches, a.warmup, pin and torch.cuda.is_available(), a.seed)
               for w in counts]
    doc = {"tool": "scripts/torch_peer.py", "versions": versions(), "dataset": os.path.abspath(data),
           "images": len(dataset), "pipeline": name, "spec": spec, "transform": repr(transform),
           "left_out": left_out, "approximated": approximated, "batch_size": batch,
           "pin_memory": pin, "pin_memory_effective": pin and torch.cuda.is_available(),
           "cores": cores, "results": results,
           "best": max(results, key=lambda r: r["images_per_second"])}
    text = json.dumps(doc, indent=2) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())

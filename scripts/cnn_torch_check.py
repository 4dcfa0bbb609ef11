#!/usr/bin/env python3
"""cnn_torch_check.py: pipebench's cuda:cnn step (pipeline/train_step_cnn.h) against PyTorch,
for a GPU node with PyTorch (in the bundle: scripts/; gpu-suite.sh runs it).

  cnn_torch_check.py [--bundle DIR | --dump-tool BIN] [--n 8] [--size 32] [--steps 20]
  cnn_torch_check.py --init-only [--bundle DIR | --dump-tool BIN]

1. tests/cnn_dump (NVIDIA_TF32_OVERRIDE=0: cuDNN in full float32) runs the step on a batch of
   N x 3 x S x S and writes its initial weights, the batch, each step's loss and the first
   step's gradients and updated parameters.
2. This script checks, without pipebench's help, that the layers are the seed's model
   (conv_in 3 -> 30, floor(log2 S) blocks of conv 30 -> 30 + ReLU + 2x2 max pool, conv_out
   30 -> 10; 3x3, same padding, biases) and that the initial weights are the documented hash
   (SplitMix64 of 101 + layer, He-uniform scale sqrt(6 / fan_in); biases 0), bit for bit.
3. It builds that CNN in PyTorch (F.conv2d, F.relu, F.max_pool2d, F.cross_entropy on labels
   i % 10, torch.optim.SGD(lr, momentum 0.9)) with those weights, on the GPU in float32 with
   TF32 off, runs one step on the same batch and compares the loss, every weight and bias
   gradient and the updated parameters with pipebench's: relative error
   max|pipebench - torch| / max|torch| per tensor at most --tolerance (1e-3).
4. It runs --steps - 1 more steps on both sides: the loss must fall (last below first) in
   each, and the two loss curves must agree within 1e-2 relative.

Lines start with "cnn_torch_check:" (gpu-suite.sh's summary quotes them). Exit status: 0
passed; 1 a check failed; 77 skipped, with one line saying why (no PyTorch, no CUDA device
for it, or cnn_dump has none); 2 bad arguments or no cnn_dump.
--init-only: steps 1 (cnn_dump --init-only, no device) and 2 only, no PyTorch needed (the
gpu_suite test runs it on machines without a GPU).
"""
import argparse
import json
import math
import os
import shutil
import struct
import subprocess
import sys
import tempfile
from array import array

TAG = "cnn_torch_check:"
HIDDEN, CLASSES, KERNEL = 30, 10, 3
MASK = (1 << 64) - 1


def say(text):
    print(f"{TAG} {text}", flush=True)


def f32(x):
    """x rounded to float32 (as a Python float)."""
    return struct.unpack("<f", struct.pack("<f", x))[0]


def seed_model(c, h, w):
    """The seed's layers for C x H x W (train_step_cnn.h), written out independently."""
    blocks = min(h, w).bit_length() - 1  # floor(log2(min(H, W))), the seed's int(log2(img_size))
    layers = [dict(cin=c, cout=HIDDEN, k=KERNEL, h=h, w=w, relu=True, pool=False)]
    for _ in range(blocks):
        layers.append(dict(cin=HIDDEN, cout=HIDDEN, k=KERNEL, h=h, w=w, relu=True, pool=True))
        h, w = h // 2, w // 2
    layers.append(dict(cin=HIDDEN, cout=CLASSES, k=KERNEL, h=h, w=w, relu=False, pool=False))
    return layers


def hash_weights(count, seed, fan_in):
    """cuda_kernels::fill_uniform's values as float32: (2u - 1) scale, u from SplitMix64."""
    scale = f32(math.sqrt(6.0 / fan_in))
    out = array("f")
    for i in range(count):
        z = (seed + (i + 1) * 0x9E3779B97F4A7C15) & MASK
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        u = (z >> 40) / 16777216.0  # exact in float32
        out.append(f32((2.0 * u - 1.0) * scale))  # 2u - 1 is exact; one rounding, as on the device
    return out


def read_f32(folder, manifest, name):
    entry = manifest["files"][name]
    data = array("f")
    with open(os.path.join(folder, entry["file"]), "rb") as f:
        data.frombytes(f.read())
    if sys.byteorder != "little":
        data.byteswap()
    expect = math.prod(entry["shape"])
    if len(data) != expect:
        raise ValueError(f"{entry['file']}: {len(data)} floats, the manifest says {expect}")
    return data, entry["shape"]


def check_model(folder, manifest):
    """Steps 2: layers and initial weights. Returns the failures (strings)."""
    bad = []
    want = seed_model(manifest["c"], manifest["h"], manifest["w"])
    got = [{k: l[k] for k in ("cin", "cout", "k", "h", "w", "relu", "pool")} for l in manifest["layers"]]
    if got != want:
        bad.append(f"layers differ from the seed's model: pipebench {got}, expected {want}")
        return bad
    for l, layer in enumerate(want):
        w0, shape = read_f32(folder, manifest, f"w0_{l}")
        if shape != [layer["cout"], layer["cin"], layer["k"], layer["k"]]:
            bad.append(f"w0_{l}: shape {shape}")
            continue
        ref = hash_weights(len(w0), 101 + l, layer["cin"] * layer["k"] * layer["k"])
        diff = sum(1 for a, b in zip(w0, ref) if a != b)
        if diff:
            bad.append(f"layer {l}: {diff} of {len(w0)} initial weights differ from the hash")
        b0, _ = read_f32(folder, manifest, f"b0_{l}")
        if any(v != 0.0 for v in b0):
            bad.append(f"layer {l}: initial biases not 0")
    return bad


def find_tool(args):
    if args.dump_tool:
        return args.dump_tool
    here = os.path.dirname(os.path.abspath(__file__))
    for base in [args.bundle] if args.bundle else [os.path.join(here, "..")]:
        cand = os.path.join(base, "tests", "cnn_dump")
        if os.access(cand, os.X_OK):
            return cand
    return None


def run_dump(tool, folder, args, init_only):
    cmd = [tool, folder, "--n", str(args.n), "--size", str(args.size), "--steps", str(args.steps)]
    if init_only:
        cmd.append("--init-only")
    env = dict(os.environ, NVIDIA_TF32_OVERRIDE="0")  # cuDNN and cuBLAS in full float32
    return subprocess.run(cmd, capture_output=True, text=True, env=env)


def rel_err(a, b):
    """max|a - b| / max|b| (b the reference), 0 when both are zero."""
    scale = float(b.abs().max())
    diff = float((a - b).abs().max())
    return diff / scale if scale > 0 else diff


def torch_check(folder, manifest, tol):
    import torch
    import torch.nn.functional as F

    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.deterministic = True
    dev = torch.device("cuda")

    def tensor(name):
        data, shape = read_f32(folder, manifest, name)
        return torch.frombuffer(bytearray(data.tobytes()), dtype=torch.float32).reshape(shape).to(dev)

    layers = manifest["layers"]
    params = []
    for l in range(len(layers)):
        params.append(tensor(f"w0_{l}").requires_grad_())
        params.append(tensor(f"b0_{l}").requires_grad_())
    x = tensor("input")
    n = manifest["n"]
    labels = torch.arange(n, device=dev) % manifest["classes"]

    def loss_of():
        y = x
        for l, layer in enumerate(layers):
            y = F.conv2d(y, params[2 * l], params[2 * l + 1], padding=layer["k"] // 2)
            if layer["relu"]:
                y = F.relu(y)
            if layer["pool"]:
                y = F.max_pool2d(y, 2, 2)
        return F.cross_entropy(y.reshape(n, -1), labels)  # mean over the batch, as pipebench

    opt = torch.optim.SGD(params, lr=manifest["lr"], momentum=manifest["momentum"])
    bad = []
    losses = manifest["losses"]
    loss = loss_of()
    loss.backward()
    t_loss = float(loss)
    r = abs(losses[0] - t_loss) / abs(t_loss)
    say(f"first loss: pipebench {losses[0]:.6f}, PyTorch {t_loss:.6f} (relative error {r:.1e})")
    if not r <= tol:
        bad.append(f"first loss differs: relative error {r:.2e} > {tol:g}")
    worst = (0.0, "")
    for l in range(len(layers)):
        for kind, p in (("dw", params[2 * l]), ("db", params[2 * l + 1])):
            e = rel_err(tensor(f"{kind}_{l}"), p.grad)
            worst = max(worst, (e, f"{kind}_{l}"))
            if not e <= tol:
                bad.append(f"gradient {kind}_{l}: relative error {e:.2e} > {tol:g}")
    say(f"gradients: {2 * len(layers)} tensors, worst relative error {worst[0]:.1e} ({worst[1]})")
    opt.step()
    worst = (0.0, "")
    with torch.no_grad():
        for l in range(len(layers)):
            for kind, p in (("w1", params[2 * l]), ("b1", params[2 * l + 1])):
                e = rel_err(tensor(f"{kind}_{l}"), p)
                worst = max(worst, (e, f"{kind}_{l}"))
                if not e <= tol:
                    bad.append(f"updated {kind}_{l}: relative error {e:.2e} > {tol:g}")
    say(f"after the update: worst relative error {worst[0]:.1e} ({worst[1]})")
    t_losses = [t_loss]
    for _ in range(len(losses) - 1):
        opt.zero_grad()
        loss = loss_of()
        loss.backward()
        opt.step()
        t_losses.append(float(loss))
    curve = max(abs(a - b) / abs(b) for a, b in zip(losses, t_losses))
    say(f"loss over {len(losses)} steps: pipebench {losses[0]:.4f} -> {losses[-1]:.4f}, "
        f"PyTorch {t_losses[0]:.4f} -> {t_losses[-1]:.4f} (curves within {curve:.1e})")
    if not losses[-1] < losses[0]:
        bad.append(f"pipebench's loss does not fall over {len(losses)} steps")
    if not t_losses[-1] < t_losses[0]:
        bad.append(f"PyTorch's loss does not fall over {len(losses)} steps")
    if not curve <= 1e-2:
        bad.append(f"the loss curves differ by {curve:.2e} relative (> 1e-2)")
    return bad


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--bundle", help="a pipebench bundle (its tests/cnn_dump)")
    p.add_argument("--dump-tool", help="the cnn_dump binary (default: the bundle's, or ../tests/cnn_dump)")
    p.add_argument("--n", type=int, default=8, help="batch size (default 8)")
    p.add_argument("--size", type=int, default=32, help="image side, pixels (default 32: 5 blocks)")
    p.add_argument("--steps", type=int, default=20, help="steps for the loss curve (default 20)")
    p.add_argument("--tolerance", type=float, default=1e-3, help="relative error allowed (default 1e-3)")
    p.add_argument("--init-only", action="store_true", help="layers and initial weights only (no torch, no device)")
    args = p.parse_args()
    if args.n < 1 or args.size < 2 or args.steps < 2:
        p.error("--n >= 1, --size >= 2, --steps >= 2")
    tool = find_tool(args)
    if not tool or not os.access(tool, os.X_OK):
        say(f"error: no cnn_dump (pass --bundle DIR or --dump-tool BIN; looked for {tool or 'tests/cnn_dump'})")
        return 2
    if not args.init_only:
        try:
            import torch
        except ImportError as e:
            say(f"skipped: PyTorch not installed ({e})")
            return 77
        if not torch.cuda.is_available():
            say(f"skipped: PyTorch {torch.__version__} sees no CUDA device")
            return 77
    folder = tempfile.mkdtemp(prefix="cnn-torch-check-")
    try:
        r = run_dump(tool, folder, args, args.init_only)
        if r.returncode == 77:
            say(f"skipped: {(r.stdout.strip().splitlines() or ['cnn_dump: no device'])[-1]}")
            return 77
        if r.returncode != 0:
            say(f"FAIL: cnn_dump exited {r.returncode}: {(r.stderr.strip().splitlines() or [''])[-1]}")
            return 1
        with open(os.path.join(folder, "manifest.json"), encoding="utf-8") as f:
            manifest = json.load(f)
        bad = check_model(folder, manifest)
        say(f"model: {len(manifest['layers'])} layers as the seed's, initial weights "
            f"{'the documented hash, bit for bit' if not bad else 'WRONG'}")
        if not args.init_only and not bad:
            if manifest.get("tf32_override") != "0":
                say("warning: cnn_dump ran without NVIDIA_TF32_OVERRIDE=0")
            say(f"device: {manifest.get('device', '?')}; batch {manifest['n']} x 3 x {manifest['h']} x {manifest['w']}")
            bad += torch_check(folder, manifest, args.tolerance)
        for b in bad:
            say(f"FAIL: {b}")
        if not bad:
            say("PASS" + (" (initial weights only)" if args.init_only else
                          f": loss, every gradient and the update within {args.tolerance:g}, the loss falls"))
        return 1 if bad else 0
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())

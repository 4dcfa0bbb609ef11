#!/usr/bin/python3
"""`pipebench-data pack` against Python's tarfile, both ways (issue 12).

1. pack a synthetic ImageFolder tree, then list every shard with tarfile: shard names
   <prefix>-000000.tar..., members <key>.<ext> + <key>.cls consecutive, keys the packed
   positions 00000000.. across shards, regular files of mode 0644 in ustar headers, each
   image member's bytes one source file's bytes (each source once), its .cls the index of
   the source's class folder, mtime the source's, sizes per tarfile's own headers; the
   shards' sizes multiples of 512; classes.txt; --shard-size respected.
2. tarfile writes shards (PAX, GNU and USTAR formats, long and non-ASCII names, a
   directory entry and a pax global header), and `pipebench-data inspect DIR --list`
   (ShardSet through open_dataset) lists exactly the image members tarfile wrote, in order,
   with their labels.
3. bad usage exits 2; a shard folder with a truncated shard exits 2 naming it.

Usage: pack_tarfile_test.py --pipebench-data BIN
"""
import argparse
import io
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path


def run(cmd, expect=0):
    p = subprocess.run([str(c) for c in cmd], capture_output=True, text=True)
    if p.returncode != expect:
        sys.exit(f"FAIL: {cmd} exited {p.returncode}, expected {expect}\n{p.stdout}\n{p.stderr}")
    return p


def check(cond, what):
    if not cond:
        sys.exit(f"FAIL: {what}")


def sources(root):
    """{bytes: [(path, label)]} of an ImageFolder tree (class folders sorted)."""
    classes = sorted(d.name for d in root.iterdir() if d.is_dir())
    out = {}
    for label, c in enumerate(classes):
        for f in sorted((root / c).iterdir()):
            out.setdefault(f.read_bytes(), []).append((f, label))
    return classes, out


def check_pack(bin_, tmp):
    src = tmp / "src"
    run([bin_, "synthetic", src, "--count", "30", "--classes", "3", "--min-width", "40",
         "--max-width", "120", "--min-height", "30", "--max-height", "90"])
    (src / "class_002" / "Shout.JPEG").write_bytes((src / "class_000" / "img_000000.jpg").read_bytes() + b"\0")
    classes, by_content = sources(src)
    out = tmp / "shards"
    p = run([bin_, "pack", src, out, "--shard-size=7", "--seed=5", "--prefix=syn"])
    check("wrote 31 images in 5 shards" in p.stdout, f"pack's summary: {p.stdout}")
    shards = sorted(out.glob("*.tar"))
    check([s.name for s in shards] == [f"syn-{i:06d}.tar" for i in range(5)], f"shard names {shards}")
    check((out / "classes.txt").read_text() == "".join(c + "\n" for c in classes), "classes.txt")
    position, used = 0, set()
    for shard in shards:
        check(shard.stat().st_size % 512 == 0, f"{shard}: size not a multiple of 512")
        with open(shard, "rb") as f:
            check(f.read(512)[257:265] == b"ustar\x0000", f"{shard}: not a POSIX ustar header")
        with tarfile.open(shard) as t:
            members = t.getmembers()
            check(len(members) % 2 == 0 and len(members) // 2 <= 7, f"{shard}: {len(members)} members")
            for img, cls in zip(members[0::2], members[1::2]):
                key = f"{position:08d}"
                stem, _, ext = img.name.partition(".")
                check(stem == key and ext in ("jpg", "jpeg"), f"{shard}: image member {img.name}, expected {key}.*")
                check(cls.name == key + ".cls", f"{shard}: {cls.name} after {img.name}")
                for m in (img, cls):
                    check(m.isreg() and m.mode == 0o644, f"{shard}:{m.name}: type {m.type} mode {oct(m.mode)}")
                data = t.extractfile(img).read()
                check(len(data) == img.size, f"{shard}:{img.name}: size")
                candidates = [c for c in by_content.get(data, []) if c[0] not in used]
                check(candidates, f"{shard}:{img.name}: bytes of no (unused) source file")
                path, label = candidates[0]
                used.add(path)
                check(ext == path.suffix[1:].lower(), f"{img.name}: extension of {path}")
                check(t.extractfile(cls).read() == str(label).encode(), f"{shard}:{cls.name}: label of {path}")
                check(img.mtime == int(path.stat().st_mtime), f"{shard}:{img.name}: mtime of {path}")
                position += 1
    check(position == 31 and len(used) == 31, f"{position} samples listed, {len(used)} sources used")
    return out


def check_tarfile_shards(bin_, tmp):
    out = tmp / "pyshards"
    out.mkdir()
    long_dir = "/".join(["d" * 30] * 5)  # 154 bytes of folders
    long_stem = "x" * 130
    payload = lambda i: bytes([0xFF, 0xD8]) + bytes([i]) * (100 + 300 * i)
    expect = []  # (label, shard:member)
    formats = [("a-pax.tar", tarfile.PAX_FORMAT), ("b-gnu.tar", tarfile.GNU_FORMAT),
               ("c-ustar.tar", tarfile.USTAR_FORMAT)]
    for n, (name, fmt) in enumerate(formats):
        members = [(f"{long_dir}/s0.jpg", f"{long_dir}/s0.cls"), ("caf\u00e9.png", "caf\u00e9.cls")]
        if fmt != tarfile.USTAR_FORMAT:
            members.append((long_stem + ".webp", long_stem + ".cls"))
        pax = {"comment": "global"} if fmt == tarfile.PAX_FORMAT else None
        with tarfile.open(out / name, "w", format=fmt, pax_headers=pax) as t:
            d = tarfile.TarInfo("somedir")
            d.type = tarfile.DIRTYPE
            t.addfile(d)
            for i, (img, cls) in enumerate(members):
                for member, data in ((img, payload(i)), (cls, f"{n * 10 + i}\n".encode())):
                    info = tarfile.TarInfo(member)
                    info.size = len(data)
                    t.addfile(info, io.BytesIO(data))
                expect.append(f"{n * 10 + i}\t{out / name}:{img}")
    p = run([bin_, "inspect", out, "--list"])
    got = p.stdout.splitlines()
    check(got == expect, "inspect --list of tarfile's shards:\n" + "\n".join(got) + "\nexpected:\n" + "\n".join(expect))


def check_errors(bin_, tmp, shards):
    run([bin_, "pack", tmp / "missing", tmp / "o1", "--shard-size=4"], expect=2)
    run([bin_, "pack", tmp / "src", tmp / "o2"], expect=2)  # neither --shard-size nor --shard-mib
    bad = tmp / "bad"
    bad.mkdir()
    data = (shards / "syn-000001.tar").read_bytes()
    (bad / "x-000000.tar").write_bytes(data[: len(data) // 2])
    p = run([bin_, "inspect", bad, "--list"], expect=2)
    check(str(bad / "x-000000.tar") in p.stderr and "truncated" in p.stderr, f"truncated shard: {p.stderr}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pipebench-data", required=True)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        shards = check_pack(a.pipebench_data, tmp)
        check_tarfile_shards(a.pipebench_data, tmp)
        check_errors(a.pipebench_data, tmp, shards)
    print("pack_tarfile: OK")


if __name__ == "__main__":
    main()

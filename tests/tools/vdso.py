"""This kernel's vDSO, as the tests need it: the image every process maps as
[vdso], read from this process (the bytes perf saves in its build-id cache).
"""
import os
import struct
import subprocess


def image():
    """The running vDSO's ELF image (bytes), or None."""
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                if line.rstrip().endswith("[vdso]"):
                    lo, hi = (int(x, 16) for x in line.split()[0].split("-"))
                    with open("/proc/self/mem", "rb") as mem:
                        mem.seek(lo)
                        return mem.read(hi - lo)
    except (OSError, ValueError):
        pass
    return None


def build_id(img):
    """The GNU build-id (hex) of a 64-bit little-endian ELF image's PT_NOTEs, or None."""
    try:
        if img[:4] != b"\x7fELF" or img[4] != 2 or img[5] != 1:
            return None
        phoff, = struct.unpack_from("<Q", img, 32)
        phentsize, phnum = struct.unpack_from("<HH", img, 54)
        for k in range(phnum):
            typ, _, off, _, _, fsz = struct.unpack_from("<IIQQQQ", img, phoff + k * phentsize)
            i, end = off, off + fsz
            while typ == 4 and i + 12 <= end:
                nsz, dsz, nt = struct.unpack_from("<III", img, i)
                d = i + 12 + ((nsz + 3) & ~3)
                if nt == 3 and img[i + 12:i + 12 + nsz].rstrip(b"\0") == b"GNU":
                    return img[d:d + dsz].hex()
                i = d + ((dsz + 3) & ~3)
    except struct.error:
        pass
    return None


def install_in_perf_cache(debug_dir, build_id_hex):
    """Puts the running vDSO into perf's build-id cache at debug_dir (~/.debug layout:
    [vdso]/<id>/vdso and .build-id/NN/REST -> it), as perf record does without -N,
    when build_id_hex is the running vDSO's; False otherwise."""
    img = image()
    if not img or build_id(img) != build_id_hex:
        return False
    entry = os.path.join(debug_dir, "[vdso]", build_id_hex)
    os.makedirs(entry, exist_ok=True)
    with open(os.path.join(entry, "vdso"), "wb") as f:
        f.write(img)
    link_dir = os.path.join(debug_dir, ".build-id", build_id_hex[:2])
    os.makedirs(link_dir, exist_ok=True)
    link = os.path.join(link_dir, build_id_hex[2:])
    if not os.path.lexists(link):
        os.symlink(os.path.join("..", "..", "[vdso]", build_id_hex), link)
    return True


def install_for_recording(data, debug_dir, env=None):
    """install_in_perf_cache() for the [vdso] that perf.data file `data` recorded, when it
    is this kernel's: a recording made with perf record -N kept no copy, and conv takes
    the running image when the build-ids match, so perf gets it where it looks."""
    r = subprocess.run(["perf", "buildid-list", "-i", data], stdin=subprocess.DEVNULL,
                       stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, timeout=600)
    done = False
    for line in r.stdout.decode(errors="replace").splitlines():
        f = line.split()
        if len(f) == 2 and f[1] == "[vdso]":
            done = install_in_perf_cache(debug_dir, f[0]) or done
    return done

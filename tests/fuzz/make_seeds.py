#!/usr/bin/env python3
"""Writes the hand-made seed inputs of the fuzz corpora (tests/fuzz/corpus/<target>/seed-*).

Run once when a target or a format changes; inputs the fuzzer found are kept beside these as
regression cases. Needs only Python's standard library.
"""
import hashlib
import json
import pathlib
import pickle
import shutil
import struct
import zlib

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CORPUS = HERE / "corpus"


def put(target, name, data):
    d = CORPUS / target
    d.mkdir(parents=True, exist_ok=True)
    (d / f"seed-{name}").write_bytes(data if isinstance(data, bytes) else data.encode())


def png(width, height, gray=False):
    def chunk(kind, data):
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))
    channels = 1 if gray else 3
    rows = b"".join(b"\x00" + bytes((x * 37 + y * 11) % 256 for x in range(width * channels))
                    for y in range(height))
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 0 if gray else 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(rows))
            + chunk(b"IEND", b""))


def jpeg(width, height):
    # The segments the header walk reads (APP0, DQT, SOF0, SOS), a few bytes of scan, EOI.
    def segment(marker, body):
        return b"\xff" + bytes([marker]) + struct.pack(">H", len(body) + 2) + body
    app0 = segment(0xE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00")
    dqt = segment(0xDB, b"\x00" + bytes(range(1, 65)))
    sof = segment(0xC0, struct.pack(">BHHB", 8, height, width, 1) + b"\x01\x11\x00")
    sos = segment(0xDA, b"\x01\x01\x00\x00\x3f\x00")
    return b"\xff\xd8" + app0 + dqt + sof + sos + b"\x12\x34\xff\x00\x56" + b"\xff\xd9"


def npy(descr, fortran, shape, data, version=1):
    # As np.save writes it: the header dict padded with spaces and a newline to a multiple of 64.
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    text = f"{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': ({dims}), }}"
    length = 4 if version > 1 else 2
    text += " " * ((64 - (6 + 2 + length + len(text) + 1) % 64) % 64) + "\n"
    size = struct.pack("<I" if version > 1 else "<H", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + size + text.encode() + data


def sealed(archive, step):
    manifest = {
        "archive_bytes": len(archive),
        "archive_sha256": hashlib.sha256(archive).hexdigest(),
        "global_step": step,
        "config_sha256": hashlib.sha256(b"[trainer]\n").hexdigest(),
        "wscsl_version": "0.1.0",
        "libtorch_version": "1.13.1",
    }
    text = json.dumps(manifest, separators=(",", ":"), sort_keys=True).encode()
    return archive + text + struct.pack("<Q", len(text)) + b"WSCSLCK3"


def main():
    for name in ["default", "ut_zappos", "celeba", "csn"]:
        src = ROOT / "examples" / "pipelines" / f"{name}.toml"
        if src.exists():
            put("pipeline_toml", name, src.read_bytes())
    shutil.copy(ROOT / "tests" / "data" / "three_errors.toml",
                CORPUS / "pipeline_toml" / "seed-three_errors")
    put("pipeline_toml", "kinds", 'a = 1\nb = 2.5\nc = "x"\nd = true\ne = [1, 2]\n'
        'f = { g = "h" }\n[t.u]\nv = 1979-05-27T07:32:00Z\n[[w]]\nx = -inf\n[[w]]\ny = nan\n')
    put("pipeline_toml", "schema", '[one]\ncount = 3\nrate = 0.5\nflag = true\nname = "n"\n'
        'fractions = [0.1, 0.9]\nnames = ["a", "b"]\nlimit = 4\nmode = "mean"\nsize = 8\n'
        '[[many]]\ncount = 0\nmode = "median"\nsize = 7\nextra = 1\n')
    put("pipeline_toml", "dotted", "a.b.c = 1\n[x.y]\nz.w = 2\n")

    put("set_override", "simple", "trainer.lr=0.5\ntrainer.epochs=3\n")
    put("set_override", "arrays", "losses.0.margin=1.5\nevaluators.0.fractions=[0.2, 0.3]\n")
    put("set_override", "new", 'dataset.type="fashion_crb"\na.b.c=x\nlosses.1.type=margin\n')
    put("set_override", "bad", "trainer\n=1\ntrainer.lr\nlosses.x.y=1\ntrainer={a=1}\n")

    put("csv", "plain", "file,colour,size\na.png,red,1\nb.png,blue,2\n")
    put("csv", "quoted", 'file,note\n"a,b.png","say ""hi"""\n"multi\nline",x\n')
    put("csv", "spreadsheet", "\ufefffile,colour\r\na.png,red\r\nb.png,blue\r\n")
    put("csv", "bad", 'file,a\nx.png\n"open,1\nz.png,"q"x\n')

    put("csn_lists", "plain", "0 1 2\n3 4 5\n\n6 7 8\n")
    put("csn_lists", "half_reverse", "0 1 2 1\n3 4 5 0\n6 7 8 1.0\n")
    put("csn_lists", "bad", "0 1\n-1 2 3\n1 2 99999\n0 1 2 7\nimg/a.jpg\n")

    put("image_header", "rgb.png", png(5, 4))
    put("image_header", "gray.png", png(3, 3, gray=True))
    put("image_header", "tiny.jpg", jpeg(6, 5))
    put("image_header", "truncated.png", png(5, 4)[:-20])

    put("checkpoint_manifest", "sealed", sealed(b"PK\x03\x04 an archive", 12))
    put("checkpoint_manifest", "empty_archive", sealed(b"", 0))
    put("checkpoint_manifest", "older", b"archive" + b"\x00" * 40 + b"WSCSLCK2")

    pairs = [("tops", "bottoms"), ("tops", "tops"), ("shoes", "bottoms")]
    for protocol in range(5):
        put("type_pairs_pickle", f"protocol{protocol}", pickle.dumps(pairs, protocol=protocol))
    # Python 2's protocol 0, which pickles str with the STRING opcode.
    put("type_pairs_pickle", "python2",
        b"(lp0\n(S'tops'\np1\nS'bottoms'\np2\ntp3\na(g1\ng1\ntp4\na.")
    put("type_pairs_pickle", "bad", b"\x80\x04]\x94(\x8c\x04tops\x94c__builtin__\neval\n.")
    # Bombs the reader's bounds refuse: 64 KiB referenced 40 times through the memo, and more
    # values than it builds.
    def binunicode(s):
        return b"X" + struct.pack("<I", len(s)) + s
    put("type_pairs_pickle", "memo_text_bomb",
        b"\x80\x02]" + binunicode(b"t" * 65536) + b"q\x00h\x00\x86a" + b"h\x00h\x00\x86a" * 19 + b".")
    put("type_pairs_pickle", "memo_value_bomb",
        b"\x80\x02]" + binunicode(b"t") + b"q\x00(" + b"h\x00" * 100001 + b"e.")

    put("hglmm_features", "plain", "red dress,0.5,-1,2e-3\nshoes, black, size 9,1,2,3\n\n")
    put("hglmm_features", "released", " a b , 1 , +2 ,3 \r\nc,1,2,3\nc,1,2,3\n")
    put("hglmm_features", "bad", "a,1,2\n,1,2,3\nb,1,x,3\na,1,2,4\nd,1,2,3,4\n")
    put("hglmm_features", "long_line", "a,1,2,3\nb," + "1" * 70000 + ",2,3\n")
    put("npy_matrix", "f4", npy("<f4", False, (2, 3), struct.pack("<6f", 1, 2, 3, 4, 5, 6)))
    put("npy_matrix", "f8_fortran", npy("<f8", True, (2, 2), struct.pack("<4d", 1, 3, 2, 4)))
    put("npy_matrix", "version2", npy("<f4", False, (1, 1), struct.pack("<f", 1), version=2))
    put("npy_matrix", "bad", npy("<i8", False, (3,), b"\x00" * 24))
    put("npy_matrix", "too_wide", npy("<f4", False, (1, 65537), b"\x00" * 16))


if __name__ == "__main__":
    main()

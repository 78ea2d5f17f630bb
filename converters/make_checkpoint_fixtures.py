#!/usr/bin/env python3
"""Writes the committed PyTorch (.pth) and safetensors fixtures the Swift tests read.

    .venv/bin/python converters/make_checkpoint_fixtures.py \\
        --formats Tests/SAMFormatsTests/Fixtures --imports Tests/SAMImportTests/Fixtures \\
        --tiny reference_outputs/tiny/mobile_sam.h5

Values are closed-form, as in make_format_fixtures.py (k = the flat C-order index):

    f32   k * 0.25 - 1
    f16   k * 0.5 - 3
    bf16  k * 0.5 - 3          (exact in bfloat16 for these sizes; the readers widen it to f32)
    f64   k / 3
    i64   k * 1_000_000_007 - 5_000_000_000
    i32   k * 100_000 - 1_000_000
    u8    (k * 97 + 5) % 256
    bool  k % 3 == 0

The hostile files are written byte by byte (a small pickle assembler and zip writer below) and
are never unpickled here. The refused-global ones would, if some loader executed them, create
/tmp/samport-marker-<name>; the tests check that no such file appears.

Files in --formats:

PyTorch, written by torch.save (zip format; entries stored)
    pth_state_dict.pth        an OrderedDict with _metadata, keys in this order:
        encoder.conv.weight               f32  [4, 2, 3, 3]
        encoder.conv.bias                 f16  [4]
        encoder.norm.running_var          f64  [4]
        encoder.norm.num_batches_tracked  i64  []      value 12_345_678_901
        encoder.index                     i64  [2, 3]
        encoder.offsets                   i32  [3, 2]
        encoder.bytes                     u8   [5]
        encoder.mask                      bool [2, 2]
        encoder.proj.weight               bf16 [2, 3]
        encoder.proj.weight_t             encoder.proj.weight.t(): the same storage, [3, 2] stride (1, 3)
        encoder.scale                     an nn.Parameter, f32 [3]  (_rebuild_parameter)
        shared.whole                      one 24-element f32 storage viewed as [4, 6]
        shared.rows                       its elements 6..<18 as [2, 6] (storage offset 6)
        shared.transposed                 shared.whole.t(): [6, 4] stride (1, 6)
        shared.strided                    shared.whole[1:, ::2]: offset 6, [3, 3] stride (6, 2)
      (each tensor with the formula of its dtype over its own storage; the views with the f32
      formula of the shared storage's index offset + sum(i_d * stride_d))
    pth_state_dict_deflated.pth   the same entries rewritten with zipfile.ZIP_DEFLATED
    pth_state_dict_zip64.pth      the same entries, every size and offset in ZIP64 extra fields
                                  and a ZIP64 end record (written by write_zip below)
    pth_wrapped_model.pth     {"model": {a: f32 [2, 3], b: i64 [2]}, "optimizer": {state with
                              tensors, param_groups}, "epoch": 7, "best_iou": 0.875, ...}
    pth_wrapped_state_dict.pth  {"state_dict": {a, b, "version": 2, "note": "text"}, "epoch": 3}
    pth_deep_value.pth        {"w": f32 [2], "deep": a list nested 200_000 deep}: reads as w only
    pth_legacy.pth            torch.save(..., _use_new_zipfile_serialization=False)   -> unsupported
    pth_top_level_list.pth    torch.save([tensor])                                    -> unsupported

PyTorch, hand-made and hostile (archive name "archive")
    pth_refuse_os_system.pth        a tensor, then os.system("touch /tmp/samport-marker-os-system")
    pth_refuse_posix_system.pth     protocol 4 with FRAME and STACK_GLOBAL: posix.system(...)
    pth_refuse_builtins_exec.pth    builtins.exec("open('/tmp/samport-marker-builtins-exec', 'w')")
    pth_refuse_builtins_eval.pth    builtins.eval("__import__('os').system('touch ...builtins-eval')")
    pth_refuse_subprocess.pth       subprocess.check_output(["touch", ".../samport-marker-subprocess"])
    pth_refuse_inst.pth             the INST opcode naming os.system
    pth_local_offset_past_end.pth   archive/data/0's local header offset lies past the end
    pth_entry_size_past_end.pth     archive/data/0 claims 1 GiB of stored data
    pth_cd_past_end.pth             the central directory offset lies past the end
    pth_truncated.pth               pth_state_dict.pth cut in half
    pth_storage_short.pth           tensor "w" views 6 f32 of storage 0, which holds 20 bytes
    pth_view_past_storage.pth       tensor "w" [2, 4] on a 6-element storage
    pth_missing_storage.pth         tensor "w" on storage 7, which the archive lacks
    pth_deep_marks.pth              100_000 MARKs (deflated pickle)
    pth_deep_tuples.pth             a tuple nested 1_000_000 deep (deflated)
    pth_stack_flood.pth             2_000_000 NONEs on the stack (deflated)
    pth_memo_missing.pth            BINGET of a memo slot never written
    pth_unknown_opcode.pth          opcode 0xff
    pth_no_stop.pth                 a pickle without STOP
    pth_inflate_mismatch.pth        a deflated data.pkl longer than its declared size
    pth_declared_huge.pth           a deflated data.pkl of ~100 bytes declaring 128 MiB (ZIP64 fields)
    pth_no_data_pkl.pth             a zip with storages but no data.pkl
    pth_not_zip.pth                 512 bytes of np.random.default_rng(11).bytes(512)

safetensors
    st_tensors.safetensors    (safetensors.torch.save_file, __metadata__ {"format": "pt",
                              "source": "make_checkpoint_fixtures.py"}), each with its formula:
        conv.weight  f32 [4, 2, 3, 3]    conv.bias  f16 [4]        norm.running_var  f64 [4]
        norm.num_batches_tracked  i64 []  value 12_345_678_901     index  i64 [2, 3]
        offsets  i32 [3, 2]    bytes  u8 [5]    mask  bool [2, 2]    proj.weight  bf16 [2, 3]
        empty  f32 [0, 3]
    hand-made, each with a header as named:
    st_overlap  st_offset_past_end  st_shape_mismatch  st_header_huge  st_header_past_end
    st_unknown_dtype  st_invalid_json  st_begin_after_end  st_deep_json  st_negative_dim
    st_dims_overflow  st_offsets_not_pair  st_header_not_object  st_missing_field
    st_truncated (st_tensors cut by 5 bytes)  st_tiny (4 bytes)

Files in --imports (the committed tiny model's weights, read from --tiny with h5py):
    tiny_mobile_sam.pth           torch.save({"model": state_dict})
    tiny_mobile_sam.safetensors   safetensors.torch.save_file(state_dict)

and, with --sam2 (the committed tiny SAM 2.1 checkpoint, {"model": state_dict}), its state dict as
the other formats users convert SAM 2 from, upstream key names kept:
    tiny_sam2.safetensors         safetensors.torch.save_file(state_dict)
    tiny_sam2.h5                  h5py, one dataset per key, flat dotted names
"""
import argparse
import collections
import io
import os
import struct
import zipfile
import zlib

import h5py
import numpy as np
import torch
from safetensors.torch import save_file

MARKER = "/tmp/samport-marker-"


# ---------------------------------------------------------------- values

def formula(kind, shape):
    k = np.arange(int(np.prod(shape)), dtype=np.float64)
    if kind == "f32":
        return torch.tensor((k * 0.25 - 1).reshape(shape), dtype=torch.float32)
    if kind in ("f16", "bf16"):
        return torch.tensor((k * 0.5 - 3).reshape(shape), dtype=torch.float16 if kind == "f16" else torch.bfloat16)
    if kind == "f64":
        return torch.tensor((k / 3).reshape(shape), dtype=torch.float64)
    ki = np.arange(int(np.prod(shape)), dtype=np.int64)
    if kind == "i64":
        return torch.tensor((ki * 1_000_000_007 - 5_000_000_000).reshape(shape))
    if kind == "i32":
        return torch.tensor((ki * 100_000 - 1_000_000).reshape(shape), dtype=torch.int32)
    if kind == "u8":
        return torch.tensor(((ki * 97 + 5) % 256).reshape(shape), dtype=torch.uint8)
    if kind == "bool":
        return torch.tensor((ki % 3 == 0).reshape(shape))
    raise ValueError(kind)


def state_dict():
    sd = collections.OrderedDict()
    sd["encoder.conv.weight"] = formula("f32", (4, 2, 3, 3))
    sd["encoder.conv.bias"] = formula("f16", (4,))
    sd["encoder.norm.running_var"] = formula("f64", (4,))
    sd["encoder.norm.num_batches_tracked"] = torch.tensor(12_345_678_901)
    sd["encoder.index"] = formula("i64", (2, 3))
    sd["encoder.offsets"] = formula("i32", (3, 2))
    sd["encoder.bytes"] = formula("u8", (5,))
    sd["encoder.mask"] = formula("bool", (2, 2))
    sd["encoder.proj.weight"] = formula("bf16", (2, 3))
    sd["encoder.proj.weight_t"] = sd["encoder.proj.weight"].t()
    sd["encoder.scale"] = torch.nn.Parameter(formula("f32", (3,)))
    base = formula("f32", (24,))
    whole = base.view(4, 6)
    sd["shared.whole"] = whole
    sd["shared.rows"] = base[6:18].view(2, 6)
    sd["shared.transposed"] = whole.t()
    sd["shared.strided"] = whole[1:, ::2]
    assert sd["shared.strided"].storage_offset() == 6 and sd["shared.strided"].stride() == (6, 2)
    sd._metadata = collections.OrderedDict([("", {"version": 1}), ("encoder", {"version": 2})])
    return sd


def save(obj, path, **kwargs):
    torch.save(obj, path, **kwargs)


# ---------------------------------------------------------------- a pickle assembler

class Pickle:
    """Protocol-2 opcodes as bytes; nothing here ever unpickles."""

    def __init__(self, protocol=2):
        self.b = bytearray(b"\x80" + bytes([protocol]))

    def raw(self, data):
        self.b += data
        return self

    def string(self, s):
        data = s.encode()
        return self.raw(b"X" + struct.pack("<I", len(data)) + data)

    def short_string(self, s):
        data = s.encode()
        return self.raw(b"\x8c" + bytes([len(data)]) + data)

    def int(self, n):
        if 0 <= n < 256:
            return self.raw(b"K" + bytes([n]))
        if 0 <= n < 65536:
            return self.raw(b"M" + struct.pack("<H", n))
        if -2**31 <= n < 2**31:
            return self.raw(b"J" + struct.pack("<i", n))
        data = n.to_bytes((n.bit_length() + 8) // 8, "little", signed=True)
        return self.raw(b"\x8a" + bytes([len(data)]) + data)

    def glob(self, module, name):
        return self.raw(b"c" + module.encode() + b"\n" + name.encode() + b"\n")

    def mark(self):
        return self.raw(b"(")

    def tuple(self):
        return self.raw(b"t")

    def reduce(self):
        return self.raw(b"R")

    def tensor(self, storage_type, key, numel, offset, size, stride):
        """torch._utils._rebuild_tensor_v2(storage, offset, size, stride, False, OrderedDict())."""
        self.glob("torch._utils", "_rebuild_tensor_v2").mark()
        self.mark().string("storage").glob("torch", storage_type).string(key).string("cpu").int(numel).tuple()
        self.raw(b"Q").int(offset)
        self.mark()
        for d in size:
            self.int(d)
        self.tuple().mark()
        for s in stride:
            self.int(s)
        self.tuple().raw(b"\x89").glob("collections", "OrderedDict").raw(b")").reduce()
        return self.tuple().reduce()

    def stop(self):
        return bytes(self.b + b".")


def f32_bytes(n):
    return formula("f32", (n,)).numpy().tobytes()


# ---------------------------------------------------------------- a zip writer

def write_zip(path, entries, zip64=False, patch=None):
    """entries: (name, data, method) with method 0 (stored) or 8 (deflated). With zip64 every size
    and offset goes through ZIP64 extra fields and a ZIP64 end record. `patch(central_fields)` may
    change a central-directory entry's (name, method, crc, csize, usize, offset) before writing."""
    out = bytearray()
    central = []
    for name, data, method in entries:
        packed = data if method == 0 else zlib.compress(data, 9)[2:-4]
        crc = zlib.crc32(data)
        offset = len(out)
        nm = name.encode()
        if zip64:
            extra = struct.pack("<HHQQ", 1, 16, len(data), len(packed))
            out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 45, 0x800, method, 0, 0x21, crc,
                               0xFFFFFFFF, 0xFFFFFFFF, len(nm), len(extra)) + nm + extra
        else:
            out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0x800, method, 0, 0x21, crc,
                               len(packed), len(data), len(nm), 0) + nm
        out += packed
        central.append([name, method, crc, len(packed), len(data), offset])
    if patch:
        patch(central)
    cd_start = len(out)
    for name, method, crc, csize, usize, offset in central:
        nm = name.encode()
        if zip64:
            extra = struct.pack("<HHQQQ", 1, 24, usize, csize, offset)
            out += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 45, 45, 0x800, method, 0, 0x21, crc,
                               0xFFFFFFFF, 0xFFFFFFFF, len(nm), len(extra), 0, 0, 0, 0, 0xFFFFFFFF) + nm + extra
        else:
            out += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0x800, method, 0, 0x21, crc,
                               csize, usize, len(nm), 0, 0, 0, 0, 0, offset) + nm
    cd_size = len(out) - cd_start
    count = len(central)
    if zip64:
        end64 = len(out)
        out += struct.pack("<IQHHIIQQQQ", 0x06064B50, 44, 45, 45, 0, 0, count, count, cd_size, cd_start)
        out += struct.pack("<IIQI", 0x07064B50, 0, end64, 1)
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
    else:
        out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, cd_size, cd_start, 0)
    with open(path, "wb") as f:
        f.write(out)
    return bytes(out)


def archive(path, pickle_bytes, storages=(), method=0, **kwargs):
    entries = [("archive/data.pkl", pickle_bytes, method)]
    entries += [(f"archive/data/{key}", data, 0) for key, data in storages]
    entries += [("archive/byteorder", b"little", 0), ("archive/version", b"3\n", 0)]
    return write_zip(path, entries, **kwargs)


def one_tensor_dict(p, key="0", numel=2, size=(2,), stride=(1,)):
    """Starts {"w": <f32 tensor>, ... on the pickle; the caller adds items and SETITEMS."""
    p.raw(b"}").mark().string("w").tensor("FloatStorage", key, numel, 0, size, stride)
    return p


# ---------------------------------------------------------------- PyTorch fixtures

def make_pth(out):
    good = os.path.join(out, "pth_state_dict.pth")
    save(state_dict(), good)
    with zipfile.ZipFile(good) as source:
        items = [(info.filename, source.read(info.filename)) for info in source.infolist()]
    with zipfile.ZipFile(os.path.join(out, "pth_state_dict_deflated.pth"), "w", zipfile.ZIP_DEFLATED) as target:
        for name, data in items:
            target.writestr(name, data)
    write_zip(os.path.join(out, "pth_state_dict_zip64.pth"), [(n, d, 0) for n, d in items], zip64=True)
    for name in ("pth_state_dict.pth", "pth_state_dict_deflated.pth", "pth_state_dict_zip64.pth"):
        loaded = torch.load(os.path.join(out, name), weights_only=True)
        for key, value in state_dict().items():
            assert torch.equal(loaded[key], value), (name, key)

    small = collections.OrderedDict(a=formula("f32", (2, 3)), b=formula("i64", (2,)))
    optimizer = {"state": {0: {"step": torch.tensor(3.0), "exp_avg": torch.zeros(2, 3)}},
                 "param_groups": [{"lr": 0.001, "betas": (0.9, 0.999), "params": [0]}]}
    save({"model": small, "optimizer": optimizer, "epoch": 7, "best_iou": 0.875, "name": "fixture",
          "flag": True, "nothing": None}, os.path.join(out, "pth_wrapped_model.pth"))
    wrapped = collections.OrderedDict(small)
    wrapped["version"] = 2
    wrapped["note"] = "text"
    save({"state_dict": wrapped, "epoch": 3}, os.path.join(out, "pth_wrapped_state_dict.pth"))
    save(state_dict(), os.path.join(out, "pth_legacy.pth"), _use_new_zipfile_serialization=False)
    save([formula("f32", (2,))], os.path.join(out, "pth_top_level_list.pth"))

    # A valid state dict holding, beside its tensor, a list nested 200_000 deep.
    p = one_tensor_dict(Pickle()).string("deep")
    p.raw(b"]" * 200_000 + b"a" * 199_999)
    archive(os.path.join(out, "pth_deep_value.pth"), p.raw(b"u").stop(), [("0", f32_bytes(2))], method=8)

    make_refused(out)
    make_broken_pth(out, good)


def make_refused(out):
    storages = [("0", f32_bytes(2))]

    def refused(name, build):
        p = one_tensor_dict(Pickle()).string("payload")
        build(p)
        archive(os.path.join(out, f"pth_refuse_{name}.pth"), p.raw(b"u").stop(), storages)

    refused("os_system", lambda p: p.glob("os", "system").string(f"touch {MARKER}os-system").raw(b"\x85").reduce())
    refused("builtins_exec", lambda p: p.glob("builtins", "exec")
            .string(f"open('{MARKER}builtins-exec', 'w').close()").raw(b"\x85").reduce())
    refused("builtins_eval", lambda p: p.glob("builtins", "eval")
            .string(f"__import__('os').system('touch {MARKER}builtins-eval')").raw(b"\x85").reduce())
    refused("subprocess", lambda p: p.glob("subprocess", "check_output")
            .raw(b"]").mark().string("touch").string(f"{MARKER}subprocess").raw(b"e\x85").reduce())
    refused("inst", lambda p: p.mark().string(f"touch {MARKER}inst").raw(b"ios\nsystem\n"))

    # Protocol 4: FRAME, SHORT_BINUNICODE + MEMOIZE, STACK_GLOBAL.
    body = Pickle(4)
    body.b = bytearray()
    body.raw(b"}\x94").mark().short_string("w").raw(b"\x94")
    body.tensor("FloatStorage", "0", 2, 0, (2,), (1,))
    body.short_string("payload").short_string("posix").raw(b"\x94").short_string("system").raw(b"\x94\x93")
    body.string(f"touch {MARKER}posix-system").raw(b"\x85R" + b"u.")
    frame = b"\x80\x04\x95" + struct.pack("<Q", len(body.b)) + bytes(body.b)
    archive(os.path.join(out, "pth_refuse_posix_system.pth"), frame, storages)


def make_broken_pth(out, good):
    w = [("0", f32_bytes(6))]
    tensor6 = one_tensor_dict(Pickle(), numel=6, size=(6,)).raw(b"u").stop()

    def entry_patch(fields, name="archive/data/0"):
        """Sets central-directory fields (3 compressed size, 4 size, 5 local header offset) of `name`."""
        def patch(central):
            for row in central:
                if row[0] == name:
                    for field, value in fields.items():
                        row[field] = value
        return patch

    archive(os.path.join(out, "pth_local_offset_past_end.pth"), tensor6, w, patch=entry_patch({5: 1 << 20}))
    archive(os.path.join(out, "pth_entry_size_past_end.pth"), tensor6, w, patch=entry_patch({3: 1 << 30, 4: 1 << 30}))
    data = bytearray(archive(os.path.join(out, "pth_cd_past_end.pth"), tensor6, w))
    data[-6:-2] = struct.pack("<I", len(data) + 4096)
    with open(os.path.join(out, "pth_cd_past_end.pth"), "wb") as f:
        f.write(data)
    with open(good, "rb") as f:
        whole = f.read()
    with open(os.path.join(out, "pth_truncated.pth"), "wb") as f:
        f.write(whole[: len(whole) // 2])

    archive(os.path.join(out, "pth_storage_short.pth"), tensor6, [("0", f32_bytes(6)[:20])])
    archive(os.path.join(out, "pth_view_past_storage.pth"),
            one_tensor_dict(Pickle(), numel=6, size=(2, 4), stride=(4, 1)).raw(b"u").stop(), w)
    archive(os.path.join(out, "pth_missing_storage.pth"),
            one_tensor_dict(Pickle(), key="7", numel=6, size=(6,)).raw(b"u").stop(), w)

    archive(os.path.join(out, "pth_deep_marks.pth"), Pickle().raw(b"(" * 100_000).stop(), method=8)
    archive(os.path.join(out, "pth_deep_tuples.pth"), Pickle().raw(b")" + b"\x85" * 1_000_000).stop(), method=8)
    archive(os.path.join(out, "pth_stack_flood.pth"), Pickle().raw(b"N" * 2_000_000).stop(), method=8)
    archive(os.path.join(out, "pth_memo_missing.pth"), Pickle().raw(b"}h\x09").stop())
    archive(os.path.join(out, "pth_unknown_opcode.pth"), Pickle().raw(b"}\xff").stop())
    archive(os.path.join(out, "pth_no_stop.pth"), bytes(one_tensor_dict(Pickle()).raw(b"u").b), w)
    archive(os.path.join(out, "pth_inflate_mismatch.pth"), tensor6, w, method=8,
            patch=entry_patch({4: len(tensor6) - 10}, "archive/data.pkl"))
    archive(os.path.join(out, "pth_declared_huge.pth"), tensor6, w, method=8,
            patch=entry_patch({4: 1 << 27}, "archive/data.pkl"), zip64=True)
    write_zip(os.path.join(out, "pth_no_data_pkl.pth"), [("archive/data/0", f32_bytes(6), 0)])
    with open(os.path.join(out, "pth_not_zip.pth"), "wb") as f:
        f.write(np.random.default_rng(11).bytes(512))


# ---------------------------------------------------------------- safetensors fixtures

def make_safetensors(out):
    tensors = {
        "conv.weight": formula("f32", (4, 2, 3, 3)), "conv.bias": formula("f16", (4,)),
        "norm.running_var": formula("f64", (4,)), "norm.num_batches_tracked": torch.tensor(12_345_678_901),
        "index": formula("i64", (2, 3)), "offsets": formula("i32", (3, 2)), "bytes": formula("u8", (5,)),
        "mask": formula("bool", (2, 2)), "proj.weight": formula("bf16", (2, 3)),
        "empty": torch.zeros((0, 3), dtype=torch.float32),
    }
    good = os.path.join(out, "st_tensors.safetensors")
    save_file(tensors, good, metadata={"format": "pt", "source": "make_checkpoint_fixtures.py"})
    with open(good, "rb") as f:
        whole = f.read()
    with open(os.path.join(out, "st_truncated.safetensors"), "wb") as f:
        f.write(whole[:-5])
    with open(os.path.join(out, "st_tiny.safetensors"), "wb") as f:
        f.write(whole[:4])

    def crafted(name, header, data=f32_bytes(6), length=None):
        text = header if isinstance(header, bytes) else header.encode()
        with open(os.path.join(out, f"st_{name}.safetensors"), "wb") as f:
            f.write(struct.pack("<Q", len(text) if length is None else length) + text + data)

    def entry(dtype="F32", shape=(6,), offsets=(0, 24)):
        return '{"dtype": "%s", "shape": %s, "data_offsets": %s}' % (dtype, list(shape), list(offsets))

    crafted("overlap", '{"a": %s, "b": %s}' % (entry(shape=(4,), offsets=(0, 16)), entry(shape=(4,), offsets=(8, 24))))
    crafted("offset_past_end", '{"a": %s}' % entry(shape=(1000,), offsets=(0, 4000)))
    crafted("shape_mismatch", '{"a": %s}' % entry(shape=(2, 3), offsets=(0, 16)))
    crafted("header_huge", '{"a": %s}' % entry(), length=1 << 62)
    crafted("header_past_end", '{"a": %s}' % entry(), length=1000)
    crafted("unknown_dtype", '{"a": %s}' % entry(dtype="F8_E4M3", offsets=(0, 6)))
    crafted("invalid_json", '{"a": {"dtype": "F32", "shape": [6], "data_offsets": [0, 24]')
    crafted("begin_after_end", '{"a": %s}' % entry(offsets=(24, 0)))
    crafted("deep_json", '{"__metadata__": %s, "a": %s}' % ("[" * 5_000 + "]" * 5_000, entry()))
    crafted("negative_dim", '{"a": %s}' % entry(shape=(-1, -6)))
    crafted("dims_overflow", '{"a": %s}' % entry(shape=(1 << 62, 1 << 62)))
    crafted("offsets_not_pair", '{"a": %s}' % entry(offsets=(24,)))
    crafted("header_not_object", '[1, 2, 3]')
    crafted("missing_field", '{"a": {"dtype": "F32", "shape": [6]}}')


# ---------------------------------------------------------------- the tiny model as .pth and .safetensors

def make_tiny(out, h5_path):
    state = collections.OrderedDict()
    with h5py.File(h5_path, "r") as f:
        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                state[name.replace("/", ".")] = torch.from_numpy(np.array(obj[()]))
        f.visititems(visit)
    save({"model": state}, os.path.join(out, "tiny_mobile_sam.pth"))
    save_file(dict(state), os.path.join(out, "tiny_mobile_sam.safetensors"))


def make_sam2(out, checkpoint):
    state = torch.load(checkpoint, map_location="cpu", weights_only=True)["model"]
    save_file({k: v.contiguous() for k, v in state.items()}, os.path.join(out, "tiny_sam2.safetensors"))
    with h5py.File(os.path.join(out, "tiny_sam2.h5"), "w") as f:
        for key, value in state.items():
            f.create_dataset(key, data=value.numpy())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--formats", required=True, help="Tests/SAMFormatsTests/Fixtures")
    parser.add_argument("--imports", required=True, help="Tests/SAMImportTests/Fixtures")
    parser.add_argument("--tiny", required=True, help="reference_outputs/tiny/mobile_sam.h5")
    parser.add_argument("--sam2", help="reference_outputs/sam2_tiny/sam2.1_hiera_tiny_widths.pt")
    args = parser.parse_args()
    os.makedirs(args.formats, exist_ok=True)
    os.makedirs(args.imports, exist_ok=True)
    make_pth(args.formats)
    make_safetensors(args.formats)
    make_tiny(args.imports, args.tiny)
    if args.sam2:
        make_sam2(args.imports, args.sam2)


if __name__ == "__main__":
    main()

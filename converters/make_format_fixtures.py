#!/usr/bin/env python3
"""Writes the tiny committed fixtures that Tests/SAMFormatsTests reads.

    /work/venv/bin/python converters/make_format_fixtures.py --out Tests/SAMFormatsTests/Fixtures

Every element is closed-form, so the Swift tests restate the same formulas instead of
trusting any reader. With k = np.arange(n) the flat C-order index of an n-element tensor:

    f32   k * 0.25 - 1                       (exact in f32)
    f16   k * 0.5 - 3                        (exact in f16; negatives give bit patterns >= 0x8000)
    f64   k / 3                              (full f64 precision: Double(k) / 3 in Swift)
    i64   k * 1_000_000_007 - 5_000_000_000  (outside the int32 range)
    i32   k * 100_000 - 1_000_000
    i8    (k * 37 + 3) % 256 - 128            (both signs)
    u8    (k * 97 + 5) % 256                 (wraps around)
    bool  k % 3 == 0

Files (all in --out):

.npy (numpy's own writer)
    npy_f32.npy npy_f16.npy npy_f64.npy npy_i64.npy npy_i32.npy npy_i8.npy npy_u8.npy npy_bool.npy
                              shape (2, 3, 4), the formula of their dtype
    npy_scalar_f32.npy        shape (), value 2.5
    npy_scalar_i64.npy        shape (), value -7
    npy_empty_f32.npy         shape (0, 3)
    npy_v2_f32.npy            version 2.0 header, shape (3, 2), f32 formula
    npy_fortran_f32.npy       fortran_order True, shape (2, 3)          -> unsupported
    npy_bigendian_f32.npy     '>f4', shape (2, 3)                       -> unsupported
    npy_i16.npy               '<i2', shape (4,) (a dtype not supported) -> unsupported
    npy_truncated_f32.npy     npy_f32.npy less its last 5 bytes         -> truncated
    npy_trailing_f32.npy      npy_f32.npy plus 4 zero bytes             -> sizeMismatch
    npy_bad_magic.npy         npy_f32.npy with the magic's 'NUMPY' spelt 'NUMPX' -> corrupt

raw blob
    blob_f32_1x4x3x3.bin      36 little-endian f32, f32 formula, no header (144 bytes)

HDF5 (h5py; the same tensors flat and nested)
    hdf5_flat.h5              datasets named with dots at the root:
        encoder.layers.0.conv.weight               f32  [4, 2, 3, 3]
        encoder.layers.0.conv.bias                 f16  [4]
        encoder.layers.0.norm.running_var          f64  [4]
        encoder.layers.0.norm.num_batches_tracked  i64  []     value 12_345_678_901
        encoder.layers.1.index                     i64  [2, 3]
        encoder.layers.1.offsets                   i32  [3, 2]
        encoder.layers.1.bytes                     u8   [5]
        encoder.layers.1.mask                      bool [2, 2]
      (each with the formula of its dtype)
      root attributes:  source = "make_format_fixtures.py" (variable-length string),
                        format_version = 3 (int64), tag = b"fixed" (fixed-length string)
      attributes of encoder.layers.0.conv.weight:
                        layout = "OIHW", scale = 0.5 (f64), dims = [4, 2, 3, 3] (int64 array),
                        tag = b"fixed" (fixed-length string)
    hdf5_nested.h5            the same datasets, values and attributes at
                              /encoder/layers/0/conv/weight ... (groups instead of dots)
    hdf5_truncated.h5         hdf5_flat.h5 cut in the middle of the data of
                              encoder.layers.0.conv.weight (written last; libhdf5 puts more
                              metadata after it, so the cut loses that too and libhdf5's open
                              reports "truncated file: eof < stored_eof")
    hdf5_random.h5            512 bytes of np.random.default_rng(7).bytes(512)

ONNX (onnx helpers, opset 17 + com.microsoft 1, IR version 10)
    tiny.onnx
        producer "make_format_fixtures" "1.0", domain "ai.samport.fixtures", model_version 7,
        doc_string "tiny fixture model"
        metadata_props: author = "SAMFormatsTests", converter = "make_format_fixtures.py"
        opset_import: "" 17, "com.microsoft" 1
        inputs   image  f32 [1, 3, 4, 4]
                 points f32 [1, "num_points", 2]
                 labels f32 [1, "num_points"]
                 extra  i64 [?]   (a dim with neither value nor param)
        outputs  features      f32 [1, 2, 4, "width"]
                 scaled_points f32 [1, "num_points", 2]
        nodes (in order)
          conv0   Conv(image, conv.weight, conv.bias) -> conv_out
                  kernel_shape=[1,1] strides=[1,1] pads=[0,0,0,0] dilations=[1,1] group=1 auto_pad="NOTSET"
                  metadata_props namespace = "encoder.conv: torch.nn.Conv2d",
                                 pkg.torch.onnx.name_scopes = "['', 'encoder', 'conv']"
          const0  Constant -> const_out   value = tensor f32 [4, 4], k * 1.5 - 2
          matmul0 MatMul(conv_out, const_out) -> mm_out
          act0    LeakyRelu(mm_out) -> act_out                alpha = 0.125
          add0    Add(act_out, scalar.f32) -> features
          mul0    Mul(points, scalar.f32) -> scaled_points
        initializers
          conv.weight f32 [2, 3, 1, 1]  raw_data, f32 formula
          conv.bias   f32 [2]           float_data, [0.5, -0.5]
          raw.{f32,f16,f64,i64,i32,i8,u8,bool}    shape [2, 3], raw_data, formula of their dtype
          typed.{f32,f16,f64,i64,i32,i8,u8,bool}  shape [3, 2], typed fields, formula of their dtype:
              f32 float_data; f64 double_data; i64 int64_data;
              i32, i8, u8, bool in int32_data; f16 in int32_data as the uint16 bit pattern
          scalar.f32  f32 []     raw_data   2.5
          scalar.i64  i64 []     int64_data -7
          empty.f32   f32 [0, 3] no data at all
    external.onnx + external.onnx.data
        inputs x f32 [4, 4]; node MatMul(x, ext.weight) -> y; outputs y f32 [4, 4]
        initializers (data_location EXTERNAL, location "external.onnx.data"):
          ext.weight  f32 [4, 4]  offset 64,  length 64   f32 formula
          ext.index   i64 [3]     offset 192, length 24   i64 formula
          inline.bias f32 [4]     raw_data inside the model: f32 formula
        external.onnx.data is 256 bytes: byte b of the file is (b * 7) % 256 wherever no tensor lies.
    Bad ONNX
      truncated_40.onnx      the first 40 bytes of tiny.onnx (cut inside the `domain` string)
      truncated_half.onnx    the first len//2 bytes of tiny.onnx (cut inside the graph field)
                             (both checked not to parse)
      random.onnx            np.random.default_rng(1234).bytes(300) (checked not to parse)
      ext_past_end.onnx      ext.weight at offset 64, length 64 in ext_past_end.onnx.data of 100 bytes
      ext_absolute.onnx      ext.weight location "/etc/passwd"
      ext_dotdot.onnx        ext.weight location "../Fixtures/external.onnx.data" (exists, still refused)
      ext_missing.onnx       ext.weight location "ext_missing.onnx.data" (no such file)
      bad_tensors.onnx       a model that parses, whose initializers cannot be read:
          short.raw       f32 [2, 3]  raw_data of 20 bytes (needs 24)              -> sizeMismatch
          short.typed     f32 [2, 3]  float_data of 5 values (needs 6)             -> sizeMismatch
          ext.wrong_length f32 [4, 4] external.onnx.data @64, length 60 (needs 64) -> sizeMismatch
          int16.raw       INT16 [4]   raw_data 8 bytes (a type the reader lacks)   -> unsupported
          good.f32        f32 [2]     raw_data, f32 formula (still readable)
"""

import argparse
import os

import h5py
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OPSET = 17


# ---------------------------------------------------------------------------------------------
# The formulas (see the docstring).

def formula(dtype, shape):
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    k = np.arange(n, dtype=np.int64)
    if dtype == "f32":
        v = (k * 0.25 - 1).astype(np.float32)
    elif dtype == "f16":
        v = (k * 0.5 - 3).astype(np.float16)
    elif dtype == "f64":
        v = k.astype(np.float64) / 3
    elif dtype == "i64":
        v = k * 1_000_000_007 - 5_000_000_000
    elif dtype == "i32":
        v = (k * 100_000 - 1_000_000).astype(np.int32)
    elif dtype == "i8":
        v = ((k * 37 + 3) % 256 - 128).astype(np.int8)
    elif dtype == "u8":
        v = ((k * 97 + 5) % 256).astype(np.uint8)
    elif dtype == "bool":
        v = (k % 3 == 0)
    else:
        raise ValueError(dtype)
    return v.reshape(shape)


DTYPES = ["f32", "f16", "f64", "i64", "i32", "i8", "u8", "bool"]


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)


# ---------------------------------------------------------------------------------------------
# .npy

def make_npy(out):
    for d in DTYPES:
        np.save(os.path.join(out, f"npy_{d}.npy"), formula(d, (2, 3, 4)))
    np.save(os.path.join(out, "npy_scalar_f32.npy"), np.array(2.5, dtype=np.float32))
    np.save(os.path.join(out, "npy_scalar_i64.npy"), np.array(-7, dtype=np.int64))
    np.save(os.path.join(out, "npy_empty_f32.npy"), np.zeros((0, 3), dtype=np.float32))
    with open(os.path.join(out, "npy_v2_f32.npy"), "wb") as f:
        np.lib.format.write_array(f, formula("f32", (3, 2)), version=(2, 0))
    np.save(os.path.join(out, "npy_fortran_f32.npy"), np.asfortranarray(formula("f32", (2, 3))))
    np.save(os.path.join(out, "npy_bigendian_f32.npy"), formula("f32", (2, 3)).astype(">f4"))
    np.save(os.path.join(out, "npy_i16.npy"), np.arange(4, dtype="<i2"))

    good = open(os.path.join(out, "npy_f32.npy"), "rb").read()
    write(os.path.join(out, "npy_truncated_f32.npy"), good[:-5])
    write(os.path.join(out, "npy_trailing_f32.npy"), good + b"\0\0\0\0")
    assert good[1:6] == b"NUMPY"
    write(os.path.join(out, "npy_bad_magic.npy"), good[:5] + b"X" + good[6:])

    # Self-checks of what the docstring claims.
    assert np.load(os.path.join(out, "npy_v2_f32.npy")).shape == (3, 2)
    assert open(os.path.join(out, "npy_v2_f32.npy"), "rb").read()[6] == 2
    assert open(os.path.join(out, "npy_f32.npy"), "rb").read()[6] == 1


# ---------------------------------------------------------------------------------------------
# raw blob

def make_blob(out):
    write(os.path.join(out, "blob_f32_1x4x3x3.bin"), formula("f32", (1, 4, 3, 3)).astype("<f4").tobytes())


# ---------------------------------------------------------------------------------------------
# HDF5

H5_TENSORS = [
    # (key, dtype, shape); written in this order, so conv.weight's data is the last written.
    ("encoder.layers.0.conv.bias", "f16", (4,)),
    ("encoder.layers.0.norm.running_var", "f64", (4,)),
    ("encoder.layers.0.norm.num_batches_tracked", "i64", ()),
    ("encoder.layers.1.index", "i64", (2, 3)),
    ("encoder.layers.1.offsets", "i32", (3, 2)),
    ("encoder.layers.1.bytes", "u8", (5,)),
    ("encoder.layers.1.mask", "bool", (2, 2)),
    ("encoder.layers.0.conv.weight", "f32", (4, 2, 3, 3)),
]


def h5_value(key, dtype, shape):
    if key.endswith("num_batches_tracked"):
        return np.array(12_345_678_901, dtype=np.int64)
    return formula(dtype, shape)


def make_hdf5(out, nested):
    name = "hdf5_nested.h5" if nested else "hdf5_flat.h5"
    path = os.path.join(out, name)
    with h5py.File(path, "w", libver="earliest") as f:
        f.attrs["source"] = "make_format_fixtures.py"
        f.attrs["format_version"] = np.int64(3)
        f.attrs["tag"] = np.bytes_(b"fixed")
        for key, dtype, shape in H5_TENSORS:
            dpath = key.replace(".", "/") if nested else key
            ds = f.create_dataset(dpath, data=h5_value(key, dtype, shape))
            if key == "encoder.layers.0.conv.weight":
                ds.attrs["layout"] = "OIHW"
                ds.attrs["scale"] = np.float64(0.5)
                ds.attrs["dims"] = np.array([4, 2, 3, 3], dtype=np.int64)
                ds.attrs["tag"] = np.bytes_(b"fixed")
    with h5py.File(path, "r") as f:
        for key, dtype, shape in H5_TENSORS:
            dpath = key.replace(".", "/") if nested else key
            assert f[dpath].shape == shape
            assert f[dpath][()].tobytes() == h5_value(key, dtype, shape).tobytes()
    return path


def make_hdf5_bad(out, flat_path):
    data = open(flat_path, "rb").read()
    with h5py.File(flat_path, "r") as f:
        ds = f["encoder.layers.0.conv.weight"]
        offset = ds.id.get_offset()
        length = ds.id.get_storage_size()
    assert offset is not None and offset + length <= len(data)
    # Cut halfway through that dataset's data.
    cut = offset + length // 2
    write(os.path.join(out, "hdf5_truncated.h5"), data[:cut])
    write(os.path.join(out, "hdf5_random.h5"), np.random.default_rng(7).bytes(512))
    return offset, length, len(data), cut


# ---------------------------------------------------------------------------------------------
# ONNX

ONNX_TYPE = {
    "f32": TensorProto.FLOAT, "f16": TensorProto.FLOAT16, "f64": TensorProto.DOUBLE,
    "i64": TensorProto.INT64, "i32": TensorProto.INT32, "i8": TensorProto.INT8, "u8": TensorProto.UINT8,
    "bool": TensorProto.BOOL,
}


def raw_tensor(name, dtype, shape, values=None):
    values = formula(dtype, shape) if values is None else values
    t = numpy_helper.from_array(np.asarray(values), name)
    assert t.data_type == ONNX_TYPE[dtype] and t.HasField("raw_data") or np.asarray(values).size == 0
    return t


def typed_tensor(name, dtype, shape, values=None):
    """A TensorProto with the values in the typed field ONNX uses for `dtype` (no raw_data)."""
    values = formula(dtype, shape) if values is None else np.asarray(values)
    t = TensorProto()
    t.name = name
    t.data_type = ONNX_TYPE[dtype]
    t.dims.extend(shape)
    flat = values.reshape(-1)
    if dtype == "f32":
        t.float_data.extend(flat.astype(np.float32).tolist())
    elif dtype == "f64":
        t.double_data.extend(flat.astype(np.float64).tolist())
    elif dtype == "i64":
        t.int64_data.extend(flat.astype(np.int64).tolist())
    elif dtype == "f16":
        t.int32_data.extend(flat.astype(np.float16).view(np.uint16).astype(np.int32).tolist())
    elif dtype in ("i32", "i8", "u8", "bool"):
        t.int32_data.extend(flat.astype(np.int32).tolist())
    assert not t.HasField("raw_data")
    # onnx's own reader agrees with the formula.
    assert numpy_helper.to_array(t).tobytes() == values.tobytes(), name
    return t


def make_tiny(out):
    inputs = [
        helper.make_tensor_value_info("image", TensorProto.FLOAT, [1, 3, 4, 4]),
        helper.make_tensor_value_info("points", TensorProto.FLOAT, [1, "num_points", 2]),
        helper.make_tensor_value_info("labels", TensorProto.FLOAT, [1, "num_points"]),
        helper.make_tensor_value_info("extra", TensorProto.INT64, [None]),
    ]
    outputs = [
        helper.make_tensor_value_info("features", TensorProto.FLOAT, [1, 2, 4, "width"]),
        helper.make_tensor_value_info("scaled_points", TensorProto.FLOAT, [1, "num_points", 2]),
    ]
    conv = helper.make_node(
        "Conv", ["image", "conv.weight", "conv.bias"], ["conv_out"], name="conv0",
        kernel_shape=[1, 1], strides=[1, 1], pads=[0, 0, 0, 0], dilations=[1, 1], group=1,
        auto_pad="NOTSET")
    helper.set_metadata_props(conv, {
        "namespace": "encoder.conv: torch.nn.Conv2d",
        "pkg.torch.onnx.name_scopes": "['', 'encoder', 'conv']",
    })
    const_value = (np.arange(16) * 1.5 - 2).astype(np.float32).reshape(4, 4)
    const = helper.make_node("Constant", [], ["const_out"], name="const0",
                             value=numpy_helper.from_array(const_value, "const_value"))
    nodes = [
        conv,
        const,
        helper.make_node("MatMul", ["conv_out", "const_out"], ["mm_out"], name="matmul0"),
        helper.make_node("LeakyRelu", ["mm_out"], ["act_out"], name="act0", alpha=0.125),
        helper.make_node("Add", ["act_out", "scalar.f32"], ["features"], name="add0"),
        helper.make_node("Mul", ["points", "scalar.f32"], ["scaled_points"], name="mul0"),
    ]
    initializers = [
        raw_tensor("conv.weight", "f32", (2, 3, 1, 1)),
        typed_tensor("conv.bias", "f32", (2,), np.array([0.5, -0.5], dtype=np.float32)),
    ]
    initializers += [raw_tensor(f"raw.{d}", d, (2, 3)) for d in DTYPES]
    initializers += [typed_tensor(f"typed.{d}", d, (3, 2)) for d in DTYPES]
    initializers += [
        raw_tensor("scalar.f32", "f32", (), np.array(2.5, dtype=np.float32)),
        typed_tensor("scalar.i64", "i64", (), np.array(-7, dtype=np.int64)),
    ]
    empty = TensorProto()
    empty.name = "empty.f32"
    empty.data_type = TensorProto.FLOAT
    empty.dims.extend([0, 3])
    initializers.append(empty)

    graph = helper.make_graph(nodes, "tiny", inputs, outputs, initializers)
    model = helper.make_model(
        graph,
        opset_imports=[helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)],
        producer_name="make_format_fixtures", producer_version="1.0",
        domain="ai.samport.fixtures", model_version=7, doc_string="tiny fixture model")
    model.ir_version = 10
    helper.set_model_props(model, {"author": "SAMFormatsTests", "converter": "make_format_fixtures.py"})
    onnx.checker.check_model(model)
    path = os.path.join(out, "tiny.onnx")
    onnx.save(model, path)
    return path


def external_entry(tensor, location, offset, length):
    tensor.ClearField("raw_data")
    tensor.data_location = TensorProto.EXTERNAL
    del tensor.external_data[:]
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = tensor.external_data.add()
        entry.key = key
        entry.value = value


def make_external_model(out, name, location, data_size=256, weight_offset=64, write_data=True):
    """The model of external.onnx with ext.weight stored at `location`; writes the data file
    `name`.data (data_size bytes) when `location` is that file and write_data is set."""
    weight = raw_tensor("ext.weight", "f32", (4, 4))
    index = raw_tensor("ext.index", "i64", (3,))
    bias = raw_tensor("inline.bias", "f32", (4,))
    data = bytearray((b * 7) % 256 for b in range(data_size))
    w_bytes, i_bytes = weight.raw_data, index.raw_data
    data_name = name + ".data"
    if location == data_name:
        end = min(data_size, weight_offset + len(w_bytes))
        data[weight_offset:end] = w_bytes[: end - weight_offset]
        if data_size >= 192 + len(i_bytes):
            data[192:192 + len(i_bytes)] = i_bytes
        if write_data:
            write(os.path.join(out, data_name), bytes(data))
    external_entry(weight, location, weight_offset, len(w_bytes))
    external_entry(index, data_name if location == data_name else "external.onnx.data", 192, len(i_bytes))
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "ext.weight"], ["y"], name="matmul0")],
        "external",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 4])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])],
        [weight, index, bias])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="make_format_fixtures", producer_version="1.0")
    model.ir_version = 10
    path = os.path.join(out, name)
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    return path


def make_bad_tensors(out):
    short_raw = TensorProto(name="short.raw", data_type=TensorProto.FLOAT, dims=[2, 3],
                            raw_data=formula("f32", (5,)).tobytes())
    short_typed = TensorProto(name="short.typed", data_type=TensorProto.FLOAT, dims=[2, 3],
                              float_data=formula("f32", (5,)).tolist())
    wrong_length = TensorProto(name="ext.wrong_length", data_type=TensorProto.FLOAT, dims=[4, 4])
    external_entry(wrong_length, "external.onnx.data", 64, 60)
    int16 = TensorProto(name="int16.raw", data_type=TensorProto.INT16, dims=[4],
                        raw_data=np.array([-2, -1, 0, 1], dtype=np.int16).tobytes())
    good = raw_tensor("good.f32", "f32", (2,))
    graph = helper.make_graph(
        [helper.make_node("Identity", ["x"], ["y"], name="identity0")], "bad_tensors",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])],
        [short_raw, short_typed, wrong_length, int16, good])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    write(os.path.join(out, "bad_tensors.onnx"), model.SerializeToString())


def must_not_parse(data, what):
    try:
        m = onnx.ModelProto()
        m.ParseFromString(data)
    except Exception:
        return
    raise AssertionError(f"{what} parses as an ONNX model; pick other bytes")


def make_onnx(out):
    tiny = make_tiny(out)
    ext = make_external_model(out, "external.onnx", "external.onnx.data")
    # onnx's own loader reads the external data back to the formula.
    loaded = onnx.load(ext)
    arrays = {t.name: numpy_helper.to_array(t) for t in loaded.graph.initializer}
    assert arrays["ext.weight"].tobytes() == formula("f32", (4, 4)).tobytes()
    assert arrays["ext.index"].tobytes() == formula("i64", (3,)).tobytes()
    assert arrays["inline.bias"].tobytes() == formula("f32", (4,)).tobytes()

    data = open(tiny, "rb").read()
    # Where the graph field (field 7, wire type 2: tag 0x3a, then a varint length) lies.
    graph_size = len(onnx.ModelProto.FromString(data).graph.SerializeToString())
    varint = bytearray()
    value = graph_size
    while True:
        varint.append((value & 0x7F) | (0x80 if value > 0x7F else 0))
        value >>= 7
        if not value:
            break
    graph_start = data.index(b"\x3a" + bytes(varint))
    graph_end = graph_start + 1 + len(varint) + graph_size
    assert 40 < graph_start < len(data) // 2 < graph_end
    for n, label in ((40, "40"), (len(data) // 2, "half")):
        must_not_parse(data[:n], f"first {n} bytes of tiny.onnx")
        write(os.path.join(out, f"truncated_{label}.onnx"), data[:n])
    noise = np.random.default_rng(1234).bytes(300)
    must_not_parse(noise, "random.onnx")
    write(os.path.join(out, "random.onnx"), noise)

    make_external_model(out, "ext_past_end.onnx", "ext_past_end.onnx.data", data_size=100)
    make_external_model(out, "ext_absolute.onnx", "/etc/passwd")
    make_external_model(out, "ext_dotdot.onnx", "../Fixtures/external.onnx.data")
    make_external_model(out, "ext_missing.onnx", "ext_missing.onnx.data", write_data=False)
    assert not os.path.exists(os.path.join(out, "ext_missing.onnx.data"))
    make_bad_tensors(out)
    return len(data)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="fixtures folder (created if missing)")
    args = parser.parse_args()
    out = args.out
    os.makedirs(out, exist_ok=True)
    make_npy(out)
    make_blob(out)
    flat = make_hdf5(out, nested=False)
    make_hdf5(out, nested=True)
    offset, length, size, cut = make_hdf5_bad(out, flat)
    print(f"hdf5_flat.h5: {size} bytes, conv.weight data at {offset}..{offset + length}, truncated at {cut}")
    tiny_size = make_onnx(out)
    print(f"tiny.onnx: {tiny_size} bytes")
    total = sum(os.path.getsize(os.path.join(out, f)) for f in os.listdir(out))
    print(f"{len(os.listdir(out))} files, {total} bytes in {out}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the small seed files scripts/fuzz.sh gives libFuzzer for the structures the readers bound:
HDF5 links and storage, ONNX subgraphs and nested types. Each file is a few KB; mutations of them
reach the link, depth, chunk and external-storage checks far sooner than mutations of a plain
state dict would.

    .venv/bin/python converters/make_fuzz_seeds.py --out Fuzz/Seeds

HDF5 (h5py), in --out/HDF5:
    links.h5         hard links (a cycle to the root, a diamond), a soft link, a dangling soft link
    external-link.h5 an external link to links.h5 (refused)
    storage.h5       contiguous, compact, chunked (gzip + shuffle, a partial edge chunk), a scalar
    unwritten.h5     a chunked dataset with one of its four chunks written (refused)
    external.h5      a dataset whose bytes are in another file (refused)
    virtual.h5       a virtual dataset mapping links.h5 (refused)
    deep.h5          groups 66 deep (one past the limit) with a dataset at the bottom
    attributes.h5    a dataset and the root with string, number and list attributes

ONNX (onnx.helper), in --out/ONNX:
    if-loop.onnx     If with then/else branches, one holding a Loop whose body holds an If
    nested-types.onnx a graph input of type sequence(sequence(optional(tensor)))
    external.onnx    an initializer in external data (external.onnx.data beside it)
    constants.onnx   Constant nodes with tensor, float and int list values, a duplicated initializer name
"""
import argparse
import os

import h5py
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def hdf5_seeds(folder):
    os.makedirs(folder, exist_ok=True)
    path = lambda name: os.path.join(folder, name)
    with h5py.File(path("links.h5"), "w") as f:
        a = f.create_group("image_encoder/neck")
        a.create_dataset("0.weight", data=np.arange(8, dtype=np.float32).reshape(2, 4))
        a["up"] = f["/"]  # a cycle
        f.create_group("d0")
        f.create_group("d1")
        f["d0/a"] = f["d1"]
        f["d0/b"] = f["d1"]  # a diamond
        f["soft"] = h5py.SoftLink("/image_encoder/neck/0.weight")
        f["dangling"] = h5py.SoftLink("/nowhere")
    with h5py.File(path("external-link.h5"), "w") as f:
        f["mask_decoder"] = h5py.ExternalLink("links.h5", "/image_encoder")
    with h5py.File(path("storage.h5"), "w") as f:
        f.create_dataset("contiguous", data=np.ones((3, 5), np.float32))
        f.create_dataset("compact", data=np.float16(2.5), shape=(1,))
        f.create_dataset("chunked", data=np.arange(50, dtype=np.float32).reshape(5, 10), chunks=(2, 4),
                         compression="gzip", shuffle=True)
        f.create_dataset("counter", data=np.int64(7))
    with h5py.File(path("unwritten.h5"), "w") as f:
        partial = f.create_dataset("unwritten", shape=(64,), dtype=np.float32, chunks=(16,), compression="gzip")
        partial[0:16] = 1
    with open(path("external.bin"), "wb") as raw:
        raw.write(np.arange(16, dtype=np.float32).tobytes())
    with h5py.File(path("external.h5"), "w") as f:
        f.create_dataset("weight", shape=(16,), dtype=np.float32, external=[("external.bin", 0, 64)])
    with h5py.File(path("virtual.h5"), "w") as f:
        layout = h5py.VirtualLayout(shape=(2, 4), dtype=np.float32)
        layout[:] = h5py.VirtualSource("links.h5", "image_encoder/neck/0.weight", shape=(2, 4))
        f.create_virtual_dataset("weight", layout)
    with h5py.File(path("deep.h5"), "w") as f:
        group = f
        for _ in range(66):
            group = group.create_group("g")
        group.create_dataset("w", data=np.zeros(2, np.float32))
    with h5py.File(path("attributes.h5"), "w") as f:
        f.attrs["source"] = "make_fuzz_seeds.py"
        d = f.create_dataset("w", data=np.zeros(4, np.float32))
        d.attrs["scale"] = 0.5
        d.attrs["dims"] = [1, 2, 3]


def onnx_seeds(folder):
    os.makedirs(folder, exist_ok=True)
    path = lambda name: os.path.join(folder, name)
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])

    def branch(name, nodes=()):
        out = helper.make_tensor_value_info(name + "_out", TensorProto.FLOAT, [2])
        return helper.make_graph(list(nodes) + [helper.make_node("Identity", ["x"], [name + "_out"])], name, [], [out])

    inner_if = helper.make_node("If", ["cond"], ["inner"], then_branch=branch("t2"), else_branch=branch("e2"))
    body_out = helper.make_tensor_value_info("inner", TensorProto.FLOAT, [2])
    body = helper.make_graph([inner_if], "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []), cond], [cond, body_out])
    loop = helper.make_node("Loop", ["", "cond"], ["looped"], body=body)
    outer_if = helper.make_node("If", ["cond"], ["y"], then_branch=branch("t1", [loop]), else_branch=branch("e1"))
    weight = numpy_helper.from_array(np.arange(4, dtype=np.float32), "mask_decoder.iou_token.weight")
    graph = helper.make_graph([outer_if], "if_loop", [x, cond], [y], initializer=[weight])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path("if-loop.onnx"))

    tensor = helper.make_tensor_type_proto(TensorProto.FLOAT, [2])
    nested = helper.make_sequence_type_proto(helper.make_sequence_type_proto(helper.make_optional_type_proto(tensor)))
    seq_input = helper.make_value_info("seq", nested)
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"])], "types", [x, seq_input], [y])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path("nested-types.onnx"))

    model = helper.make_model(helper.make_graph([], "external", [], [], initializer=[
        numpy_helper.from_array(np.arange(64, dtype=np.float32).reshape(8, 8), "mask_decoder.mask_tokens.weight")]))
    onnx.save(model, path("external.onnx"), save_as_external_data=True, all_tensors_to_one_file=True,
              location="external.onnx.data", size_threshold=0)

    constant_tensor = helper.make_node("Constant", [], ["c0"], value=numpy_helper.from_array(np.ones((2, 2), np.float32)))
    constant_floats = helper.make_node("Constant", [], ["c1"], value_floats=[1.0, 2.0])
    constant_ints = helper.make_node("Constant", [], ["c2"], value_ints=[3, 4])
    first = numpy_helper.from_array(np.zeros(2, np.float32), "twice")
    second = numpy_helper.from_array(np.ones(2, np.float32), "twice")
    graph = helper.make_graph([constant_tensor, constant_floats, constant_ints], "constants", [], [], initializer=[first, second])
    # onnx.checker would refuse the duplicate name: the file is written unchecked on purpose.
    with open(path("constants.onnx"), "wb") as out:
        out.write(helper.make_model(graph).SerializeToString())


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default="Fuzz/Seeds")
    args = parser.parse_args()
    hdf5_seeds(os.path.join(args.out, "HDF5"))
    onnx_seeds(os.path.join(args.out, "ONNX"))


if __name__ == "__main__":
    main()

"""The arithmetic an exported encoder graph asks for: 2 FLOP per multiply-add of its MatMul, Gemm,
Conv, ConvTranspose and Einsum nodes. Shapes come from ONNX shape inference on the file's graph; where
that leaves a product's shapes unknown (SAM ViT's windows are padded by sizes the graph computes at
run time) and an input is given, from one onnxruntime run on it with graph optimisations off and
profiling on, whose records carry every node's input and output shapes. Elementwise work (norms,
GELU, softmax) is left out, as FLOP counts of networks usually leave it. The benchmarks divide the
count by the measured time for GFLOP/s, against `sambench fma-peak` for the share of the CPU's float32
ceiling; it counts what the exported graph computes (SAM ViT's padded windows included), not what
the native runtime skips.

    python benchmarks/onnx_flops.py ImageEncoder.onnx [INPUT.npy]   # prints GFLOP
"""
import json
import math
import os
import sys
import tempfile

import onnx
from onnx import shape_inference

PRODUCTS = ("MatMul", "Gemm", "Conv", "ConvTranspose", "Einsum")


def _static_shapes(graph):
    """Shape of every value whose dimensions inference fixed (inputs, initializers, inferred values)."""
    shapes = {}
    for value in list(graph.input) + list(graph.value_info) + list(graph.output):
        dims = value.type.tensor_type.shape.dim
        if value.type.tensor_type.HasField("shape") and all(d.HasField("dim_value") for d in dims):
            shapes[value.name] = [d.dim_value for d in dims]
    for tensor in graph.initializer:
        shapes[tensor.name] = list(tensor.dims)
    return shapes


def _attribute(node, name, default):
    for a in node.attribute:
        if a.name == name:
            return onnx.helper.get_attribute_value(a)
    return default


def _einsum_multiply_adds(equation, operands):
    """Product of every index's extent (each output element sums over the contracted indices)."""
    inputs = equation.replace(" ", "").split("->")[0].split(",")
    extent = {}
    for letters, shape in zip(inputs, operands):
        if "." in letters or len(letters) != len(shape):
            return None
        for letter, size in zip(letters, shape):
            extent[letter] = size
    return math.prod(extent.values())


def multiply_adds(node, ins, out):
    """Multiply-adds of a product node given its input shapes and output shape (None where unknown)."""
    if node.op_type == "MatMul" and ins and ins[0] and out:
        return math.prod(out) * ins[0][-1]
    if node.op_type == "Gemm" and ins and ins[0] and out:
        return math.prod(out) * (ins[0][0] if _attribute(node, "transA", 0) else ins[0][-1])
    if node.op_type == "Conv" and len(ins) > 1 and ins[1] and out:
        return math.prod(out) * math.prod(ins[1][1:])  # weight [Cout, Cin/group, kh, kw]
    if node.op_type == "ConvTranspose" and len(ins) > 1 and ins[0] and ins[1]:
        return math.prod(ins[0]) * math.prod(ins[1][1:])  # weight [Cin, Cout/group, kh, kw]
    if node.op_type == "Einsum" and ins and all(ins):
        return _einsum_multiply_adds(_attribute(node, "equation", b"").decode(), ins)
    return None


def _profiled_shapes(path, input_npy):
    """(input shapes, output shape) of every node by name, from one profiled onnxruntime run."""
    import numpy as np
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL  # nodes as the file has them
    options.enable_profiling = True
    with tempfile.TemporaryDirectory() as tmp:
        options.profile_file_prefix = os.path.join(tmp, "profile")
        session = ort.InferenceSession(path, options, providers=["CPUExecutionProvider"])
        session.run(None, {session.get_inputs()[0].name: np.load(input_npy)})
        with open(session.end_profiling()) as f:
            events = json.load(f)
    shapes = {}
    for event in events:
        args = event.get("args", {})
        if event.get("cat") == "Node" and "output_type_shape" in args:
            name = event["name"].removesuffix("_kernel_time")
            ins = [next(iter(d.values())) for d in args.get("input_type_shape", [])]
            outs = [next(iter(d.values())) for d in args["output_type_shape"]]
            shapes[name] = (ins, outs[0] if outs else None)
    return shapes


def graph_gflop(path, input_npy=None):
    """GFLOP of the graph at `path`, and how many product nodes it had to leave out (shapes unknown)."""
    model = shape_inference.infer_shapes(onnx.load(path, load_external_data=False))
    static = _static_shapes(model.graph)
    products = [node for node in model.graph.node if node.op_type in PRODUCTS]
    counts = {id(node): multiply_adds(node, [static.get(name) for name in node.input],
                                      static.get(node.output[0])) for node in products}
    if input_npy is not None and any(count is None for count in counts.values()):
        profiled = _profiled_shapes(path, input_npy)
        for node in products:
            if counts[id(node)] is None and node.name in profiled:
                ins, out = profiled[node.name]
                counts[id(node)] = multiply_adds(node, ins, out)
    known = [count for count in counts.values() if count is not None]
    return 2 * sum(known) / 1e9, len(counts) - len(known)


def throughput_sentence(gflop, unknown, ceiling_gflops, native_median_s, native_fastest_s, ort_median_s):
    """One line of a bench report: both sides' GFLOP/s over `gflop` (`graph_gflop`'s count, `unknown`
    nodes left out), with each one's share of `ceiling_gflops` (`sambench fma-peak` of the same run) when
    given."""
    def rate(seconds):
        share = f" ({100 * gflop / seconds / ceiling_gflops:.0f}% of the ceiling)" if ceiling_gflops else ""
        return f"{gflop / seconds:.0f} GFLOP/s{share}"
    left_out = f", {unknown} product nodes of unknown shape left out" if unknown else ""
    ceiling = f"; float32 ceiling (`sambench fma-peak`, same run) {ceiling_gflops:.0f} GFLOP/s" if ceiling_gflops else ""
    return (f"Throughput, the exported graph's products ({gflop:.1f} GFLOP{left_out}, benchmarks/onnx_flops.py){ceiling}: "
            f"native median {rate(native_median_s)}, fastest {rate(native_fastest_s)}; onnxruntime median {rate(ort_median_s)}.")


if __name__ == "__main__":
    gflop, unknown = graph_gflop(sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else None)
    print(f"{gflop:.1f} GFLOP" + (f" ({unknown} product nodes of unknown shape left out)" if unknown else ""))

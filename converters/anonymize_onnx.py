#!/usr/bin/env python3
"""Strip an ONNX export of every name and note that says which module a weight belongs to.

What some tools and hand edits leave: initializers and intermediate values renamed to
``t0, t1, ...`` / ``v0, v1, ...``, node names, doc strings and ``metadata_props`` (node and
model) removed. Graph inputs and outputs keep their names (callers feed them by name). With
``--shuffle SEED`` the nodes are also re-sorted into another valid topological order (what
graph optimisers such as onnxslim do), so an importer cannot rely on the exporter's order.
With ``--initializers-only`` only the initializers are renamed (``w0, w1, ...``), as a hand edit
does; node names and metadata stay.

Usage::

    venv/bin/python converters/anonymize_onnx.py IN.onnx OUT.onnx [--shuffle SEED]

The output holds its weights inline (no external data). The script checks with onnxruntime,
on random inputs of the graph's declared shapes (symbolic dims set to 1), that the anonymous
graph computes exactly what the input graph does, and exits non-zero (writing nothing) if not.
"""

from __future__ import annotations

import argparse
import random
import sys

import numpy as np
import onnx


def subgraphs(node: onnx.NodeProto) -> list[onnx.GraphProto]:
    found = []
    for attribute in node.attribute:
        if attribute.type == onnx.AttributeProto.GRAPH:
            found.append(attribute.g)
        found.extend(attribute.graphs)
    return found


def all_nodes(graph: onnx.GraphProto):
    """Every node, those of control-flow subgraphs (If, Loop) included."""
    for node in graph.node:
        yield node
        for subgraph in subgraphs(node):
            yield from all_nodes(subgraph)


def rename_initializers(model: onnx.ModelProto) -> onnx.ModelProto:
    """Only the initializers renamed (``w0, w1, ...``), as a hand edit does: nodes keep their names
    and metadata."""
    model = onnx.ModelProto.FromString(model.SerializeToString())
    renamed = {}
    for index, initializer in enumerate(model.graph.initializer):
        renamed[initializer.name] = f"w{index}"
        initializer.name = f"w{index}"
    for node in all_nodes(model.graph):
        node.input[:] = [renamed.get(name, name) for name in node.input]
    return model


def anonymize(model: onnx.ModelProto, shuffle: int | None) -> onnx.ModelProto:
    model = onnx.ModelProto.FromString(model.SerializeToString())
    graph = model.graph
    keep = {value.name for value in list(graph.input) + list(graph.output)}
    renamed: dict[str, str] = {}
    for index, initializer in enumerate(graph.initializer):
        if initializer.name not in keep:
            renamed[initializer.name] = f"t{index}"
    counter = 0
    for node in all_nodes(graph):
        for output in node.output:
            if output and output not in keep and output not in renamed:
                renamed[output] = f"v{counter}"
                counter += 1

    def rename(name: str) -> str:
        return renamed.get(name, name)

    for initializer in graph.initializer:
        initializer.name = rename(initializer.name)
        initializer.doc_string = ""
    for node in all_nodes(graph):
        node.name = ""
        node.doc_string = ""
        del node.metadata_props[:]
        node.input[:] = [rename(name) for name in node.input]
        node.output[:] = [rename(name) for name in node.output]
        for subgraph in subgraphs(node):
            for value in subgraph.output:
                value.name = rename(value.name)
            del subgraph.value_info[:]
    del graph.value_info[:]
    del model.metadata_props[:]
    model.doc_string = ""
    graph.doc_string = ""
    if shuffle is not None:
        reorder(graph, random.Random(shuffle))
    return model


def reads(node: onnx.NodeProto) -> set[str]:
    """The values a node reads, its subgraphs' reads from the enclosing graph included."""
    names = set(node.input)
    for subgraph in subgraphs(node):
        produced = {output for inner in all_nodes(subgraph) for output in inner.output}
        produced |= {init.name for init in subgraph.initializer} | {value.name for value in subgraph.input}
        for inner in all_nodes(subgraph):
            names |= {name for name in inner.input if name not in produced}
        names |= {value.name for value in subgraph.output if value.name not in produced}
    return names


def reorder(graph: onnx.GraphProto, rng: random.Random) -> None:
    """A random topological order (Kahn's algorithm picking a random ready node each step)."""
    nodes = list(graph.node)
    available = {value.name for value in graph.input} | {init.name for init in graph.initializer} | {""}
    producers = {output: index for index, node in enumerate(nodes) for output in node.output}
    waiting = [{name for name in reads(node) if name not in available and name in producers} for node in nodes]
    ready = [index for index, needs in enumerate(waiting) if not needs]
    consumers: dict[int, list[int]] = {}
    for index, needs in enumerate(waiting):
        for name in needs:
            consumers.setdefault(producers[name], []).append(index)
    order: list[int] = []
    while ready:
        index = ready.pop(rng.randrange(len(ready)))
        order.append(index)
        for consumer in consumers.get(index, []):
            waiting[consumer] -= set(nodes[index].output)
            if not waiting[consumer]:
                ready.append(consumer)
    if len(order) != len(nodes):
        sys.exit("anonymize_onnx: the graph has a cycle or reads a value nothing produces")
    del graph.node[:]
    graph.node.extend(nodes[index] for index in order)


def random_inputs(model: onnx.ModelProto) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    feeds = {}
    for value in model.graph.input:
        tensor_type = value.type.tensor_type
        dims = [d.dim_value if d.HasField("dim_value") else 1 for d in tensor_type.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor_type.elem_type)
        if value.name == "point_labels":
            feeds[value.name] = rng.integers(-1, 4, size=dims).astype(dtype)
        elif value.name == "orig_im_size":
            feeds[value.name] = np.array([480, 640], dtype=dtype)
        elif value.name == "has_mask_input":
            feeds[value.name] = np.ones(dims, dtype=dtype)
        else:
            feeds[value.name] = (rng.random(size=dims) * (1000 if "coords" in value.name else 1)).astype(dtype)
    return feeds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--shuffle", type=int, default=None, help="re-sort nodes with this seed")
    parser.add_argument("--initializers-only", action="store_true",
                        help="rename the initializers only; keep node names and metadata")
    args = parser.parse_args()
    source = onnx.load(args.input)
    result = rename_initializers(source) if args.initializers_only else anonymize(source, args.shuffle)
    onnx.checker.check_model(result)

    # Checked before anything is written: a failed check leaves no output file.
    import onnxruntime as ort
    feeds = random_inputs(source)
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    expected = ort.InferenceSession(args.input, options).run(None, feeds)
    actual = ort.InferenceSession(result.SerializeToString(), options).run(None, feeds)
    for output, a, b in zip(source.graph.output, expected, actual):
        if not np.array_equal(a, b, equal_nan=True):
            sys.exit(f"anonymize_onnx: output {output.name} differs after anonymizing")
    onnx.save(result, args.output)
    print(f"{args.output}: {len(result.graph.node)} nodes, {len(result.graph.initializer)} initializers, "
          f"same outputs as {args.input}")


if __name__ == "__main__":
    main()

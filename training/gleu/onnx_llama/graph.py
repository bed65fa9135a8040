"""A small builder of ONNX graphs: nodes, constants and names, written with `onnx.helper`.

Every value gets a unique name from a hint (`name`); constants become initializers
(`const`); `op` adds one node and returns its output's name, so a layer reads as the
arithmetic it does: `b.op("Mul", x, b.op("Reciprocal", ...))`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["OPSET", "GraphBuilder"]

OPSET = 20  # ReduceMean and ReduceSum take their axes as an input from 18


class GraphBuilder:
    """Nodes and initializers of one graph, in the order they are added."""

    def __init__(self) -> None:
        self.nodes: list = []
        self.initializers: list = []
        self._used: dict[str, int] = {}
        self._consts: dict[tuple, str] = {}

    def name(self, hint: str) -> str:
        """A name not used before: `hint`, then `hint_1`, `hint_2`..."""
        n = self._used.get(hint, 0)
        self._used[hint] = n + 1
        return hint if n == 0 else f"{hint}_{n}"

    def const(self, array: Any, hint: str = "const") -> str:
        """An initializer holding `array`; small ones (a shape, an axis, a scalar) are shared
        between the nodes that use the same value."""
        from onnx import numpy_helper

        array = np.asarray(array)
        key = None
        if array.size <= 8:
            key = (array.dtype.str, array.shape, array.tobytes())
            if key in self._consts:
                return self._consts[key]
        name = self.name(hint)
        self.initializers.append(numpy_helper.from_array(np.ascontiguousarray(array), name))
        if key is not None:
            self._consts[key] = name
        return name

    def ints(self, *values: int) -> str:
        """A 1-D int64 constant: axes, shapes, slice bounds."""
        return self.const(np.array(values, dtype=np.int64), "ints")

    def op(
        self,
        op_type: str,
        *inputs: str,
        out: str | None = None,
        domain: str = "",
        **attrs: Any,
    ) -> str:
        """Add a node of one output (named `out`, else after the op) and return that name."""
        from onnx import helper

        name = out or self.name(op_type.lower())
        self.nodes.append(helper.make_node(op_type, list(inputs), [name], domain=domain, **attrs))
        return name

    def model(self, inputs: Sequence, outputs: Sequence, doc: str = ""):
        """The onnx.ModelProto of the graph so far: `inputs`, `outputs` ValueInfoProtos."""
        from onnx import helper

        graph = helper.make_graph(
            self.nodes, "smollm2", list(inputs), list(outputs), self.initializers, doc_string=doc
        )
        opsets = [helper.make_opsetid("", OPSET), helper.make_opsetid("com.microsoft", 1)]
        return helper.make_model(graph, opset_imports=opsets, producer_name="fluency-scorer")

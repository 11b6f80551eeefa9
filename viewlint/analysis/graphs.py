"""Graph algorithms the analysis needs, over any hashable nodes (the call graph's functions)."""

from __future__ import annotations

from typing import Hashable, TypeVar

Node = TypeVar("Node", bound=Hashable)


def in_cycles(edges: dict[Node, set[Node]]) -> set[Node]:
    """The nodes on a cycle of the graph `edges` describes (node -> its successors): in the call graph, the recursive
    functions, directly or through others. Tarjan's strongly connected components, without recursion."""
    found: set[Node] = set()
    index: dict[Node, int] = {}
    low: dict[Node, int] = {}
    stack: list[Node] = []
    on_stack: set[Node] = set()
    counter = 0
    for root in sorted(edges, key=str):
        if root in index:
            continue
        work = [(root, iter(sorted(edges.get(root, ()), key=str)))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in edges:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ()), key=str))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1 or node in edges.get(node, ()):
                    found.update(component)
    return found

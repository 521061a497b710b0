"""A stand-in for the part of networkx that SplitwiseSim uses: DiGraph.

SplitwiseSim (request.py, scheduler.py, executor.py) keeps each request's
tasks and flows in a networkx.DiGraph and calls add_node, add_edge,
remove_edge, remove_node, successors, predecessors and iterates nodes. Like
networkx, nodes and neighbours keep insertion order (dicts of dicts), so
iteration order, and with it the simulation, is the same as with networkx.
Graphs compare by identity, as networkx's do.
"""


class NetworkXError(Exception):
    """Raised, as networkx does, for an edge or node that is not there."""


class _NodeView:
    def __init__(self, succ):
        self._succ = succ

    def __iter__(self):
        return iter(self._succ)

    def __len__(self):
        return len(self._succ)

    def __contains__(self, n):
        return n in self._succ

    def __call__(self):
        return self


class DiGraph:
    """A directed graph over hashable nodes, in insertion order."""

    def __init__(self):
        self._succ = {}
        self._pred = {}

    def add_node(self, n):
        if n not in self._succ:
            self._succ[n] = {}
            self._pred[n] = {}

    def add_edge(self, u, v):
        self.add_node(u)
        self.add_node(v)
        self._succ[u][v] = {}
        self._pred[v][u] = {}

    def remove_edge(self, u, v):
        try:
            del self._succ[u][v]
            del self._pred[v][u]
        except KeyError as e:
            raise NetworkXError(f"The edge {u}-{v} not in graph.") from e

    def remove_node(self, n):
        try:
            succ = self._succ.pop(n)
        except KeyError as e:
            raise NetworkXError(f"The node {n} is not in the digraph.") from e
        for v in succ:
            del self._pred[v][n]
        for u in self._pred.pop(n):
            del self._succ[u][n]

    def successors(self, n):
        try:
            return iter(self._succ[n])
        except KeyError as e:
            raise NetworkXError(f"The node {n} is not in the digraph.") from e

    def predecessors(self, n):
        try:
            return iter(self._pred[n])
        except KeyError as e:
            raise NetworkXError(f"The node {n} is not in the digraph.") from e

    @property
    def nodes(self):
        return _NodeView(self._succ)

    def __iter__(self):
        return iter(self._succ)

    def __len__(self):
        return len(self._succ)

    def __contains__(self, n):
        return n in self._succ

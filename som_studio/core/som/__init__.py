"""The self-organizing map itself: the problem a run solves, lattices, initial maps, clusters and the NumPy reference
metrics (quantization and topographic error). NumPy only."""

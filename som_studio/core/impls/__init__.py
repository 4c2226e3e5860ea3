"""The implementations and their registry: the one ``Trainer`` contract, the NumPy reference trainers, the JAX ports
(each a pure chunk program on the pieces in :mod:`som_studio.core.plans`), users' own classes, memory estimates."""

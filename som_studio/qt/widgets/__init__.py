"""Thin views fed by the run's events; each module runs alone with fake data (``python -m``)."""

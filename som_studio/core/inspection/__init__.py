"""Inspection of compiled programs: what XLA made of an implementation (``inside``) and the costs read from its
optimized HLO (``hlo``)."""

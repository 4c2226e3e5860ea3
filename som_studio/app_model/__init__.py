"""The app's state without Qt: the configuration being edited, the runs, the active run.

The Qt views (:mod:`som_studio.qt`) render these models and send them intents;
the models never import Qt, so tests drive them directly. Refusals come from
the one :func:`~som_studio.session.preflight.preflight` the session and the
CLI use.
"""

from __future__ import annotations

from som_studio.app_model.form import LABELS, FormFields, FormState, RunForm, read_data
from som_studio.app_model.live import LiveProgress
from som_studio.app_model.runs import RunList

__all__ = ["LABELS", "FormFields", "FormState", "LiveProgress", "RunForm", "RunList", "read_data"]

from som_studio.storage import SUFFIX, HistoryError, RunHistory, StoredRun  # noqa: F401  # moved to storage; goes at the merge

#!/usr/bin/env bash
# Sets up a project-local virtual environment and runs SOM Studio or its tests.
#
#   ./dev.sh app [ARGS...]   set up, then launch `som-studio ARGS...`
#   ./dev.sh test [ARGS...]  set up, check, then run the test suite (pytest ARGS...), on up to
#                            four worker processes, one per core (`-n 0` after it: one process);
#                            `-m exhaustive`: the rest of every grid of cases (tests/grids.py)
#   ./dev.sh check           set up, then only the checks: ruff check, ruff format --check, mypy
#   ./dev.sh env             set up only, print the interpreter in use
#
# Finds Python >= 3.12 itself: $PYTHON if set, else the first of python3.13,
# python3.12, python3 that runs and is new enough (pyenv shims included).
# Extra pip extras can be asked for with SOM_STUDIO_EXTRAS, e.g. "cuda13".
set -euo pipefail
cd "$(dirname "$0")"

VENV=${SOM_STUDIO_VENV:-.venv}

is_ok() {  # is_ok CMD... : runs and is Python >= 3.12
    "$@" -c 'import sys, venv; sys.exit(sys.version_info < (3, 12))' >/dev/null 2>&1
}

find_python() {
    if [ -n "${PYTHON:-}" ]; then
        if is_ok "$PYTHON"; then "$PYTHON" -c 'import sys; print(sys.executable)'; return; fi
        echo "dev.sh: PYTHON=$PYTHON is not a working Python >= 3.12 with venv" >&2; exit 1
    fi
    local name ver
    for name in python3.13 python3.12 python3; do
        if is_ok "$name"; then "$name" -c 'import sys; print(sys.executable)'; return; fi
    done
    # pyenv shims run only for a selected version: select the newest installed match.
    if command -v pyenv >/dev/null 2>&1; then
        for name in python3.13 python3.12; do
            ver=$(pyenv versions --bare 2>/dev/null | grep -E "^${name#python}(\.[0-9]+)?$" | sort -V | tail -n 1 || true)
            if [ -n "$ver" ] && PYENV_VERSION=$ver is_ok "$name"; then
                PYENV_VERSION=$ver "$name" -c 'import sys; print(sys.executable)'; return
            fi
        done
    fi
    echo "dev.sh: no Python >= 3.12 with its venv module found." >&2
    echo "  Install one (Ubuntu: sudo apt install python3-venv) or set PYTHON=/path/to/python3.12" >&2
    exit 1
}

setup() {
    local extras="test${SOM_STUDIO_EXTRAS:+,$SOM_STUDIO_EXTRAS}"
    local stamp="$VENV/.som-studio-stamp"
    local want
    want="$extras $(cat pyproject.toml | cksum)"
    if [ ! -x "$VENV/bin/python" ] || ! is_ok "$VENV/bin/python"; then
        local py
        py=$(find_python)
        echo "dev.sh: creating $VENV with $py" >&2
        rm -rf "$VENV"
        "$py" -m venv "$VENV"
    fi
    if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
        echo "dev.sh: installing som-studio[$extras] into $VENV" >&2
        "$VENV/bin/python" -m pip install -q --disable-pip-version-check --upgrade pip 2>&1 | grep -v "^WARNING: Location" >&2 || true
        "$VENV/bin/python" -m pip install -q --disable-pip-version-check -e ".[$extras]" 2>&1 | grep -v "^WARNING: Location" >&2 || true
        "$VENV/bin/python" -c 'import som_studio, jax, PySide6, pyqtgraph' || { echo "dev.sh: install failed" >&2; exit 1; }
        echo "$want" > "$stamp"
    fi
    # The package is installed editable, so pip compiled none of it. Where PYTHONDONTWRITEBYTECODE
    # is set (many containers set it), Python still reads __pycache__ but never writes it, and every
    # process (the app's run workers, the commands the tests start) compiled the whole package again:
    # 0.3-0.4 s of CPU each. Up to date, this costs under 0.1 s.
    "$VENV/bin/python" -m compileall -q som_studio >/dev/null || true
}

# The checks `test` runs before pytest; the first that finds anything stops the run
# and says which it was and how to fix it. Settings: pyproject.toml ([tool.ruff], [tool.mypy]).
step() {  # step NAME HINT CMD...
    local name=$1 hint=$2
    shift 2
    if ! "$@"; then
        echo "dev.sh: the '$name' step failed (see above). $hint" >&2
        exit 1
    fi
}

checks() {
    local t0=$SECONDS
    step "ruff check" "Many fix themselves: $VENV/bin/ruff check --fix ." "$VENV/bin/ruff" check --quiet .
    step "ruff format --check" "Format with: $VENV/bin/ruff format ." "$VENV/bin/ruff" format --check --quiet .
    step "mypy" "Types are checked as [tool.mypy] in pyproject.toml says." \
        "$VENV/bin/mypy" --no-error-summary --hide-error-context
    echo "dev.sh: ruff check, ruff format --check, mypy: clean ($((SECONDS - t0)) s)" >&2
}

# pytest-xdist: one worker per core, at most four (each holds JAX with 8 simulated devices, and
# the JAX tests use more than one thread). Tests that must not overlap share an xdist_group
# (--dist loadgroup). A worker that crashes is not replaced: the run ends, failing, and names the
# test it crashed in (pytest-xdist 3.8's loadgroup scheduler can wait forever for a replacement's
# work). Later arguments win: `./dev.sh test -n 0` runs in one process.
WORKERS=(-n auto --maxprocesses 4 --dist loadgroup --max-worker-restart 0)

cmd=${1:-app}
shift || true
case "$cmd" in
    app)  setup; exec "$VENV/bin/som-studio" "$@" ;;
    test) setup; checks; exec "$VENV/bin/python" -m pytest "${WORKERS[@]}" "$@" ;;
    check) setup; checks ;;
    env)  setup; "$VENV/bin/python" -c 'import sys; print(sys.executable, sys.version)' ;;
    *)    echo "usage: ./dev.sh app|test|check|env [ARGS...]" >&2; exit 2 ;;
esac

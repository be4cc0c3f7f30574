#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu): it installs what grading
# needs, and releases the assignment into the course directory here, so that nothing is downloaded while grading.
set -euo pipefail
cd /autograder/source
if ! command -v bwrap >/dev/null || ! /sbin/ldconfig -p | grep -q libseccomp.so.2 || ! python3 -c "import ensurepip, venv" 2>/dev/null; then
  apt-get update -qq
  apt-get install -y -qq bubblewrap libseccomp2 python3-venv python3-pip
fi
VENV=/autograder/venv
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
# requirements.txt pins every package, dependencies included: unless every pin is installed already, it is installed
# as it is (--no-deps, no resolving), then checked whole. torch's CPU build comes from PyTorch's index (PyPI's would
# pull a multi-GB CUDA build).
if ! "$VENV/bin/python" -m course.gradescope.pins requirements.txt; then
  "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps -r requirements.txt \
    --extra-index-url https://download.pytorch.org/whl/cpu
  "$VENV/bin/python" -m pip check --disable-pip-version-check
fi
source ./environment.sh
python -m course.release "$(python -c 'import json; print(json.load(open("gradescope.json"))["assignment"])')"

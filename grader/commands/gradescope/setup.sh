#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder image (Ubuntu, /autograder/source = this zip).
set -euo pipefail
apt-get update
apt-get install -y --no-install-recommends python3 python3-pip
apt-get install -y --no-install-recommends bubblewrap || true     # used where the container permits it
python3 -m pip install --no-cache-dir -r /autograder/source/requirements.txt
# Where bubblewrap cannot run, student code runs as this user, who can read neither the course nor the results.
id -u grade-student >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin grade-student

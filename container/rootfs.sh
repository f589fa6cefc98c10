#!/bin/sh
# Build the container image's system from Debian's packages into ROOT, as container/Dockerfile
# builds it, where no container runtime can run (its test: tests/unit/sandbox/test_container.py):
#     container/rootfs.sh ROOT [PROJECT]
# debootstrap (Debian's package) writes bookworm with Python 3.11 and bubblewrap; the project is
# installed into /opt/venv with pip, and the entry point goes to /usr/local/bin/grade-entrypoint.
# Needs root, debootstrap and the network to Debian's and PyPI's mirrors.
set -eu
ROOT=$1
PROJECT=${2:-$(cd "$(dirname "$0")/.." && pwd)}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
debootstrap --variant=minbase --include=python3,python3-venv,bubblewrap,ca-certificates,git \
    bookworm "$ROOT" "$MIRROR"
mkdir -p "$ROOT/opt/grader"
cp -r "$PROJECT/pyproject.toml" "$PROJECT/README.md" "$PROJECT/grader" "$ROOT/opt/grader/"
cp "$PROJECT/container/entrypoint.sh" "$ROOT/usr/local/bin/grade-entrypoint"
cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
# A network that reaches PyPI through a proxy with its own CA: pip in the root trusts the host's
# bundle too (PIP_CERT or SSL_CERT_FILE, as the host's pip does), never the root's alone.
CERT=""
CA=${PIP_CERT:-${SSL_CERT_FILE:-}}
if [ -n "$CA" ] && [ -f "$CA" ]; then
    cp "$CA" "$ROOT/etc/ssl/certs/build-ca.crt"
    CERT=PIP_CERT=/etc/ssl/certs/build-ca.crt
fi
chroot "$ROOT" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root $CERT sh -c '
    set -e
    python3 -m venv /opt/venv
    /opt/venv/bin/pip install --quiet --no-cache-dir /opt/grader
    ln -sf /opt/venv/bin/grade /usr/local/bin/grade
    useradd --create-home --uid 1000 grader'

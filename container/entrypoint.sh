#!/bin/sh
# The container's entry point: `grade` with its arguments, in the course folder mounted at /course.
# grade autograde sandboxes student code with bubblewrap and refuses to grade without it (unless
# --unsafe); a container runtime's default profile forbids the namespaces bwrap makes, so say here,
# before anything runs, which options the container needs (docs/instructors.md: "Instructors on
# macOS, Windows and servers").
set -eu
if [ "${1:-}" = "autograde" ] && ! bwrap --unshare-user-try --unshare-pid --unshare-net \
        --ro-bind / / --proc /proc --dev /dev true 2>/dev/null; then
    echo "grade (container): bubblewrap cannot make its namespaces in this container, so grade" \
         "autograde has no sandbox; run it with: docker run --security-opt seccomp=unconfined" \
         "--security-opt apparmor=unconfined --security-opt systempaths=unconfined ..." \
         "(podman: the same --security-opt flags)" >&2
fi
exec grade "$@"

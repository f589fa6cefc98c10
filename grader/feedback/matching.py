"""Which of the catalogue's mistakes a student's output matches on one call, and which of them the
call's inputs tell apart (:mod:`grader.feedback.mistakes` holds the catalogue;
:class:`grader.grading.verdicts.Verdicts` weighs what every failed check of a problem says)."""

from __future__ import annotations

from typing import Any, Callable, Mapping, Sequence, Union

import numpy as np

from grader.feedback.mismatch import Diagnosis, Evidence, Same, family, far_apart
from grader.feedback.outputs import Outputs

Prefer = Union[str, Callable[[str], bool]]
"""The checked function's own mistakes: ids starting with a prefix (``"block."``), or a predicate on
an id."""


def _preferring(prefer: Prefer) -> Callable[[str], bool]:
    if callable(prefer):
        return prefer
    return lambda mid: bool(prefer) and mid.startswith(prefer)


def unique_match(
    outputs: Outputs,
    messages: Mapping[str, str],
    got: Any,
    expected: Sequence[Any],
    same: Same,
    prefer: Prefer = "",
) -> Diagnosis | None:
    """The one mistake that ``got`` matches and that this call's inputs separate from the reference
    and from every other mistake, or None.

    A variant that an expected value matches is no candidate (it is right on these inputs). A
    matched variant that gives the same output as a variant of another mistake (``same`` either way
    round) names neither: the inputs cannot tell them apart. Members of one :func:`fit` family are
    not rivals; of several that match, the one closest to ``got`` gives the message.

    :param outputs: mistake id -> its variants' outputs on the call that produced ``got``.
    :param same: ``same(a, b)``, the check's own test of ``a`` against ``b`` (tolerance, NaN in
        place).
    :param prefer: the checked function's own mistakes (ids starting with this, e.g. ``"block."``):
        they need to be separated only from each other, not from a block around a faulty component
        that computes the same (a block is graded with the reference's components, so those cannot
        be the student's; run with the student's own, failing ones, it names nothing:
        :class:`grader.grading.verdicts.Verdicts`).
    """
    live, matched = matches(outputs, got, expected, same)
    preferred = _preferring(prefer)

    def separated(mid: str) -> bool:
        return not any(
            coincide(same, o, r) for o in matched[mid] for r in _rivals(live, mid, preferred)
        )

    found = [mid for mid in matched if separated(mid)]
    if len({family(mid) for mid in found}) != 1:
        return None
    best = min(found, key=lambda mid: min(_distance(got, o) for o in matched[mid]))
    return Diagnosis(family(best), messages[best])


def _rivals(live: Outputs, mid: str, preferred: Callable[[str], bool]) -> list:
    """The outputs ``mid`` must be told apart from: every other family's, except that the checked
    function's own mistakes (``preferred``) need not be told apart from a component's (the block
    around a faulty layernorm)."""
    return [
        o
        for other, outs in live.items()
        if family(other) != family(mid) and (preferred(other) or not preferred(mid))
        for o in outs
    ]


def evidence(
    outputs: Outputs,
    messages: Mapping[str, str],
    got: Any,
    expected: Sequence[Any],
    same: Same,
    prefer: Prefer = "",
    owners: Mapping[str, str] | None = None,
) -> Evidence:
    """What this call says of each mistake: which ``got`` matches (within the check's tolerance),
    and which of those it tells apart beyond doubt, their output here
    :data:`~grader.feedback.mismatch.FAR` tolerances from the expected value and from every rival's
    (:func:`unique_match`'s rivals). Whether a mistake is named is decided over all the failed
    checks of its problem (:class:`grader.grading.verdicts.Verdicts`): one call that cannot tell two
    mistakes apart names neither, and needs no answer of its own."""
    live, matched = matches(outputs, got, expected, same)
    preferred = _preferring(prefer)
    strong = frozenset(
        mid
        for mid, outs in matched.items()
        if any(
            all(far_apart(o, e, same) for e in expected)
            and all(far_apart(o, r, same) for r in _rivals(live, mid, preferred))
            for o in outs
        )
    )
    best: dict[str, str] = {}
    for name in {family(mid) for mid in matched}:
        members = [mid for mid in matched if family(mid) == name]
        closest = min(members, key=lambda mid: min(_distance(got, o) for o in matched[mid]))
        best[name] = messages.get(closest, "")
    return Evidence(frozenset(matched), strong, best, dict(owners or {}))


def matches(
    outputs: Outputs, got: Any, expected: Sequence[Any], same: Same
) -> tuple[Outputs, Outputs]:
    """The outputs of the mistakes that are wrong on this call (none equals an expected value), and
    of those the ones ``got`` matches."""
    live = {
        mid: [o for o in outs if not any(coincide(same, o, e) for e in expected)]
        for mid, outs in outputs.items()
    }
    matched = {mid: [o for o in outs if _safe(same, got, o)] for mid, outs in live.items()}
    return live, {mid: outs for mid, outs in matched.items() if outs}


def _distance(got: Any, out: Any) -> float:
    """How far ``got`` is from a matched output (for the best fit of a parametric mistake)."""
    try:
        with np.errstate(all="ignore"):
            gap = np.abs(np.asarray(got, dtype=np.float64) - np.asarray(out, dtype=np.float64))
        return float(np.nanmax(gap)) if gap.size and not np.isnan(gap).all() else 0.0
    except (TypeError, ValueError):
        return 0.0


def coincide(same: Same, a: Any, b: Any) -> bool:
    """``a`` and ``b`` pass the check against each other, either way round: an input cannot tell
    them apart."""
    return _safe(same, a, b) or _safe(same, b, a)


def _safe(same: Same, a: Any, b: Any) -> bool:
    try:
        return bool(same(a, b))
    except Exception:  # e.g. a dict against an array
        return False

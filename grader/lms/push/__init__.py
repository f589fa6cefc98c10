"""Pushes to a live LMS (``grade push``): Canvas through its REST API (canvasapi), LTI 1.3 AGS
scores (pylti1p3's service connector). Each takes plain data (what to send) and returns plain
:class:`~grader.lms.push.common.Outcome` rows; only the command prints. What went through is kept
in the push ledger beside the score files (:mod:`grader.lms.push.ledger`)."""

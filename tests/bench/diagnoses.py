"""`make diagnoses`: how well the catalogue of known mistakes names the faults of real-looking
submissions.

Autogrades the acceptance corpus's single-fault and correct submissions (a copy, in a temporary
folder) and prints, per submission, the diagnoses its failed tests got, then the two figures:

- single-fault submissions whose diagnosis names their fault (target: all), and how many got a
  diagnosis naming another mistake (target: none);
- diagnoses on correct submissions (target: 0).

Exits 0 when both targets are met.

    python tests/bench/diagnoses.py [--corpus ../shared/submissions]
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# The corpus's single-fault submissions -> the catalogue's id of their fault
# (solutions/mistakes.py).
FAULTS = {
    "fault_att_head_reshape": "attention.head_split",
    "fault_att_mask_diag": "attention.mask_diagonal",
    "fault_att_no_mask": "attention.no_mask",
    "fault_att_scale_dmodel": "attention.scale_d_model",
    "fault_att_softmax_nomax": "softmax.no_max",
    "fault_block_ignores_flag": "block.ignores_use_attention",
    "fault_block_post_ln": "block.post_ln",
    "fault_gelu_erf": "gelu.erf",
    "fault_gelu_typo": "gelu.constant",
    "fault_ln_axis0": "layernorm.axis",
    "fault_ln_ddof1": "layernorm.ddof1",
    "fault_ln_no_affine": "layernorm.no_affine",
    "fault_params_gpt2_dff": "params.gpt2_d_ff",
    "fault_params_no_bias": "params.no_bias",
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT.parent / "shared" / "submissions")
    args = parser.parse_args()
    expected = json.loads((args.corpus / "expected.json").read_text())["submissions"]
    chosen = {
        name: e["category"]
        for name, e in expected.items()
        if e["category"] in ("single_fault", "correct")
    }
    unmapped = sorted(n for n, c in chosen.items() if c == "single_fault" and n not in FAULTS)
    if unmapped:
        sys.exit(
            f"diagnoses: no catalogue id for {', '.join(unmapped)}: add them to FAULTS in "
            f"{__file__}"
        )
    with tempfile.TemporaryDirectory(prefix="diagnoses-") as tmp:
        for name in chosen:
            shutil.copytree(args.corpus / "submissions" / name, Path(tmp) / "subs" / name)
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "grader",
                "autograde",
                "-a",
                "the-block",
                str(Path(tmp) / "subs"),
                "--out",
                str(Path(tmp) / "out"),
                "--jobs",
                "2",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        if proc.returncode != 0:
            sys.exit(
                f"diagnoses: grade autograde failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
            )
        docs = {
            name: json.loads((Path(tmp) / "out" / f"{name}.json").read_text()) for name in chosen
        }
    named = wrong = on_correct = 0
    for name, category in sorted(chosen.items(), key=lambda item: (item[1], item[0])):
        found = collections.Counter(t["diagnosis"] for t in docs[name]["tests"] if "diagnosis" in t)
        want = FAULTS.get(name)
        if category == "correct":
            on_correct += sum(found.values())
            verdict = "ok" if not found else "DIAGNOSED"
        else:
            named += want in found
            wrong += bool(set(found) - {want})
            verdict = (
                "named"
                if want in found and len(found) == 1
                else ("OTHER TOO" if want in found else "MISSED")
            )
        shown = ", ".join(f"{mid} ×{n}" for mid, n in sorted(found.items())) or "-"
        print(f"{name:<28} {category:<13} {verdict:<10} {shown}")
    faults = sum(c == "single_fault" for c in chosen.values())
    correct = len(chosen) - faults
    print(
        f"\nsingle-fault submissions whose diagnosis names their fault: {named}/{faults} "
        f"({100 * named / faults:.0f}%); with a diagnosis naming another mistake: {wrong}"
    )
    print(f"diagnoses on correct submissions: {on_correct} (over {correct} submissions)")
    return 0 if named == faults and not wrong and not on_correct else 1


if __name__ == "__main__":
    sys.exit(main())

"""Recorded outputs: drift that is only floating-point noise says how an author avoids it."""

from __future__ import annotations

from promptdojo.checking.record import noise_hint


def diff(before: str, after: str) -> str:
    return f"--- recorded\n+++ now\n@@ -1,2 +1,2 @@\n-{before}\n+{after}\n [stdout] same line"


def test_noise_in_the_last_digits_gets_the_hint() -> None:
    hint = noise_hint(
        diff(
            "[stdout] largest difference: 2.5757174171303632e-14",
            "[stdout] largest difference: 1.199040866595169e-14",
        )
    )
    assert hint.startswith("hint: only floating-point noise differs (2.5757174171303632e-14 → ")
    assert "Print a rounded value" in hint
    assert noise_hint(diff("[text/plain] 0.30000000000000004", "[text/plain] 0.3"))


def test_a_real_change_gets_no_hint() -> None:
    assert noise_hint(diff("[text/plain] 42", "[text/plain] 48")) == ""
    assert noise_hint(diff("[stdout] loss 1.25", "[stdout] loss 1.26")) == ""
    assert noise_hint(diff("[stdout] ok: 1e-14", "[stdout] changed: 1e-14")) == ""
    assert noise_hint("--- recorded\n+++ now\n-[stdout] gone\n") == ""

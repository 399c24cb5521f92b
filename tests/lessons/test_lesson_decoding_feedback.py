"""Every exercise of the first lesson rejects its starter and realistic wrong answers, through the
lesson's own check, with a message that names a symptom with numbers and gives away neither the
formula nor the answer."""

from __future__ import annotations

import html
import re
from dataclasses import replace

import pytest

from promptdojo.checking.judge import StepRunner
from promptdojo.course import load_lesson
from promptdojo.kernel import seed_everything
from tests.conftest import REAL_LESSONS

LESSON = load_lesson(REAL_LESSONS / "decoding-kv-cache-quantization")


class Exercise:
    """One step run up to an exercise, in a real kernel, so wrong answers can meet its check."""

    def __init__(self, step: int, exercise_id: str) -> None:
        self.step = LESSON.steps[step - 1]
        self.runner = StepRunner(self.step, seed=LESSON.seed, numpy=True)
        self.exercise = self.step.exercise(exercise_id)
        assert self.exercise is not None
        seed_everything(LESSON.seed, numpy=True)
        for cell in (*self.step.setup, *self.step.cells):
            if cell.id == exercise_id:
                self.cell = cell
                break
            outcome = self.runner.run_cell(cell)
            assert outcome.status.name == "PASSED", outcome

    def message(self, code: str) -> str:
        """The check's message for ``code`` in place of the exercise (it must fail)."""
        result, _, _ = self.runner.execute(replace(self.cell, code=code), 30)
        assert result.ok, result.traceback
        verdict, _, _ = self.runner.execute(self.exercise.check, 30)
        assert not verdict.ok, f"the check accepted:\n{code}"
        assert verdict.error_type == "AssertionError", verdict.traceback
        return verdict.error_message

    def passes(self, code: str) -> bool:
        assert self.runner.execute(replace(self.cell, code=code), 30)[0].ok
        return self.runner.execute(self.exercise.check, 30)[0].ok


def symptom(message: str, forbidden: tuple[str, ...]) -> None:
    """A message with numbers in it, and none of the forbidden formula or answer fragments."""
    assert re.search(r"\d", message), message
    for fragment in forbidden:
        assert fragment not in message, (fragment, message)


SLIDER = (
    "from promptdojo.ui import slider\n\nprediction = {p}\n"
    't = slider("temperature", 0.05, 2.0, value={t}, step=0.01)\n'
    "p_the = softmax(logits, temperature=t)[0]\n"
)
CASES = {
    (1, "coldest"): (
        ("**(1/", "** (1", "0.6**"),
        [
            SLIDER.format(p=0.2, t=0.2),  # 2.4**5 = 80 taken to mean 'the' already wins at 0.2
            SLIDER.format(p=0.5, t=0.5),
            SLIDER.format(p=0.9, t=0.9),  # the probability typed as a temperature
            SLIDER.format(p=0.36, t=1.0),  # right, but the slider never confirmed it
        ],
    ),
    (1, "round-by-hand"): (
        ("np.round", "/ 0.25", "* 0.25"),
        [
            "rounded = np.round(weights, 1)\nworst = float(np.abs(rounded - weights).max())\n",
            "rounded = np.floor(weights / 0.25) * 0.25\n"
            "worst = float(np.abs(rounded - weights).max())\n",
            "rounded = np.round(weights / 0.25) * 0.25\nworst = 0.125\n",  # the bound, typed
            "rounded = np.round(weights / 0.25) * 0.25\n"
            "worst = float(np.abs(rounded - weights).mean())\n",
        ],
    ),
    (2, "ratio-at"): (
        ("** (1 / t)", "1 / t", "e**", "exp"),
        [
            "def ratio_at(r, t):\n    return r / t\n",
            "def ratio_at(r, t):\n    return r**t\n",
            "def ratio_at(r, t):\n    return np.exp(r / t)\n",
        ],
    ),
    (3, "min-p-for"): (
        ("p_max", "p_k", "/ probs", "probs["),
        [
            "def min_p_for(logits, k):\n    p = np.sort(softmax(logits))[::-1]\n"
            "    return p[k] / p[0]\n",
            "def min_p_for(logits, k):\n    return np.sort(softmax(logits))[::-1][k - 1]\n",
            "def min_p_for(logits, k):\n    x = np.sort(logits)[::-1]\n"
            "    return x[k - 1] / x[0]\n",
            "def min_p_for(logits, k):\n    p = np.sort(softmax(logits))[::-1]\n"
            "    return 0.9 * p[k - 1] / p[0]\n",
        ],
    ),
    (4, "decode-step"): (
        ("sqrt", "np.repeat", "concatenate", "h // 2", "@"),
        [
            # the attention weights, not the output
            "def decode_step(q_new, k_new, v_new, k_cache, v_cache):\n"
            "    k = np.repeat(np.concatenate([k_cache, k_new], axis=1), 2, axis=0)\n"
            "    s = q_new @ k.transpose(0, 2, 1) / np.sqrt(q_new.shape[-1])\n"
            "    w = np.exp(s - s.max(-1, keepdims=True))\n"
            "    return w / w.sum(-1, keepdims=True)\n",
            # the new value never appended: only the cached values are mixed
            "def decode_step(q_new, k_new, v_new, k_cache, v_cache):\n"
            "    k = np.repeat(np.concatenate([k_cache, k_new], axis=1), 2, axis=0)\n"
            "    s = q_new @ k.transpose(0, 2, 1) / np.sqrt(q_new.shape[-1])\n"
            "    w = np.exp(s - s.max(-1, keepdims=True))\n"
            "    w = w / w.sum(-1, keepdims=True)\n"
            "    return w[..., :-1] @ np.repeat(v_cache, 2, axis=0)\n",
            # query head h reads kv head h % 2 (np.tile) instead of h // 2
            "def decode_step(q_new, k_new, v_new, k_cache, v_cache):\n"
            "    k = np.tile(np.concatenate([k_cache, k_new], axis=1), (2, 1, 1))\n"
            "    v = np.tile(np.concatenate([v_cache, v_new], axis=1), (2, 1, 1))\n"
            "    s = q_new @ k.transpose(0, 2, 1) / np.sqrt(q_new.shape[-1])\n"
            "    w = np.exp(s - s.max(-1, keepdims=True))\n"
            "    return w / w.sum(-1, keepdims=True) @ v\n",
            # no scaling of the scores
            "def decode_step(q_new, k_new, v_new, k_cache, v_cache):\n"
            "    k = np.repeat(np.concatenate([k_cache, k_new], axis=1), 2, axis=0)\n"
            "    v = np.repeat(np.concatenate([v_cache, v_new], axis=1), 2, axis=0)\n"
            "    s = q_new @ k.transpose(0, 2, 1)\n"
            "    w = np.exp(s - s.max(-1, keepdims=True))\n"
            "    return w / w.sum(-1, keepdims=True) @ v\n",
        ],
    ),
    (5, "mla"): (
        ("70,272", "70272", "68.6", "kv_lora_rank", "576", "+ 64"),
        [
            "per_token = 2 * 61 * (512 + 64) * 2\n",  # a K and a V latent
            "per_token = 61 * (512 + 64)\n",  # bytes forgotten
            "per_token = 61 * 512 * 2\n",  # the rotary key forgotten
            "per_token = 61 * 128 * (512 + 64) * 2\n",  # once per head
        ],
    ),
    (5, "roofline"): (
        ("bandwidth /", "weight_bytes +", "* kv_per_token", "batch *"),
        [
            "def tokens_per_second(batch, context):\n"
            "    return bandwidth / (batch * (weight_bytes + context * kv_per_token))\n",
            "def tokens_per_second(batch, context):\n"
            "    return bandwidth / (weight_bytes + context * kv_per_token)\n",
            "def tokens_per_second(batch, context):\n"
            "    return batch * bandwidth / (weight_bytes + batch * context * kv_per_token)\n",
        ],
    ),
    (5, "capacity"): (
        ("0.92", "kv_cache_budget", "sessions_that_fit", "2 * 32", "//"),
        [
            "def sessions_on(gpu_bytes, bytes_per_number):\n"
            "    left = gpu_bytes - model_size(8_030_000_000, 'int4-g128') - GIB\n"
            "    return int(left // kv_cache_bytes(llama, 8_192, dtype=bytes_per_number))\n",
            "def sessions_on(gpu_bytes, bytes_per_number):\n"
            "    left = int(gpu_bytes * 0.92) - model_size(8_030_000_000, 'bf16') - GIB\n"
            "    return int(left // kv_cache_bytes(llama, 8_192, dtype=bytes_per_number))\n",
            "def sessions_on(gpu_bytes, bytes_per_number):\n"
            "    left = int(gpu_bytes * 0.92) - model_size(8_030_000_000, 'int4-g128')\n"
            "    return int(left // kv_cache_bytes(llama, 8_192, dtype=bytes_per_number))\n",
            "def sessions_on(gpu_bytes, bytes_per_number):\n"  # typed for the 4090 only
            "    return 15 if bytes_per_number == 2 else 31\n",
            "def sessions_on(gpu_bytes, bytes_per_number):\n"
            "    left = int(gpu_bytes * 0.92) - model_size(8_030_000_000, 'int4-g128') - GIB\n"
            "    return left / kv_cache_bytes(llama, 8_192, dtype=bytes_per_number)\n",
        ],
    ),
    (6, "weak-spot"): (
        ("-8", "+7", "15/16", "clipped", "opposite"),
        [
            "block = np.linspace(-1.0, 0.9, 32)\n",
            "block = np.r_[5.0, np.zeros(31)]\n",
            "block = np.linspace(-1.0, 1.0, 31)\n",
        ],
    ),
    (7, "ship"): (
        ("/ base", "should be", "quantized_ppl /", "- 1 <="),
        [
            "def ship(base_ppl, quantized_ppl, tolerance):\n"
            "    return quantized_ppl - base_ppl <= tolerance\n\n\n"
            "shippable = [s for s in schemes if ship(results['fp32'][0], results[s][0], 0.02)]\n",
            "def ship(base_ppl, quantized_ppl, tolerance):\n"
            "    return base_ppl / quantized_ppl - 1 <= tolerance\n\n\n"
            "shippable = [s for s in schemes if ship(results['fp32'][0], results[s][0], 0.02)]\n",
            "def ship(base_ppl, quantized_ppl, tolerance):\n"
            "    return (quantized_ppl / base_ppl - 1) * 100 <= tolerance\n\n\n"
            "shippable = [s for s in schemes if ship(results['fp32'][0], results[s][0], 2)]\n",
            "def ship(base_ppl, quantized_ppl, tolerance):\n"
            "    return quantized_ppl / base_ppl - 1 <= tolerance\n\n\n"
            "shippable = list(schemes)\n",
        ],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES), ids=lambda c: f"{c[0]}-{c[1]}")
def test_wrong_answers_get_a_symptom_not_the_answer(case) -> None:
    step, exercise_id = case
    forbidden, wrong = CASES[case]
    assert len(wrong) >= 3, "at least three realistic wrong answers"
    exercise = Exercise(step, exercise_id)
    messages = [exercise.message(code) for code in (exercise.cell.code, *wrong)]
    for message in messages:
        symptom(message, forbidden)
    assert exercise.passes(exercise.exercise.solution.code)


def test_feedback_is_tiered() -> None:
    """Hints lead rather than hand over the solution: no hint holds the solution's key line."""
    for step in LESSON.steps:
        for exercise in step.exercises:
            solution = [
                line.strip()
                for line in exercise.solution.code.splitlines()
                if line.strip() and not line.strip().startswith(("#", "print", "def ", "from "))
            ]
            for hint in exercise.hints:
                text = html.unescape(re.sub(r"<[^>]+>", "", hint.html))
                for line in solution:
                    assert line not in text, (exercise.id, line)

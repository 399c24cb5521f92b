"""Every exercise of the serving lesson rejects its starter and at least three realistic wrong
answers, through the lesson's own check, with a message that names a symptom with numbers and
gives away neither the mechanism's code nor the answer."""

from __future__ import annotations

import html
import re
from dataclasses import replace

import pytest

from promptdojo.checking.judge import StepRunner
from promptdojo.course import load_lesson
from promptdojo.kernel import seed_everything
from tests.conftest import REAL_LESSONS

LESSON = load_lesson(REAL_LESSONS / "serving")


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


IDLE = "def idle_share(output_lens, batch_size):\n{body}"
GROW = "def grow(table, free, num_tokens, num_new):\n{body}"
CHAIN = "def chain(tokens, salt=None):\n{body}"
ROOM = "def make_room(running, held, free, need, current):\n{body}"
ENGINE = "def engine_loop(scheduler, gpu):\n{body}"
VERIFY = "def accept(p, q, drafts, u):\n    {accept}\n\n\ndef recover(p, q):\n    {recover}\n"
RIGHT_ACCEPT = "return u * q[drafts] < p[drafts]"
RIGHT_RECOVER = "r = np.maximum(p - q, 0.0)\n    return r / r.sum()"
LOOP = (
    "    now = 0.0\n"
    "    while scheduler.has_unfinished_requests:\n"
    "        out = scheduler.schedule()\n"
    "        context = sum(r.num_computed_tokens for r in scheduler.running"
    " if r.request_id in out.num_scheduled_tokens)\n"
    "{step}"
    "    return now\n"
)

CASES = {
    (1, "idle"): (
        ("max(", "len(batch)", "used / slots", "sum("),
        [
            # one batch for the whole queue
            IDLE.format(
                body="    return 1 - sum(output_lens) / (len(output_lens) * max(output_lens))\n"
            ),
            # the last, smaller batch counted as full
            IDLE.format(
                body="    slots = used = 0\n"
                "    for i in range(0, len(output_lens), batch_size):\n"
                "        b = output_lens[i : i + batch_size]\n"
                "        slots += batch_size * max(b)\n"
                "        used += sum(b)\n"
                "    return 1 - used / slots\n"
            ),
            # the busy share, not the idle one
            IDLE.format(
                body="    slots = used = 0\n"
                "    for i in range(0, len(output_lens), batch_size):\n"
                "        b = output_lens[i : i + batch_size]\n"
                "        slots += len(b) * max(b)\n"
                "        used += sum(b)\n"
                "    return used / slots\n"
            ),
            # the mean of the batches' shares, not weighted by their slots
            IDLE.format(
                body="    shares = []\n"
                "    for i in range(0, len(output_lens), batch_size):\n"
                "        b = output_lens[i : i + batch_size]\n"
                "        shares.append(1 - sum(b) / (len(b) * max(b)))\n"
                "    return sum(shares) / len(shares)\n"
            ),
        ],
    ),
    (2, "grow"): (
        ("-(-", "// BLOCK", "len(free)", "popleft", "+ num_new"),
        [
            # a new block only per 16 new tokens, rounded down
            GROW.format(
                body="    for _ in range(num_new // BLOCK):\n"
                "        table.append(free.popleft())\n"
                "    return True\n"
            ),
            # one block too many at a block boundary
            GROW.format(
                body="    need = (num_tokens + num_new) // BLOCK + 1 - len(table)\n"
                "    if need > len(free):\n        return False\n"
                "    for _ in range(need):\n        table.append(free.popleft())\n"
                "    return True\n"
            ),
            # from the wrong end of the free list
            GROW.format(
                body="    need = -(-(num_tokens + num_new) // BLOCK) - len(table)\n"
                "    if need > len(free):\n        return False\n"
                "    for _ in range(need):\n        table.append(free.pop())\n"
                "    return True\n"
            ),
            # takes what there is before finding out it is not enough
            GROW.format(
                body="    need = -(-(num_tokens + num_new) // BLOCK) - len(table)\n"
                "    for _ in range(need):\n"
                "        if not free:\n            return False\n"
                "        table.append(free.popleft())\n"
                "    return True\n"
            ),
        ],
    ),
    (3, "chain"): (
        ("parent", "start == 0", "len(tokens) - BLOCK", "NONE_HASH"),
        [
            # full blocks, but each hashed on its own
            CHAIN.format(
                body="    return [hash_block_tokens(NONE_HASH, tokens[i : i + BLOCK])"
                " for i in range(0, len(tokens) - BLOCK + 1, BLOCK)]\n"
            ),
            # the partial last block hashed too
            CHAIN.format(
                body="    out, h = [], NONE_HASH\n"
                "    for i in range(0, len(tokens), BLOCK):\n"
                "        h = hash_block_tokens(h, tokens[i : i + BLOCK],"
                " (salt,) if salt and i == 0 else None)\n"
                "        out.append(h)\n"
                "    return out\n"
            ),
            # the salt in every block
            CHAIN.format(
                body="    out, h = [], NONE_HASH\n"
                "    for i in range(0, len(tokens) - BLOCK + 1, BLOCK):\n"
                "        h = hash_block_tokens(h, tokens[i : i + BLOCK],"
                " (salt,) if salt else None)\n"
                "        out.append(h)\n"
                "    return out\n"
            ),
        ],
    ),
    (4, "make-room"): (
        ("running.pop()", "while free < need", "if victim == current", "break"),
        [
            # the oldest first
            ROOM.format(
                body="    out = []\n    while free < need:\n        v = running.pop(0)\n"
                "        out.append(v)\n        free += held[v]\n"
                "        if v == current:\n            break\n    return out, free\n"
            ),
            # always one preemption, even with room
            ROOM.format(
                body="    out = []\n    while True:\n        v = running.pop()\n"
                "        out.append(v)\n        free += held[v]\n"
                "        if free >= need or v == current:\n            break\n"
                "    return out, free\n"
            ),
            # past the request that needed the room
            ROOM.format(
                body="    out = []\n    while free < need and running:\n        v = running.pop()\n"
                "        out.append(v)\n        free += held[v]\n    return out, free\n"
            ),
            # the victims stay in the running list
            ROOM.format(
                body="    out = []\n    for v in reversed(list(running)):\n"
                "        if free >= need:\n            break\n"
                "        out.append(v)\n        free += held[v]\n"
                "        if v == current:\n            break\n    return out, free\n"
            ),
        ],
    ),
    (5, "verify"): (
        ("p[drafts] / q", "p - q", "np.maximum", "min(1", "/ r.sum()"),
        [
            # keep a draft only where the target likes it at least as much
            VERIFY.format(accept="return p[drafts] >= q[drafts]", recover=RIGHT_RECOVER),
            # after a rejection, draw from the target itself
            VERIFY.format(accept=RIGHT_ACCEPT, recover="return p"),
            # the ratio upside down
            VERIFY.format(accept="return u < q[drafts] / p[drafts]", recover=RIGHT_RECOVER),
            # the residual not normalized
            VERIFY.format(accept=RIGHT_ACCEPT, recover="return np.maximum(p - q, 0.0)"),
        ],
    ),
    (6, "engine"): (
        ("has_unfinished_requests", "num_computed_tokens for", "now +=", "update_from_output("),
        [
            # tokens recorded before the step's time has passed
            ENGINE.format(
                body=LOOP.format(
                    step="        scheduler.update_from_output(out, now)\n"
                    "        now += gpu.step_time(out.total_num_scheduled_tokens, context)\n"
                )
            ),
            # the steps read only their new tokens
            ENGINE.format(
                body=LOOP.format(
                    step="        now += gpu.step_time(out.total_num_scheduled_tokens,"
                    " out.total_num_scheduled_tokens)\n"
                    "        scheduler.update_from_output(out, now)\n"
                )
            ),
            # no cache read at all
            ENGINE.format(
                body=LOOP.format(
                    step="        now += gpu.step_time(out.total_num_scheduled_tokens, 0)\n"
                    "        scheduler.update_from_output(out, now)\n"
                )
            ),
        ],
    ),
}


@pytest.mark.parametrize("case", sorted(CASES), ids=lambda c: f"{c[0]}-{c[1]}")
def test_wrong_answers_get_a_symptom_not_the_answer(case) -> None:
    step, exercise_id = case
    forbidden, wrong = CASES[case]
    assert len(wrong) >= 3, "at least three realistic wrong answers"
    exercise = Exercise(step, exercise_id)
    for code in (exercise.cell.code, *wrong):
        message = exercise.message(code)
        assert re.search(r"\d", message), message
        for fragment in forbidden:
            assert fragment not in message, (fragment, message)
    assert exercise.passes(exercise.exercise.solution.code)


def test_every_exercise_is_in_the_table() -> None:
    ids = {(n, e.id) for n, step in enumerate(LESSON.steps, 1) for e in step.exercises}
    assert ids == set(CASES)


def test_hints_lead_without_handing_over_the_solution() -> None:
    for step in LESSON.steps:
        for exercise in step.exercises:
            solution = [
                line.strip()
                for line in exercise.solution.code.splitlines()
                if line.strip() and not line.strip().startswith(("#", "print", "def ", "return"))
            ]
            for hint in exercise.hints:
                text = html.unescape(re.sub(r"<[^>]+>", "", hint.html))
                for line in solution:
                    assert line not in text, (exercise.id, line)

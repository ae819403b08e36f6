"""The page's closing-fence rule (Public/message/code-fence.js) against the shared cases,
Tests/fixtures/closing-fences.json, which the server's rule (LineIndex, ParleyMarkdown) is tested
against too (ClosingFenceCasesTests): the streaming tail's code view must end where the server commits
the block."""
import json
from pathlib import Path

from conftest import open_page

CASES = json.loads((Path(__file__).resolve().parent.parent / "fixtures" / "closing-fences.json").read_text())

# Each case's opening fence read by the page's own `openingFence`, then its line by `closesFence`.
RULE_JS = """
const [cases, done] = arguments;
import('/message/code-fence.js').then(({ openingFence, closesFence }) => {
  done(cases.map(({ fence, line }) => {
    const opened = openingFence(fence + '\\n');
    return opened ? closesFence(opened, line) : 'not a fence';
  }));
}, (error) => done({ error: String(error) }));
"""


def test_the_cases_cover_both_answers():
    assert len(CASES) >= 30
    assert {case["closes"] for case in CASES} == {True, False}


def test_the_pages_fence_rule_follows_the_shared_cases(browser, parley_fast):
    open_page(browser, parley_fast.base)
    answers = browser.execute_async_script(RULE_JS, CASES)
    assert isinstance(answers, list), answers
    wrong = [dict(case, page=answer) for case, answer in zip(CASES, answers) if answer != case["closes"]]
    assert not wrong, f"the page's rule differs from the shared cases: {wrong}"

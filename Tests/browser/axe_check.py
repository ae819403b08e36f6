"""axe-core accessibility checks for the browser tests. `assert_accessible(driver, label)` checks the
page as it is now in the dark and then the light colour scheme (CDP Emulation.setEmulatedMedia; nothing
else changes in between) and fails on any violation of impact serious or critical, and on any text
whose contrast axe could not decide (see UNDECIDED_CONTRAST). Each run's JSON report is saved in the
artifacts as axe-LABEL-SCHEME.json.

The engine: axe-selenium-python 2.1.6 (the newest PyPI serves) bundles axe-core 3.1.1 from 2018, which
lacks many current rules and has since-fixed false positives. axe-playwright-python 0.1.8 ships
axe-core 4.12.1 as a plain axe.min.js; only that file is read (its Python module needs playwright and
is never imported) and injected through axe-selenium-python's Axe(driver, script_url=...). Both are
pinned in the Makefile and Tests/browser/run.sh."""
import importlib.util
import json
import os
import re
from pathlib import Path

from axe_selenium_python import Axe

ARTIFACTS = Path(os.environ.get("ARTIFACTS_DIR", Path(__file__).resolve().parent / "artifacts"))
FAILING_IMPACTS = ("serious", "critical")
SCHEMES = ("dark", "light")
AXE_MAJOR = 4

# Rules switched off for every check, each with the reason. Keep this empty unless a rule of axe-core
# is wrong about this page; a real problem is fixed in Public/, not here.
DISABLED_RULES = {}

# Text whose contrast axe could not decide (its "incomplete" color-contrast nodes) fails the check
# too: the page has no background images, so an undecided contrast means a layer axe could not see
# through, such as text over or under an absolutely positioned menu (Export, the user menu) or a
# dialog, which is exactly where a colour goes wrong unnoticed. Let through only:
UNDECIDED_CONTRAST_IGNORED = (
    # An icon glyph (☰, ✕): non-text contrast (3:1, WCAG 1.4.11), which this rule does not judge.
    "Element content contains only non-text characters",
    "Element content is too short to determine if it is actual text content",
)
# ...and, judged here by what the browser paints at 3x3 points of the part not clipped away by a
# scrolling ancestor (its client area, inside its borders and scrollbars) or the viewport: text with
# no such part ("hidden": e.g. a table cell scrolled out of its table's sideways scroll, which axe
# calls partially obscured); text axe calls overlapped only when other elements cover it entirely
# (e.g. Export all under the open user menu: nobody sees it); and text axe calls partially obscured
# only when nothing covers its visible part (cut by a scroller: its visible part is on the background
# axe judged next to it). Anything else (text partly under a positioned menu or box) fails.
LET_THROUGH_WHEN = {"overlapped by another element": ("covered", "hidden"),
                    "partially obscured by another element": ("clear", "hidden")}
PAINTED_JS = """
const el = document.querySelector(arguments[0]);
if (!el) return 'missing';
let {left, top, right, bottom} = el.getBoundingClientRect();
[left, top, right, bottom] = [Math.max(left, 0), Math.max(top, 0), Math.min(right, innerWidth), Math.min(bottom, innerHeight)];
for (let up = el.parentElement; up; up = up.parentElement) {
  const style = getComputedStyle(up);
  if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
  // A scroller shows its content inside its borders and scrollbars only (its client area).
  const r = up.getBoundingClientRect();
  const [cl, ct] = [r.left + up.clientLeft, r.top + up.clientTop];
  [left, top, right, bottom] = [Math.max(left, cl), Math.max(top, ct), Math.min(right, cl + up.clientWidth), Math.min(bottom, ct + up.clientHeight)];
}
if (right - left < 2 || bottom - top < 2) return 'hidden';
let mine = 0, others = 0;
for (const fx of [0, .5, 1]) for (const fy of [0, .5, 1]) {
  const hit = document.elementFromPoint(left + 1 + fx * (right - left - 2), top + 1 + fy * (bottom - top - 2));
  if (hit && el.contains(hit)) mine++; else others++;
}
return others === 0 ? 'clear' : mine === 0 ? 'covered' : 'partly';
"""

# axe.run with every node of violations and of "incomplete" (what axe could not decide); passes and
# inapplicable rules only in summary.
RUN_JS = """
const [context, options, done] = arguments;
axe.run(context || document, options).then((results) => done({results}), (error) => done({error: String(error)}));
"""


def axe_script():
    """The path of axe-core 4's axe.min.js from the installed axe-playwright-python package, found
    without importing that package (its module imports playwright)."""
    spec = importlib.util.find_spec("axe_playwright_python")
    assert spec and spec.submodule_search_locations, (
        "axe-core 4 missing: pip install --no-deps axe-playwright-python==0.1.8 (see Tests/browser/run.sh)")
    script = Path(next(iter(spec.submodule_search_locations))) / "axe.min.js"
    assert script.is_file(), f"{script} missing"
    return str(script)


def set_color_scheme(driver, scheme):
    """Emulates prefers-color-scheme (None: back to the browser's own) and waits until the page's
    media queries see it."""
    features = [] if scheme is None else [{"name": "prefers-color-scheme", "value": scheme}]
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "", "features": features})
    if scheme is not None:
        assert driver.execute_script(
            "return matchMedia(`(prefers-color-scheme: ${arguments[0]})`).matches", scheme), scheme


def run_axe(driver, context=None, disabled_rules=()):
    """axe's results for the page as it is (axe injected when the page does not have it yet)."""
    if not driver.execute_script("return typeof window.axe === 'object'"):
        Axe(driver, script_url=axe_script()).inject()
    version = driver.execute_script("return axe.version")
    assert int(version.split(".")[0]) >= AXE_MAJOR, f"axe-core {version} injected, expected {AXE_MAJOR}.x"
    rules = {rule: {"enabled": False} for rule in (*DISABLED_RULES, *disabled_rules)}
    options = {"resultTypes": ["violations", "incomplete"], "rules": rules}
    answer = driver.execute_async_script(RUN_JS, context, options)
    assert "error" not in answer, f"axe.run failed: {answer['error']}"
    return answer["results"]


def node_details(node):
    return "; ".join(check["message"] for kind in ("any", "all", "none") for check in node[kind])


def describe(violation, nodes=None):
    lines = [f"  {violation['id']} ({violation['impact']}): {violation['help']} <{violation['helpUrl']}>"]
    for node in violation["nodes"] if nodes is None else nodes:
        lines.append(f"    {', '.join(node['target'])}: {node_details(node)}")
    return "\n".join(lines)


def undecided_contrast(driver, results):
    """The "incomplete" color-contrast nodes that fail the check (see UNDECIDED_CONTRAST_IGNORED)."""
    failing = []
    for item in results["incomplete"]:
        if item["id"] != "color-contrast":
            continue
        for node in item["nodes"]:
            details = node_details(node)
            if any(reason in details for reason in UNDECIDED_CONTRAST_IGNORED):
                continue
            wanted = [state for reason, states in LET_THROUGH_WHEN.items() if reason in details for state in states]
            if wanted and len(node["target"]) == 1 and driver.execute_script(PAINTED_JS, node["target"][0]) in wanted:
                continue
            failing.append(node)
    return failing


def assert_accessible(driver, label, context=None, disabled_rules=()):
    """Fails on any serious or critical axe violation of the current page, and on text whose contrast
    axe could not decide, in dark and in light. `label` names the state checked (it names the
    reports); `context`: a CSS selector to check only part of the page; `disabled_rules`: ids of rules
    to skip here, which the caller must justify."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    slug = re.sub(r"[^A-Za-z0-9_.-]+", "-", label).strip("-")
    failures = []
    try:
        for scheme in SCHEMES:
            set_color_scheme(driver, scheme)
            results = run_axe(driver, context, disabled_rules)
            (ARTIFACTS / f"axe-{slug}-{scheme}.json").write_text(json.dumps(results, indent=1))
            violations = results["violations"]
            for violation in violations:
                print(f"[axe] {label}, {scheme}:\n{describe(violation)}")
            undecided = [f"{item['id']} ({len(item['nodes'])})" for item in results["incomplete"]]
            if undecided:
                print(f"[axe] {label}, {scheme}: left undecided (see the report): {', '.join(undecided)}")
            failures += [f"{scheme}:\n{describe(v)}" for v in violations if v["impact"] in FAILING_IMPACTS]
            contrast = undecided_contrast(driver, results)
            if contrast:
                item = next(i for i in results["incomplete"] if i["id"] == "color-contrast")
                failures.append(f"{scheme}, contrast axe could not decide:\n{describe(item, contrast)}")
    finally:
        set_color_scheme(driver, None)
    assert not failures, f"axe: serious or critical violations on {label}:\n" + "\n".join(failures)

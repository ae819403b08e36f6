"""axe-core accessibility checks for the browser tests (PyPI axe-selenium-python, which bundles
axe-core's axe.min.js). `assert_accessible(driver, label)` checks the page as it is now in the dark and
then the light colour scheme (CDP Emulation.setEmulatedMedia; nothing else changes in between) and
fails on any violation of impact serious or critical. Each run's JSON report is saved in the
artifacts as axe-LABEL-SCHEME.json."""
import json
import os
import re
from pathlib import Path

from axe_selenium_python import Axe

ARTIFACTS = Path(os.environ.get("ARTIFACTS_DIR", Path(__file__).resolve().parent / "artifacts"))
FAILING_IMPACTS = ("serious", "critical")
SCHEMES = ("dark", "light")

# Rules switched off for every check, each with the reason. Keep this empty unless a rule of the
# bundled (old) axe-core is wrong about this page; a real problem is fixed in Public/, not here.
DISABLED_RULES = {}

# The bundled axe-core 3.1.1 takes autocomplete="off" (and "on") as a field's purpose, and so flags
# <input type=search autocomplete=off> as "inappropriate for this type of input". The HTML standard
# allows the states on and off on every field, and current axe-core accepts them before looking
# at the purpose. Rather than switch the rule off (it still checks every real purpose, such as
# username or new-password), this teaches the old check the two states for every input type.
AUTOCOMPLETE_STATE_TYPES = ["text", "search", "url", "tel", "email", "password", "number", "date", "month",
                            "week", "time", "datetime-local", "range", "color"]
CONFIGURE_JS = """
axe.configure({checks: [{id: 'autocomplete-appropriate', options: {on: arguments[0], off: arguments[0]}}]});
"""

# axe.run with every node of violations and of "incomplete" (what axe could not decide, e.g. a colour
# behind an image: worth a look in the report); passes and inapplicable rules only in summary.
RUN_JS = """
const [context, options, done] = arguments;
axe.run(context || document, options).then((results) => done({results}), (error) => done({error: String(error)}));
"""


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
        Axe(driver).inject()
        driver.execute_script(CONFIGURE_JS, AUTOCOMPLETE_STATE_TYPES)
    rules = {rule: {"enabled": False} for rule in (*DISABLED_RULES, *disabled_rules)}
    options = {"resultTypes": ["violations", "incomplete"], "rules": rules}
    answer = driver.execute_async_script(RUN_JS, context, options)
    assert "error" not in answer, f"axe.run failed: {answer['error']}"
    return answer["results"]


def describe(violation):
    lines = [f"  {violation['id']} ({violation['impact']}): {violation['help']} <{violation['helpUrl']}>"]
    for node in violation["nodes"]:
        details = "; ".join(check["message"] for kind in ("any", "all", "none") for check in node[kind])
        lines.append(f"    {', '.join(node['target'])}: {details}")
    return "\n".join(lines)


def assert_accessible(driver, label, context=None, disabled_rules=()):
    """Fails on any serious or critical axe violation of the current page, in dark and in light.
    `label` names the state checked (it names the reports); `context`: a CSS selector to check only
    part of the page; `disabled_rules`: ids of rules to skip here, which the caller must justify."""
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
    finally:
        set_color_scheme(driver, None)
    assert not failures, f"axe: serious or critical violations on {label}:\n" + "\n".join(failures)

"""Issue 11 on the page: an open code fence streams as a code block (monospace, framed, labelled,
its lines as text), appended as `tail_append` arrives without re-laying out the whole block, and
replaced by the committed block without a jump; the script per frame stays under 16 ms; the final
DOM is the server's HTML."""
import threading

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select

from conftest import last_assistant_id, open_page, screenshot, send_message, wait_idle, wait_until

LINES = 300


def code_lines(count):
    return [f"def step_{n}(x):  # <b>{n}</b> & more\n" if n % 3 == 0 else f"    return x * {n}\n"
            for n in range(count)]


def code_answer(count=LINES):
    """Intro, a fenced Python block of `count` lines, a closing sentence; and the chunks in which
    the fake upstream sends it: about 12 bytes each, the closing fence in its own chunk."""
    opening = "Here is the code:\n\n```python\n"
    body = "".join(code_lines(count))
    closing = "```\n\nThat is all.\n"
    chunks = [opening] + [body[i:i + 12] for i in range(0, len(body), 12)]
    return opening + body + closing, chunks, chunks + [closing]


def start_code_answer(browser, parley_fake, fake_upstream, chunk_delay=0.0, gate=None):
    text, before_fence, chunks = code_answer()
    fake_upstream.mode = "ok"
    fake_upstream.answer = chunks
    fake_upstream.chunk_delay = chunk_delay
    if gate is not None:
        fake_upstream.answer_gate = gate
        fake_upstream.answer_gate_index = len(before_fence)
    open_page(browser, parley_fake.base)
    Select(browser.find_element(By.ID, "model")).select_by_value("openai:fake")
    return text


# What one message shows of its streaming code view.
CODE_VIEW_JS = """
const el = document.querySelector(`#message-list .message[data-id="${arguments[0]}"]`);
if (!el) return null;
const box = el.querySelector('.message-tail-code');
if (!box) return {box: false};
const pre = box.querySelector('pre');
const codes = pre.querySelectorAll('.code-chunk > code');
const rect = box.getBoundingClientRect();
return {box: true, language: box.querySelector('.codeblock-language').textContent,
        classNames: [...new Set(Array.from(codes, (code) => code.className))], text: pre.textContent,
        chunks: pre.querySelectorAll(':scope > .code-chunk').length,
        elements: pre.querySelectorAll('*').length - 2 * codes.length,
        font: getComputedStyle(codes[0]).fontFamily, tailHidden: el.querySelector('.message-tail').hidden,
        top: rect.top - el.querySelector('.message-body').getBoundingClientRect().top, height: rect.height};
"""

# The committed code block of a finished message, measured the same way.
COMMITTED_JS = """
const el = document.querySelector(`#message-list .message[data-id="${arguments[0]}"]`);
const box = el.querySelector('.message-blocks .codeblock');
const rect = box.getBoundingClientRect();
return {top: rect.top - el.querySelector('.message-body').getBoundingClientRect().top, height: rect.height,
        text: box.querySelector('pre > code').textContent, tailCode: !!el.querySelector('.message-tail-code')};
"""


def test_an_open_code_fence_is_shown_as_code_before_it_closes(browser, parley_fake, fake_upstream, artifacts):
    gate = threading.Event()
    try:
        start_code_answer(browser, parley_fake, fake_upstream, gate=gate)
        send_message(browser, "Write me a long function")
        answer_id = last_assistant_id(browser)
        expected = "".join(code_lines(LINES))
        view = wait_until(lambda: (lambda v: v if v and v.get("box") and v["text"] == expected else None)(
            browser.execute_script(CODE_VIEW_JS, answer_id)), timeout=30, message="all lines in the code view")
        assert view["language"] == "python"
        assert view["classNames"] == ["language-python"]
        assert "monospace" in view["font"]
        assert view["elements"] == 0, "the lines are text, never HTML"
        assert view["chunks"] == -(-LINES // 64), "appended in chunks of 64 lines"
        assert view["tailHidden"], "the raw tail is not shown next to the code"
        streaming_box = browser.find_element(By.CSS_SELECTOR, ".message-tail-code")
        assert streaming_box.find_element(By.CSS_SELECTOR, "button[aria-label='Copy python code']")
        screenshot(browser, artifacts, "code-streaming")
        gate.set()
        wait_idle(browser)
        committed = browser.execute_script(COMMITTED_JS, answer_id)
        assert not committed["tailCode"]
        assert committed["text"] == expected
        # The committed block takes the streaming one's place and size: no jump.
        assert abs(committed["top"] - view["top"]) <= 1, (committed, view)
        assert abs(committed["height"] - view["height"]) <= 1, (committed, view)
        screenshot(browser, artifacts, "code-committed")
    finally:
        gate.set()
        fake_upstream.reset()


# Times the handlers of the events that stream the block (`block`, `tail`, `tail_append`; not the
# opening snapshot or the closing `done`) and adds the times up per animation frame.
FRAME_TIMER_JS = """
const timing = window.__scriptPerFrame = {frames: [], current: 0, events: 0, codeSeen: 0};
const native = EventSource.prototype.addEventListener;
const streaming = new Set(['block', 'tail', 'tail_append']);
EventSource.prototype.addEventListener = function (type, listener, options) {
  if (!streaming.has(type)) return native.call(this, type, listener, options);
  const timed = function (event) {
    const start = performance.now();
    try { return listener.call(this, event); } finally {
      timing.current += performance.now() - start;
      timing.events += 1;
      if (document.querySelector('.message-tail-code .code-chunk')) timing.codeSeen += 1;
    }
  };
  return native.call(this, type, timed, options);
};
const tick = () => {
  if (timing.current > 0) timing.frames.push(timing.current);
  timing.current = 0;
  if (!timing.stopped) requestAnimationFrame(tick);
};
requestAnimationFrame(tick);
"""


def test_the_page_stays_responsive_while_a_code_block_streams(browser, parley_fake, fake_upstream):
    try:
        start_code_answer(browser, parley_fake, fake_upstream, chunk_delay=0.004)
        browser.execute_script(FRAME_TIMER_JS)
        send_message(browser, "Stream a long function")
        wait_idle(browser, timeout=60)
        timing = browser.execute_script(
            "const t = window.__scriptPerFrame; t.stopped = true; if (t.current > 0) t.frames.push(t.current);"
            "return {frames: t.frames, events: t.events, codeSeen: t.codeSeen};")
        frames = sorted(timing["frames"])
        print(f"[frames] {timing['events']} events in {len(frames)} frames; script per frame: median "
              f"{frames[len(frames) // 2]:.2f} ms, max {frames[-1]:.2f} ms")
        assert timing["codeSeen"] > 100, "the block streamed as code"
        # Wall-clock time: on a shared, loaded machine the browser is sometimes descheduled in the
        # middle of a handler, so one frame in a hundred may be over.
        over = [frame for frame in frames if frame >= 16]
        assert len(over) <= max(1, len(frames) // 100), f"frames with 16 ms of script or more: {over}"
        assert frames[len(frames) // 2] < 4
    finally:
        fake_upstream.reset()


# The message's blocks as shown, against the stored HTML given the same treatment (code frames,
# link targets) by the page's own module. Syntax highlighting is left out on both sides: a worker adds
# its spans to the page's code some time after the block is committed (on a loaded machine, before
# this script runs), and the stored copy is never in the page to be highlighted.
FINAL_DOM_JS = """
const [id, html, done] = arguments;
const plain = (root) => {
  for (const code of root.querySelectorAll('code')) {
    code.textContent = code.textContent;
    code.classList.remove('hljs');
    if (code.classList.length === 0) code.removeAttribute('class');
    delete code.dataset.highlight;
  }
  return root;
};
import('/message/view.js').then(({ enhance }) => {
  const el = document.querySelector(`#message-list .message[data-id="${id}"]`);
  const blocks = plain(el.querySelector('.message-blocks').cloneNode(true));
  const shown = Array.from(blocks.children, (block) => block.classList.contains('block') ? block.innerHTML : block.outerHTML);
  const stored = document.createElement('template');
  stored.innerHTML = html;
  enhance(stored.content);
  const holder = document.createElement('div');
  holder.append(stored.content);
  plain(holder);
  done({shown: shown.join(''), stored: holder.innerHTML, tail: el.querySelector('.message-tail').hidden,
        tailCode: !!el.querySelector('.message-tail-code')});
}, (error) => done({error: String(error)}));
"""


def test_the_final_dom_equals_the_servers_html(browser, parley_fake, fake_upstream):
    try:
        text = start_code_answer(browser, parley_fake, fake_upstream)
        send_message(browser, "Code, then a sentence")
        answer_id = last_assistant_id(browser)
        wait_idle(browser)
        stored = parley_fake.api("GET", f"/api/messages/{answer_id}")
        assert stored["content"] == text
        result = browser.execute_async_script(FINAL_DOM_JS, answer_id, stored["html"])
        assert "error" not in result, result
        assert result["tail"] and not result["tailCode"], result
        assert result["shown"] == result["stored"]
    finally:
        fake_upstream.reset()


# The tail view's rules, run on a message element made by the page's own module (no server reply):
# what each sequence of `tail` / `tail_append` shows.
TAIL_CASES_JS = """
const done = arguments[arguments.length - 1];
import('/message/view.js').then((view) => {
  const results = {};
  const show = (el) => {
    const box = el.querySelector('.message-tail-code');
    const tail = el.querySelector('.message-tail');
    return box ? {code: box.querySelector('pre').textContent, language: box.querySelector('.codeblock-language').textContent,
                  chunks: box.querySelectorAll('.code-chunk').length, tailHidden: tail.hidden}
               : {raw: tail.hidden ? null : tail.textContent};
  };
  const run = (name, steps) => {
    const el = view.createMessageElement({id: name, role: 'assistant', status: 'streaming'});
    document.body.append(el);
    for (const [kind, text] of steps) {
      if (kind === 'set') view.setTail(el, text);
      else if (kind === 'append') view.appendTail(el, text);
      else view.putBlock(el, 0, '<pre><code>x\\n</code></pre>\\n');
    }
    results[name] = show(el);
    el.remove();
  };
  run('open', [['set', '\\n```js\\n'], ['append', 'a<b>\\n'], ['append', '  x']]);
  run('closed', [['set', '\\n```js\\n'], ['append', 'a\\n'], ['append', '``'], ['append', '`\\nAfter']]);
  run('indented', [['set', '  ~~~~\\n  a\\n   b\\nc\\n    d\\n']]);
  run('inline code', [['set', '``` a`b\\nx\\n']]);
  run('paragraph first', [['set', 'para\\n```\\nx\\n']]);
  run('pending', [['set', '``'], ['append', '`py\\n1\\n']]);
  run('chunks', [['set', '```\\n'], ['append', Array.from({length: 130}, (_, i) => `${i}\\n`).join('')]]);
  run('crlf', [['set', '```\\r\\na\\r'], ['append', '\\nb\\r\\n']]);
  run('committed', [['set', '```\\nx\\n'], ['block']]);
  done(results);
}, (error) => done({error: String(error)}));
"""


def test_the_tail_view_follows_the_fence_rules(browser, parley_fast):
    open_page(browser, parley_fast.base)
    results = browser.execute_async_script(TAIL_CASES_JS)
    assert "error" not in results, results
    assert results["open"] == {"code": "a<b>\n", "language": "js", "chunks": 1, "tailHidden": True}, \
        "complete lines only, as text"
    assert results["closed"] == {"raw": "\n```js\na\n```\nAfter"}, "a closing fence turns it back to raw text"
    assert results["indented"]["code"] == "a\n b\nc\n  d\n", "the fence's indentation is taken off"
    assert results["indented"]["language"] == "text"
    assert results["inline code"] == {"raw": "``` a`b\nx\n"}
    assert results["paragraph first"] == {"raw": "para\n```\nx\n"}
    assert results["pending"]["code"] == "1\n" and results["pending"]["language"] == "py"
    assert results["chunks"]["code"] == "".join(f"{i}\n" for i in range(130))
    assert results["chunks"]["chunks"] == 3
    assert results["crlf"]["code"] == "a\nb\n"
    assert results["committed"] == {"raw": None}, "a committed block ends the code view"

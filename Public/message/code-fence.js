// CommonMark's fenced code block rules (spec 0.30, section 4.5) as the streaming tail needs them: does
// the tail open a fence, and does a line close it. Pure functions of text: no DOM. The closing rule
// must stay the server's (`LineIndex.isClosingFence`, ParleyMarkdown); Tests/fixtures/closing-fences.json
// holds the cases both sides are tested against (ClosingFenceCasesTests, test_fence_rule.py).

/** Blank lines, then an opening fence: up to 3 spaces, 3+ backticks or tildes, the info string. */
const OPENING_FENCE = /^(?:[ \t]*\n)*( {0,3})(`{3,}|~{3,})([^\n]*)\n/;

/**
 * The fence `text` opens (after blank lines), once its first line is complete: `{ indent, character,
 * length, info, end }` (`end`: where the code starts), or null. A backtick fence's info string has no
 * backtick (` ``` a`b ` is inline code, not a fence).
 */
export function openingFence(text) {
  const match = OPENING_FENCE.exec(text);
  if (!match || (match[2][0] === '`' && match[3].includes('`'))) return null;
  return { indent: match[1].length, character: match[2][0], length: match[2].length, info: match[3], end: match[0].length };
}

/** Whether `line` (without its line ending) closes `fence`: up to 3 spaces, at least as many of the
 *  fence's character, then only spaces and tabs (no info string). */
export function closesFence(fence, line) {
  let index = 0;
  while (index < 3 && line[index] === ' ') index += 1;
  let run = 0;
  while (line[index + run] === fence.character) run += 1;
  if (run < fence.length) return false;
  return /^[ \t]*$/.test(line.slice(index + run));
}

/** The fence's language: the first word of its info string ('' when none). */
export function fenceLanguage(fence) {
  return fence.info.trim().split(/\s/)[0] || '';
}

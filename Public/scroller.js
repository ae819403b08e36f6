// The message view's scrolling: pinned to the bottom until the person scrolls up, then a "Jump to
// latest" button instead of moving under them.

/** Within this many pixels of the bottom the view counts as pinned. */
const PIN_THRESHOLD_PX = 48;

export class Scroller {
  /** `messages` scrolls, `list` grows, `jump` is the button; `onJump` runs after a jump. */
  constructor({ messages, list, jump, onJump }) {
    this.messages = messages;
    this.jump = jump;
    this.pinned = true;
    this.stickScheduled = false;
    messages.addEventListener('scroll', () => {
      this.measure();
      if (this.pinned) jump.hidden = true;
    }, { passive: true });
    // Whatever changes the list's height (a streamed block, a late layout of a long branch), a pinned
    // view follows it; this runs after layout, so it costs no extra forced reflow.
    new ResizeObserver(() => {
      if (this.pinned) messages.scrollTop = messages.scrollHeight;
    }).observe(list);
    jump.addEventListener('click', () => {
      this.bottomNow();
      onJump();
    });
  }

  distanceFromBottom() {
    return this.messages.scrollHeight - this.messages.scrollTop - this.messages.clientHeight;
  }

  /** Re-reads whether the view is pinned from where it is now. */
  measure() {
    this.pinned = this.distanceFromBottom() < PIN_THRESHOLD_PX;
  }

  /** Once per frame: follows the bottom when pinned, otherwise offers the jump. */
  stick() {
    if (this.stickScheduled) return;
    this.stickScheduled = true;
    requestAnimationFrame(() => {
      this.stickScheduled = false;
      if (this.pinned) this.messages.scrollTop = this.messages.scrollHeight;
      else this.jump.hidden = false;
    });
  }

  bottomNow() {
    this.pinned = true;
    this.jump.hidden = true;
    this.messages.scrollTop = this.messages.scrollHeight;
  }
}

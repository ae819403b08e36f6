// The message view's scrolling: pinned to the bottom until the person scrolls up, then a "Jump to
// latest" button instead of moving under them. Only the person's own scrolling (wheel, touch, scroll
// keys, the scrollbar, a text selection, moving the focus) unpins the view: a scroll the layout
// caused (a block committed, a reflow) never does, since it says nothing about where the person wants
// to be. A scroll while nothing changes size and nobody scrolls is a script's deliberate one
// (scrollIntoView) and is measured; the page's own (a found message, a version) call measure().

/** Within this many pixels of the bottom the view counts as pinned. */
const PIN_THRESHOLD_PX = 48;
/** How long after a wheel turn, key or touch its scroll events still count as the person's (a smooth
 *  or momentum scroll goes on after the event); each such scroll event extends it by SCROLL_TAIL_MS. */
const INTENT_MS = 600;
const SCROLL_TAIL_MS = 200;
/** Keys that scroll the view up, and those that may scroll it either way. */
const UP_KEYS = new Set(['ArrowUp', 'PageUp', 'Home']);
const SCROLL_KEYS = new Set(['ArrowDown', 'PageDown', 'End', ' ']);

export class Scroller {
  /** `messages` scrolls, `list` grows, `jump` is the button; `onJump` runs after a jump. */
  constructor({ messages, list, jump, onJump }) {
    this.messages = messages;
    this.jump = jump;
    this.pinned = true;
    this.stickScheduled = false;
    this.intentUntil = 0; // until then, scroll events are the person's
    // The list changed size in the last frame: a scroll event now (dispatched at the next frame's start,
    // before its animation callbacks) is the layout's doing, such as scroll anchoring.
    this.layoutMoved = false;
    this.holding = false; // a pointer is pressed in the view (the scrollbar, a text selection)
    this.touchY = null;
    messages.addEventListener('scroll', () => this.scrolled(), { passive: true });
    messages.addEventListener('wheel', (event) => {
      this.userScroll(event.deltaY < 0 && !this.scrolledInside(event.target));
    }, { passive: true });
    messages.addEventListener('keydown', (event) => {
      if (event.defaultPrevented || event.altKey || event.ctrlKey || event.metaKey) return;
      if (event.target.closest('input, textarea, select, [contenteditable]')) return;
      const up = UP_KEYS.has(event.key) || (event.key === ' ' && event.shiftKey);
      if (up || SCROLL_KEYS.has(event.key)) this.userScroll(up);
    });
    messages.addEventListener('touchstart', (event) => {
      this.touchY = event.touches[0] ? event.touches[0].clientY : null;
      this.userScroll(false);
    }, { passive: true });
    messages.addEventListener('touchmove', (event) => {
      const y = event.touches[0] ? event.touches[0].clientY : null;
      // The finger moving down drags the content down: the view goes up.
      this.userScroll(y !== null && this.touchY !== null && y > this.touchY);
      this.touchY = y;
    }, { passive: true });
    // A press held in the view: dragging the scrollbar, or selecting text past the edge (the browser
    // scrolls as the pointer leaves the view). Either is the person's scrolling.
    messages.addEventListener('pointerdown', () => {
      this.holding = true;
      this.userScroll(false);
    });
    window.addEventListener('pointerup', () => {
      if (!this.holding) return;
      this.holding = false;
      this.userScroll(false);
    });
    // Moving the focus (Tab, a link's target) scrolls the focused element into view.
    messages.addEventListener('focusin', () => this.userScroll(false));
    // Whatever changes the list's height (a streamed block, a late layout of a long branch), a pinned
    // view follows it; this runs after layout, so it costs no extra forced reflow.
    new ResizeObserver(() => {
      if (!this.layoutMoved) {
        this.layoutMoved = true;
        requestAnimationFrame(() => { this.layoutMoved = false; });
      }
      if (this.pinned) messages.scrollTop = messages.scrollHeight;
    }).observe(list);
    jump.addEventListener('click', () => {
      this.bottomNow();
      onJump();
    });
  }

  /** The person is scrolling: `up` unpins at once (before a frame could pull the view back down). */
  userScroll(up) {
    this.intentUntil = performance.now() + INTENT_MS;
    if (up && this.messages.scrollTop > 0) {
      this.pinned = false;
      this.jump.hidden = false;
    }
  }

  /** Whether a wheel turn up over `target` scrolls a box inside the view (the reasoning box) rather
   *  than the view itself. */
  scrolledInside(target) {
    for (let node = target; node && node !== this.messages; node = node.parentElement) {
      if (node.scrollHeight <= node.clientHeight) continue;
      const style = getComputedStyle(node);
      if (!/auto|scroll/.test(style.overflowY)) continue;
      // It scrolls up itself, or it keeps the wheel at its top (overscroll-behavior: contain).
      if (node.scrollTop > 0 || style.overscrollBehaviorY !== 'auto') return true;
    }
    return false;
  }

  scrolled() {
    const now = performance.now();
    if (this.holding || now < this.intentUntil) {
      this.intentUntil = Math.max(this.intentUntil, now + SCROLL_TAIL_MS);
      this.measure();
    } else if (this.layoutMoved) {
      // Moved while the list changed size: the layout did it, not the person; a pinned view stays
      // at the bottom.
      if (this.pinned && this.distanceFromBottom() > 0) this.stick();
    } else {
      // Nothing moving and nobody scrolling: a script's deliberate scroll (scrollIntoView).
      this.measure();
    }
    if (this.pinned) this.jump.hidden = true;
  }

  distanceFromBottom() {
    return this.messages.scrollHeight - this.messages.scrollTop - this.messages.clientHeight;
  }

  /** Re-reads whether the view is pinned from where it is now (after the person's or the page's own
   *  deliberate scroll, such as showing a version). */
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

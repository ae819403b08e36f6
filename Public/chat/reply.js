// Stream handling, a part of the controller (app.js): following the reply this tab shows running
// (live.js carries its events), applying each event to the model, then drawing it in the message
// list; announcing how it ended; and stopping it.
import { Api } from '../transport/api.js';
import { showError, clearError, errorText, setStatusText } from '../message/view.js';

const FINISHED_WORDS = { complete: 'The answer is complete.', stopped: 'The answer was stopped.',
  failed: 'The answer failed.', interrupted: 'The answer was interrupted.',
  awaiting_approval: 'The answer waits for your decision on a tool call.' };

/** `regenerate(id)` is the Retry of a failed answer; `finished()` runs when a followed reply ends (the
 *  conversation's totals changed). Returns `follow(id)`, `stop()` and `showServerError(message)`. */
export function replyFollower({
  model, messages, composer, scroller, live, announce, describe, regenerate, surfaces, finished = () => {},
}) {
  function showServerError(message) {
    const el = messages.elementFor(message.id);
    if (!el) return;
    showError(el, errorText(message.error), message.role === 'assistant' ? () => regenerate(message.id) : null);
  }

  function follow(messageId) {
    model.follow(messageId);
    messages.markStreaming(messageId);
    live.open(messageId, sinkFor(messageId));
    announce('The assistant is answering.');
    composer.showStreaming(true);
  }

  function sinkFor(messageId) {
    return {
      onEvent(name, data) {
        const el = messages.elementFor(messageId);
        const message = model.messages.get(messageId);
        if (!el || !message) return;
        switch (name) {
          case 'snapshot':
            model.applySnapshot(message, data);
            messages.showSnapshot(el, message, data);
            break;
          case 'reasoning': // not announced: the live region says "answering" once, not every token of thought
          case 'block':
          case 'tail':
          case 'tail_append':
          case 'tail_html':
            messages.showPiece(el, name, data);
            break;
          case 'tool_call':
          case 'tool_call_delta':
          case 'tool_result':
            messages.showToolCall(el, model.applyToolEvent(message, name, data));
            break;
          case 'surface': // an A2UI message of an interactive answer (surfaces/surface-board.js)
            surfaces.apply(el, message, data);
            break;
          case 'error':
            model.applyError(message, data);
            showError(el, errorText(message.error), () => regenerate(messageId));
            break;
          case 'done':
            finishAnswer(el, message, data);
            return;
          default:
            return;
        }
        scroller.stick();
      },
      onConnection(connection) {
        const el = messages.elementFor(messageId);
        if (!el) return;
        if (connection === 'reconnecting') {
          setStatusText(el, 'Reconnecting…');
        } else if (connection === 'open') {
          setStatusText(el, 'Streaming…');
          if (!(model.messages.get(messageId) || {}).error) clearError(el);
        } else if (connection === 'lost') {
          setStatusText(el, 'Disconnected');
          showError(el, 'The connection to this answer was lost.', () => {
            clearError(el);
            live.retry();
          });
        }
      },
    };
  }

  function finishAnswer(el, message, done) {
    model.applyDone(message, done);
    messages.showDone(el, message, done.patch);
    surfaces.schedule(); // a surface left without its root says it was not finished
    composer.showStreaming(model.streamingId !== null);
    scroller.stick();
    const words = FINISHED_WORDS[message.status] || '';
    announce(message.error ? `${words} ${errorText(message.error)}` : words);
    reconcile(message.id, done.blocks);
    finished();
  }

  /** Reads the stored message once (its Markdown source for Copy) and fixes the body only if the
   *  HTML shown differs from the stored HTML. */
  async function reconcile(messageId, expectedBlocks) {
    let stored;
    try {
      stored = await Api.message(messageId);
    } catch {
      return;
    }
    const message = model.messages.get(messageId);
    const el = messages.elementFor(messageId);
    if (!message || !el || model.streamingId === messageId) return;
    model.applyStored(message, stored);
    messages.showStored(el, message, stored, expectedBlocks);
    if (message.error && message.status !== 'complete') showServerError(message);
  }

  async function stopStreaming() {
    const id = model.streamingId;
    if (!id) return;
    try {
      const stopped = await Api.stop(id);
      // The stream normally delivers `done`; without a live connection, apply the stored state.
      if (!live.connected || live.messageId !== id) {
        const el = messages.elementFor(id);
        const message = model.messages.get(id);
        if (el && message) {
          live.close();
          model.applyStopped(message, stopped);
          messages.showStopped(el, message, stopped);
          composer.showStreaming(false);
        }
      }
    } catch (error) {
      const el = messages.elementFor(id);
      if (el) showError(el, `Could not stop: ${describe(error)}`, () => stopStreaming());
    }
  }

  return { follow, stop: stopStreaming, showServerError };
}

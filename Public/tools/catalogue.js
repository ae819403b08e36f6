// The tools this person may use (GET /api/tools), a part of the controller (app.js): read once when
// first needed (a card's title, the Tools list of the Chat settings), again after a failure. Cards
// drawn before it answered get their titles when it does.
import { Api, listIn } from '../transport/api.js';
import { toolCalls } from './tool-parts.js';

/** `page` gives the model and the message list. Returns `load()` (a promise of the items, each
 *  {id, server, name, title, description, input_schema, approval, available}) and `titleOf(id)`. */
export function toolCatalogue(page) {
  const tools = new Map();
  let loading = null;
  let asked = false; // the first card asks for the titles; a failure is not asked again by cards

  function titleOf(id) {
    if (!asked) {
      asked = true;
      queueMicrotask(() => load().catch(() => {}));
    }
    const tool = tools.get(id);
    return tool && typeof tool.title === 'string' ? tool.title : '';
  }

  /** The cards shown so far, with the titles just read. */
  function retitle() {
    for (const message of page.model.messages.values()) {
      if (toolCalls(message).length === 0) continue;
      const el = page.messages.elementFor(message.id);
      if (el) page.messages.showToolCalls(el, message);
    }
  }

  function load() {
    asked = true;
    if (!loading) {
      loading = Api.tools().then((answer) => {
        const items = listIn(answer, 'items');
        tools.clear();
        for (const item of items) tools.set(item.id, item);
        retitle();
        return items;
      });
      loading.catch(() => { loading = null; });
    }
    return loading;
  }

  return { load, titleOf };
}

// Draws one surface (surface-state.js) from the basic catalog: the tree from `root` down through the
// components' child references (ids, or a template repeated over a list in the data model), each
// component by its function (components-display.js, components-input.js). Nothing is shown before
// `root` has arrived (a placeholder instead), a missing child is skipped, a cycle or an unknown
// component draws nothing, and the tree is bounded in depth and size. Bound values are kept in step
// with the data model by small updaters, so typing never redraws the tree.
import * as display from './components-display.js';
import * as input from './components-input.js';
import { asText, failedCheck, resolve } from './dynamic.js';
import { resolvePath } from './pointer.js';

const COMPONENTS = {
  Text: display.Text, Image: display.Image, Icon: display.Icon, Row: display.Row, Column: display.Column,
  List: display.List, Card: display.Card, Tabs: display.Tabs, Divider: display.Divider, Modal: display.Modal,
  Button: input.Button, TextField: input.TextField, CheckBox: input.CheckBox, ChoicePicker: input.ChoicePicker,
  Slider: input.Slider, DateTimeInput: input.DateTimeInput,
};
/** Bounds of a drawn tree: nesting depth, and elements drawn (a template repeats its component). */
const MAX_DEPTH = 48;
const MAX_NODES = 2000;

let viewCount = 0;

export class SurfaceView {
  /** `state`: the SurfaceState drawn; `onAction(action)` gets an A2UI action (a Button's event, its
   *  context resolved); `onOpenUrl(url)` a Button's `openUrl` call. */
  constructor(state, { onAction, onOpenUrl }) {
    viewCount += 1;
    this.prefix = `a2ui${viewCount}`;
    this.ids = 0;
    this.state = state;
    this.onAction = onAction;
    this.onOpenUrl = onOpenUrl;
    this.binders = [];
    this.finished = false; // the reply drawing it has ended (a tree without root then stays without)
    this.element = document.createElement('div');
    this.element.className = 'surface';
    this.element.setAttribute('role', 'group');
    this.element.setAttribute('aria-label', 'Interactive answer');
    this.element.dataset.surfaceId = state.surfaceId;
  }

  /** Draws the whole tree again (new components or data from the model); the focused control keeps
   *  the focus when it is drawn again. */
  render() {
    const active = document.activeElement;
    const focused = active && this.element.contains(active) ? active.closest('[data-a2ui-key]') : null;
    const focusKey = focused ? focused.dataset.a2uiKey : null;
    this.binders = [];
    this.nodes = 0;
    const state = this.state;
    this.element.classList.toggle('is-pending', !state.ready);
    if (!state.ready) {
      let note = this.finished ? 'This interactive answer was not finished.' : 'Drawing an interactive answer…';
      if (state.created && !state.knownCatalog) note = 'This interactive answer uses a catalog Parley cannot draw.';
      if (state.deleted) note = '';
      this.element.replaceChildren(...(note ? [display.make('p', 'surface-placeholder', note)] : []));
      return;
    }
    if (!state.knownCatalog) {
      this.element.replaceChildren(display.make('p', 'surface-placeholder', 'This interactive answer uses a catalog Parley cannot draw.'));
      return;
    }
    const root = this.build('root', '', new Set(), {});
    this.element.replaceChildren(...(root ? [root] : []));
    if (focusKey) {
      const again = this.element.querySelector(`[data-a2ui-key="${CSS.escape(focusKey)}"]`);
      const target = again && (again.matches('input, textarea, button, select') ? again : again.querySelector('input, textarea, button'));
      if (target) target.focus({ preventScroll: true });
    }
  }

  /** The data model changed under the tree (a person's input): every bound value shown again. */
  refreshBindings() {
    for (const binder of this.binders) binder();
  }

  /** The element of component `id` in `scope`, or null (missing, unknown, a cycle, past a bound). */
  build(id, scope, path, options) {
    if (typeof id !== 'string' || path.has(id) || path.size >= MAX_DEPTH || this.nodes >= MAX_NODES) return null;
    const component = this.state.components.get(id);
    if (!component || !Object.prototype.hasOwnProperty.call(COMPONENTS, component.component)) return null;
    this.nodes += 1;
    const inner = new Set(path).add(id);
    const node = COMPONENTS[component.component](component, this.context(scope, inner, options));
    node.classList.add('a2ui-component');
    node.dataset.a2uiKey = `${scope}#${id}`;
    node.dataset.a2uiComponent = component.component;
    if (options.weighted && typeof component.weight === 'number' && component.weight > 0) {
      node.classList.add(`weight-${Math.min(6, Math.max(1, Math.round(component.weight)))}`);
    }
    return node;
  }

  /** What a component function gets: children, values, bindings, ids and its action. */
  context(scope, path, options) {
    const view = this;
    const state = this.state;
    const childOptions = { inButton: options.inButton, opener: null };
    return {
      scope,
      inButton: Boolean(options.inButton),
      opener: options.opener || null,
      child: (id, extra = {}) => view.build(id, scope, path, { ...childOptions, ...extra }),
      children(list, extra = {}) {
        const made = [];
        const more = { ...childOptions, ...extra };
        if (Array.isArray(list)) {
          for (const id of list) made.push(view.build(id, scope, path, more));
        } else if (list && typeof list === 'object' && typeof list.path === 'string') {
          const at = resolvePath(list.path, scope);
          const items = state.read(at);
          if (Array.isArray(items)) {
            items.forEach((_, index) => made.push(view.build(list.componentId, `${at === '/' ? '' : at}/${index}`, path, more)));
          }
        }
        return made.filter(Boolean);
      },
      value: (dynamic) => resolve(dynamic, state.data, scope),
      text: (dynamic) => asText(resolve(dynamic, state.data, scope)),
      check: (checks) => failedCheck(checks, state.data, scope, state.typed),
      label: (component) => (component.accessibility ? asText(resolve(component.accessibility.label, state.data, scope)) : ''),
      bind(update) {
        view.binders.push(update);
        update();
      },
      write(dynamic, value) {
        if (!dynamic || typeof dynamic.path !== 'string') return;
        state.write(resolvePath(dynamic.path, scope), value);
        view.refreshBindings();
      },
      uid() {
        view.ids += 1;
        return `${view.prefix}-${view.ids}`;
      },
      act: (component) => view.act(component, scope),
    };
  }

  /** A Button was pressed: its event goes out with its context resolved now, or its `openUrl` call
   *  goes to the page (which asks first). */
  act(component, scope) {
    const action = component.action && typeof component.action === 'object' ? component.action : {};
    const event = action.event;
    if (event && typeof event.name === 'string') {
      const context = {};
      const given = event.context && typeof event.context === 'object' ? event.context : {};
      for (const [key, value] of Object.entries(given)) {
        const resolved = resolve(value, this.state.data, scope);
        context[key] = resolved === undefined ? null : resolved;
      }
      this.onAction({ name: event.name, surfaceId: this.state.surfaceId, sourceComponentId: component.id,
        timestamp: new Date().toISOString(), context });
      return;
    }
    const call = action.functionCall;
    if (call && call.call === 'openUrl' && call.args && typeof call.args === 'object') {
      this.onOpenUrl(asText(resolve(call.args.url, this.state.data, scope)));
    }
  }
}

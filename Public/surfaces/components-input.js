// The basic catalog's input components, one function each: Button, TextField, CheckBox,
// ChoicePicker, Slider and DateTimeInput, each on its native element (button, input, textarea,
// fieldset and legend for choices) so the keyboard and screen readers work as everywhere else. Their
// values live in the surface's data model (two-way binding through `ctx.write`); a failing check shows
// its message and marks the field invalid; a Button with a failing check is disabled.
import { make, pick } from './components-display.js';
import { asText } from './dynamic.js';

/** A field's label, its control, and its error line (read with the control, aria-describedby). */
function field(className, labelText, control, ctx) {
  const box = make('div', `a2ui-field ${className}`);
  const label = make('label', 'a2ui-label', labelText);
  control.id = ctx.uid();
  label.htmlFor = control.id;
  box.append(label, control);
  return box;
}

/** Shows the first failing check of `component` under `control` (in `box`), or none. */
function showChecks(component, ctx, box, control, extra = () => '') {
  let error = box.querySelector(':scope > .a2ui-error');
  const message = ctx.check(component.checks) || extra();
  if (!message) {
    if (error) error.hidden = true;
    control.removeAttribute('aria-invalid');
    return;
  }
  if (!error) {
    error = make('p', 'a2ui-error');
    error.id = ctx.uid();
    box.append(error);
    control.setAttribute('aria-describedby', error.id);
  }
  error.textContent = message;
  error.hidden = false;
  // A group (the choices' fieldset) is described by the message; a field is also marked invalid.
  if (control.matches('input, textarea')) control.setAttribute('aria-invalid', 'true');
}

export function Button(component, ctx) {
  const variant = pick(component.variant, ['default', 'primary', 'borderless'], 'default');
  const button = make('button', `button a2ui-button variant-${variant}`);
  button.type = 'button';
  const child = ctx.child(component.child, { inButton: true });
  if (child) button.append(child);
  const label = ctx.label(component);
  if (label) button.setAttribute('aria-label', label);
  ctx.bind(() => {
    const failed = ctx.check(component.checks);
    button.disabled = Boolean(failed);
    if (failed) button.title = failed;
    else button.removeAttribute('title');
  });
  const opener = ctx.opener;
  button.addEventListener('click', () => {
    if (opener) opener();
    else ctx.act(component);
  });
  return button;
}

export function TextField(component, ctx) {
  const variant = pick(component.variant, ['longText', 'number', 'shortText', 'obscured'], 'shortText');
  const control = variant === 'longText' ? make('textarea', 'a2ui-input') : make('input', 'a2ui-input');
  if (variant === 'longText') control.rows = 3;
  else control.type = { number: 'number', obscured: 'password', shortText: 'text' }[variant];
  if (variant === 'obscured') control.autocomplete = 'off';
  const box = field('a2ui-textfield', ctx.text(component.label) || ctx.label(component) || 'Text', control, ctx);
  // The model's pattern is tried only on what the person typed (after an input event), never on first draw.
  let typed = false;
  const mismatch = () => {
    if (!typed || typeof component.validationRegexp !== 'string' || control.value === '') return '';
    try {
      return new RegExp(component.validationRegexp, 'u').test(control.value.slice(0, 1000)) ? '' : 'This value does not have the expected form.';
    } catch {
      return '';
    }
  };
  ctx.bind(() => {
    const value = asText(ctx.value(component.value));
    if (control.value !== value) control.value = value;
    showChecks(component, ctx, box, control, mismatch);
  });
  control.addEventListener('input', () => {
    typed = true;
    const number = variant === 'number' && control.value !== '' ? Number(control.value) : null;
    ctx.write(component.value, number !== null && !Number.isNaN(number) ? number : control.value);
  });
  return box;
}

export function CheckBox(component, ctx) {
  const box = make('div', 'a2ui-field a2ui-checkbox');
  const label = make('label', 'a2ui-check-label');
  const control = make('input', 'a2ui-check');
  control.type = 'checkbox';
  const text = make('span', 'a2ui-check-text');
  label.append(control, text);
  box.append(label);
  ctx.bind(() => {
    text.textContent = ctx.text(component.label) || ctx.label(component) || 'Check';
    control.checked = Boolean(ctx.value(component.value));
    showChecks(component, ctx, box, control);
  });
  control.addEventListener('change', () => ctx.write(component.value, control.checked));
  return box;
}

/** ChoicePicker: a fieldset of radio buttons (one choice) or checkboxes (several), with a filter box
 *  when `filterable`; its value is always a list of the chosen option values. */
export function ChoicePicker(component, ctx) {
  const several = component.variant === 'multipleSelection';
  const style = pick(component.displayStyle, ['checkbox', 'chips'], 'checkbox');
  const set = make('fieldset', `a2ui-choices style-${style}`);
  const legend = make('legend', 'a2ui-label');
  set.append(legend);
  const name = ctx.uid();
  const options = (Array.isArray(component.options) ? component.options : []).filter((option) => option && typeof option === 'object');
  const chosen = () => {
    const value = ctx.value(component.value);
    return Array.isArray(value) ? value.map(asText) : value === undefined || value === null ? [] : [asText(value)];
  };
  let filter = null;
  if (component.filterable === true) {
    filter = make('input', 'a2ui-input a2ui-filter');
    filter.type = 'search';
    filter.setAttribute('aria-label', 'Filter the options');
    set.append(filter);
  }
  const list = make('div', 'a2ui-options');
  const controls = options.map((option) => {
    const label = make('label', 'a2ui-option');
    const control = make('input', 'a2ui-check');
    control.type = several ? 'checkbox' : 'radio';
    control.name = name;
    control.value = asText(option.value);
    const text = make('span', 'a2ui-option-text');
    label.append(control, text);
    list.append(label);
    ctx.bind(() => { text.textContent = ctx.text(option.label) || control.value; });
    control.addEventListener('change', () => {
      const now = chosen().filter((value) => value !== control.value);
      if (control.checked) now.push(control.value);
      ctx.write(component.value, several ? now : [control.value]);
    });
    return { label, control, text };
  });
  set.append(list);
  if (filter) {
    filter.addEventListener('input', () => {
      const words = filter.value.trim().toLowerCase();
      for (const { label, text } of controls) label.hidden = words !== '' && !text.textContent.toLowerCase().includes(words);
    });
  }
  ctx.bind(() => {
    legend.textContent = ctx.text(component.label) || ctx.label(component) || 'Choose';
    const values = chosen();
    for (const { control } of controls) control.checked = values.includes(control.value);
    showChecks(component, ctx, set, set);
  });
  return set;
}

export function Slider(component, ctx) {
  const control = make('input', 'a2ui-slider');
  control.type = 'range';
  const min = typeof component.min === 'number' ? component.min : 0;
  const max = typeof component.max === 'number' ? component.max : 100;
  control.min = String(min);
  control.max = String(Math.max(min, max));
  control.step = Number.isInteger(min) && Number.isInteger(max) ? '1' : 'any';
  const box = field('a2ui-slider-field', ctx.text(component.label) || ctx.label(component) || 'Value', control, ctx);
  const output = make('output', 'a2ui-slider-value');
  output.htmlFor = control.id;
  box.append(output);
  ctx.bind(() => {
    const value = Number(ctx.value(component.value));
    const shown = Number.isNaN(value) ? String(min) : String(value);
    if (control.value !== shown) control.value = shown;
    output.textContent = control.value;
    showChecks(component, ctx, box, control);
  });
  control.addEventListener('input', () => ctx.write(component.value, Number(control.value)));
  return box;
}

const DATE_TYPES = { date: 'date', time: 'time', both: 'datetime-local' };

export function DateTimeInput(component, ctx) {
  const date = component.enableDate === true;
  const time = component.enableTime === true;
  const kind = date && time ? 'both' : time ? 'time' : 'date';
  const control = make('input', 'a2ui-input');
  control.type = DATE_TYPES[kind];
  const box = field('a2ui-datetime', ctx.text(component.label) || ctx.label(component) || 'Date', control, ctx);
  ctx.bind(() => {
    for (const bound of ['min', 'max']) {
      const value = ctx.text(component[bound]);
      if (value) control[bound] = value;
    }
    const value = ctx.text(component.value);
    if (control.value !== value) control.value = value;
    showChecks(component, ctx, box, control);
  });
  control.addEventListener('input', () => ctx.write(component.value, control.value));
  return box;
}

// The values of a surface's component properties (A2UI v0.9 "Dynamic" types): a literal, a binding
// `{path}` into the data model, or a call of one of the basic catalog's functions, which are plain
// computations written here (no model-provided code is ever run). `openUrl` is not a value: it is an
// action, handled by the Button (components-input.js). No DOM.
import { getAt, resolvePath } from './pointer.js';

/** A model-provided pattern is tried on at most this many characters (a slow pattern stays cheap). */
const REGEX_INPUT_MAX = 1000;
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const isObject = (value) => value !== null && typeof value === 'object' && !Array.isArray(value);
const number = (value) => (typeof value === 'number' ? value : Number(value));

/** `value` as text, as A2UI converts it: null and undefined are '', objects and arrays JSON. */
export function asText(value) {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

function emptyValue(value) {
  return value === null || value === undefined || value === '' || (Array.isArray(value) && value.length === 0);
}

function matches(pattern, value) {
  try {
    return new RegExp(String(pattern), 'u').test(asText(value).slice(0, REGEX_INPUT_MAX));
  } catch {
    return false; // a pattern the browser cannot compile fails its check
  }
}

/** `${/path}` and `${relative}` replaced by their values; `\${` is a literal `${`. A nested function
 *  call in an expression is left empty. */
function formatString(template, data, scope) {
  return asText(template).replace(/\\\$\{|\$\{([^{}]*)\}/g, (whole, expression) => {
    if (whole === '\\${') return '${';
    const inner = expression.trim();
    if (inner.includes('(')) return '';
    return asText(getAt(data, resolvePath(inner, scope)));
  });
}

function formatDate(value, pattern) {
  const date = new Date(asText(value));
  if (Number.isNaN(date.getTime())) return asText(value);
  const pad = (n, width = 2) => String(n).padStart(width, '0');
  const month = (style) => date.toLocaleString(undefined, { month: style });
  const day = (style) => date.toLocaleString(undefined, { weekday: style });
  const tokens = {
    yyyy: () => pad(date.getFullYear(), 4), yy: () => pad(date.getFullYear() % 100), MMMM: () => month('long'),
    MMM: () => month('short'), MM: () => pad(date.getMonth() + 1), M: () => String(date.getMonth() + 1),
    dd: () => pad(date.getDate()), d: () => String(date.getDate()), EEEE: () => day('long'), E: () => day('short'),
    HH: () => pad(date.getHours()), H: () => String(date.getHours()), hh: () => pad(date.getHours() % 12 || 12),
    h: () => String(date.getHours() % 12 || 12), mm: () => pad(date.getMinutes()), ss: () => pad(date.getSeconds()),
    a: () => (date.getHours() < 12 ? 'AM' : 'PM'),
  };
  return asText(pattern).replace(/yyyy|yy|MMMM|MMM|MM|M|dd|d|EEEE|E|HH|H|hh|h|mm|ss|a/g, (token) => tokens[token]());
}

function formatNumber(value, decimals, grouping, currency) {
  const options = { useGrouping: grouping !== false };
  if (typeof decimals === 'number' && decimals >= 0 && decimals <= 20) {
    options.minimumFractionDigits = decimals;
    options.maximumFractionDigits = decimals;
  }
  if (currency) Object.assign(options, { style: 'currency', currency: asText(currency) });
  try {
    return new Intl.NumberFormat(undefined, options).format(number(value));
  } catch {
    return asText(value);
  }
}

function pluralize(args) {
  let category = 'other';
  try {
    category = new Intl.PluralRules().select(number(args.value));
  } catch {
    // 'other'
  }
  if (number(args.value) === 0 && args.zero !== undefined) category = 'zero';
  return asText(args[category] ?? args.other);
}

const FUNCTIONS = {
  required: (a) => !emptyValue(a.value),
  regex: (a) => matches(a.pattern, a.value),
  length: (a) => {
    const size = asText(a.value).length;
    return (a.min === undefined || size >= a.min) && (a.max === undefined || size <= a.max);
  },
  numeric: (a) => {
    const value = number(a.value);
    return !Number.isNaN(value) && (a.min === undefined || value >= a.min) && (a.max === undefined || value <= a.max);
  },
  email: (a) => EMAIL.test(asText(a.value)),
  formatNumber: (a) => formatNumber(a.value, a.decimals, a.grouping, null),
  formatCurrency: (a) => formatNumber(a.value, a.decimals, a.grouping, a.currency),
  formatDate: (a) => formatDate(a.value, a.format),
  pluralize,
  and: (a) => (Array.isArray(a.values) ? a.values.every(Boolean) : false),
  or: (a) => (Array.isArray(a.values) ? a.values.some(Boolean) : false),
  not: (a) => !a.value,
  add: (a) => number(a.a) + number(a.b),
  subtract: (a) => number(a.a) - number(a.b),
  multiply: (a) => number(a.a) * number(a.b),
  divide: (a) => number(a.a) / number(a.b),
  greater_than: (a) => number(a.a) > number(a.b),
  less_than: (a) => number(a.a) < number(a.b),
  equals: (a) => JSON.stringify(a.a) === JSON.stringify(a.b),
  not_equals: (a) => JSON.stringify(a.a) !== JSON.stringify(a.b),
  contains: (a) => asText(a.string).includes(asText(a.substring)),
  starts_with: (a) => asText(a.string).startsWith(asText(a.prefix)),
  ends_with: (a) => asText(a.string).endsWith(asText(a.suffix)),
  clamp: (a) => Math.max(number(a.min), Math.min(number(a.max), number(a.value))),
  round: (a) => {
    const factor = 10 ** Math.max(0, Math.min(15, number(a.decimals) || 0));
    return Math.round(number(a.value) * factor) / factor;
  },
  min: (a) => (Array.isArray(a.values) ? Math.min(...a.values.map(number)) : NaN),
  max: (a) => (Array.isArray(a.values) ? Math.max(...a.values.map(number)) : NaN),
  abs: (a) => Math.abs(number(a.value)),
};

/**
 * The value of `dynamic` in `data` at `scope` (the template item's pointer, '' at the root). A binding
 * reads the model; a function call has its arguments resolved first; `{and|or|not|true|false}` logic
 * expressions are read too. Unknown functions give undefined.
 */
export function resolve(dynamic, data, scope = '', depth = 0, typed = null) {
  if (!isObject(dynamic) || depth > 32) return isObject(dynamic) ? undefined : dynamic;
  if (typeof dynamic.path === 'string') return getAt(data, resolvePath(dynamic.path, scope));
  const again = (value) => resolve(value, data, scope, depth + 1, typed);
  if (typeof dynamic.call === 'string') {
    // A model-provided pattern is only tried on what the person typed (a value bound to a pointer they
    // wrote), never on the model's own data as the surface draws: the check passes until then.
    if (dynamic.call === 'regex' && !typedValue(dynamic.args, scope, typed)) return true;
    if (dynamic.call === 'formatString') {
      return formatString(again(isObject(dynamic.args) ? dynamic.args.value : undefined), data, scope);
    }
    const fn = Object.prototype.hasOwnProperty.call(FUNCTIONS, dynamic.call) ? FUNCTIONS[dynamic.call] : null;
    if (!fn) return undefined;
    const args = {};
    for (const [key, value] of Object.entries(isObject(dynamic.args) ? dynamic.args : {})) {
      args[key] = Array.isArray(value) ? value.map(again) : again(value);
    }
    return fn(args);
  }
  if (Array.isArray(dynamic.and)) return dynamic.and.every((item) => Boolean(again(item)));
  if (Array.isArray(dynamic.or)) return dynamic.or.some((item) => Boolean(again(item)));
  if ('not' in dynamic) return !again(dynamic.not);
  if (dynamic.true === true) return true;
  if (dynamic.false === false) return false;
  return undefined;
}

/** Whether a call's `value` argument is bound to a pointer in `typed` (what the person wrote). */
function typedValue(args, scope, typed) {
  const value = isObject(args) ? args.value : undefined;
  return typed instanceof Set && isObject(value) && typeof value.path === 'string' && typed.has(resolvePath(value.path, scope));
}

/** The message of the first of `checks` (a component's CheckRules) that fails, or ''. `typed`: the
 *  pointers the person wrote (a `regex` check runs only on those). */
export function failedCheck(checks, data, scope, typed = null) {
  for (const check of Array.isArray(checks) ? checks : []) {
    if (!isObject(check)) continue;
    const rule = isObject(check.condition) ? check.condition : check;
    if (!resolve(rule, data, scope, 0, typed)) return asText(check.message) || 'This value is not valid.';
  }
  return '';
}

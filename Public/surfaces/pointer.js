// JSON Pointers (RFC 6901) into a surface's data model (A2UI v0.9 data binding): reading, writing and
// removing a value, and A2UI's relative paths, which resolve against the scope of a template's item
// (`name` inside the second item of `/people` is `/people/1/name`). Plain data only: no DOM. A segment
// that would reach the prototype chain (`__proto__`, `constructor`, `prototype`) is never followed.

const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype']);

/** The unescaped segments of `pointer` ('' and '/' are the whole model: no segment), or null when it
 *  is not a pointer (no leading slash) or names a forbidden segment. */
export function segmentsOf(pointer) {
  if (typeof pointer !== 'string') return null;
  if (pointer === '' || pointer === '/') return [];
  if (!pointer.startsWith('/')) return null;
  const segments = pointer.slice(1).split('/').map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'));
  return segments.some((segment) => FORBIDDEN.has(segment)) ? null : segments;
}

/** `path` as an absolute pointer: absolute as is, relative under `scope` (an absolute pointer, '' at
 *  the root). */
export function resolvePath(path, scope = '') {
  if (typeof path !== 'string') return null;
  if (path.startsWith('/')) return path;
  const base = scope && scope !== '/' ? scope : '';
  return path === '' || path === '.' ? base || '/' : `${base}/${path}`;
}

function own(container, key) {
  return container !== null && typeof container === 'object' && Object.prototype.hasOwnProperty.call(container, key);
}

/** The value at `pointer` in `data`, or undefined. */
export function getAt(data, pointer) {
  const segments = segmentsOf(pointer);
  if (segments === null) return undefined;
  let node = data;
  for (const segment of segments) {
    if (!own(node, segment)) return undefined;
    node = node[segment];
  }
  return node;
}

/** `data` with the value at `pointer` set (created, with objects on the way), or removed when `value`
 *  is undefined; returns the new root (a pointer to the whole model replaces it). */
export function setAt(data, pointer, value) {
  const segments = segmentsOf(pointer);
  if (segments === null) return data;
  if (segments.length === 0) return value === undefined ? {} : value;
  const root = data !== null && typeof data === 'object' ? data : {};
  let node = root;
  for (const segment of segments.slice(0, -1)) {
    if (!own(node, segment) || node[segment] === null || typeof node[segment] !== 'object') {
      node[segment] = {};
    }
    node = node[segment];
  }
  const last = segments[segments.length - 1];
  if (value !== undefined) {
    node[last === '-' && Array.isArray(node) ? node.length : last] = value;
  } else if (Array.isArray(node)) {
    // An array keeps its length: the item becomes undefined (A2UI's rule for a removed index).
    if (own(node, last)) node[last] = undefined;
  } else if (own(node, last)) {
    delete node[last];
  }
  return root;
}

/** A deep copy of plain JSON data (what a message carries), so that the surface owns its model. */
export function copyJSON(value) {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

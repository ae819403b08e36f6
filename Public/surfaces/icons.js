// The basic catalog's icon names as characters of the page's own font (no icon font, no image from
// the model). An unknown name shows nothing; a catalog `svgPath` is drawn as an SVG path (its `d`
// attribute is path data, never markup or script).

const GLYPHS = {
  accountCircle: '👤', add: '+', arrowBack: '←', arrowForward: '→', attachFile: '📎', calendarToday: '📅',
  call: '📞', camera: '📷', check: '✓', close: '✕', delete: '🗑', download: '⤓', edit: '✎', event: '📅',
  error: '⛔', fastForward: '⏩', favorite: '♥', favoriteOff: '♡', folder: '📁', help: '?', home: '⌂',
  info: 'ℹ', locationOn: '📍', lock: '🔒', lockOpen: '🔓', mail: '✉', menu: '☰', moreVert: '⋮',
  moreHoriz: '⋯', notificationsOff: '🔕', notifications: '🔔', pause: '⏸', payment: '💳', person: '👤',
  phone: '📱', photo: '🖼', play: '▶', print: '🖨', refresh: '↻', rewind: '⏪', search: '🔍', send: '➤',
  settings: '⚙', share: '⇪', shoppingCart: '🛒', skipNext: '⏭', skipPrevious: '⏮', star: '★', starHalf: '⯨',
  starOff: '☆', stop: '⏹', upload: '⤒', visibility: '👁', visibilityOff: '⊘', volumeDown: '🔉',
  volumeMute: '🔈', volumeOff: '🔇', volumeUp: '🔊', warning: '⚠',
};

const SVG = 'http://www.w3.org/2000/svg';
/** Path data: commands, numbers, separators; anything else is not drawn. */
const PATH_DATA = /^[MmLlHhVvCcSsQqTtAaZz0-9eE.,+\-\s]{1,4000}$/;

/** The node for icon `name` (a catalog name, or `{svgPath}`), or null. */
export function iconNode(name) {
  if (typeof name === 'string') {
    if (!Object.prototype.hasOwnProperty.call(GLYPHS, name)) return null;
    const glyph = document.createElement('span');
    glyph.className = 'a2ui-glyph';
    glyph.textContent = GLYPHS[name];
    return glyph;
  }
  if (name && typeof name.svgPath === 'string' && PATH_DATA.test(name.svgPath)) {
    const svg = document.createElementNS(SVG, 'svg');
    svg.setAttribute('viewBox', '0 0 24 24');
    svg.setAttribute('width', '20');
    svg.setAttribute('height', '20');
    svg.setAttribute('focusable', 'false');
    const path = document.createElementNS(SVG, 'path');
    path.setAttribute('d', name.svgPath);
    path.setAttribute('fill', 'currentColor');
    svg.append(path);
    return svg;
  }
  return null;
}

/** A readable name for icon `name` ("shoppingCart" → "shopping cart"), for a screen reader. */
export function iconLabel(name) {
  return typeof name === 'string' ? name.replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase() : '';
}

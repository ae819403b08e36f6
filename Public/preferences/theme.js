// The chosen theme, applied before the page is drawn (a classic script in <head>, not a module: a
// module runs after the first paint, which would flash the browser's scheme first). The value is the
// one preferences.js last read from the server, kept in this browser only as a copy; the server's
// answer (GET /api/preferences) is applied again as soon as it arrives.
(function applySavedTheme() {
  let theme = null;
  try {
    theme = localStorage.getItem('parley.theme');
  } catch {
    theme = null; // storage disabled: the server's answer applies it a moment later
  }
  if (theme === 'light' || theme === 'dark') document.documentElement.dataset.theme = theme;
}());

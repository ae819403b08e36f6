// Times as people read them, in their own time zone and language: a message's time (short, with the
// full date in its tooltip) and the day group of a conversation in the list (Today, Yesterday,
// Previous 7 days, Older).

const timeOfDay = new Intl.DateTimeFormat(undefined, { hour: 'numeric', minute: '2-digit' });
const dayAndTime = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short', hour: 'numeric', minute: '2-digit' });
const fullDayAndTime = new Intl.DateTimeFormat(undefined, {
  day: 'numeric', month: 'short', year: 'numeric', hour: 'numeric', minute: '2-digit',
});
const fullDate = new Intl.DateTimeFormat(undefined, { dateStyle: 'full', timeStyle: 'medium' });

/** The day group names, newest first. */
export const DAY_GROUPS = ['Today', 'Yesterday', 'Previous 7 days', 'Older'];

function parse(iso) {
  if (typeof iso !== 'string' || iso === '') return null;
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** Local midnight of `date`'s day. */
function startOfDay(date) {
  return new Date(date.getFullYear(), date.getMonth(), date.getDate());
}

/** Whole local calendar days from `date` to `now` (0 today, 1 yesterday), daylight saving included. */
function daysAgo(date, now) {
  const from = startOfDay(date);
  const to = startOfDay(now);
  return Math.round((to - from) / 86_400_000);
}

/** Fills a `<time>` with `iso`: the time of day today, the day and time this year, the full date
 *  before; its tooltip is the whole date. An empty or bad `iso` hides it. */
export function showTime(el, iso, now = new Date()) {
  const date = parse(iso);
  el.hidden = date === null;
  if (!date) {
    el.textContent = '';
    el.removeAttribute('datetime');
    el.removeAttribute('title');
    return;
  }
  let text;
  if (daysAgo(date, now) === 0) text = timeOfDay.format(date);
  else if (date.getFullYear() === now.getFullYear()) text = dayAndTime.format(date);
  else text = fullDayAndTime.format(date);
  el.textContent = text;
  el.dateTime = iso;
  el.title = fullDate.format(date);
}

/** The group of a conversation changed at `iso` (a bad or missing time counts as Today: it was just
 *  made or changed here). */
export function dayGroup(iso, now = new Date()) {
  const date = parse(iso);
  if (!date) return DAY_GROUPS[0];
  const days = daysAgo(date, now);
  if (days <= 0) return DAY_GROUPS[0];
  if (days === 1) return DAY_GROUPS[1];
  if (days <= 7) return DAY_GROUPS[2];
  return DAY_GROUPS[3];
}

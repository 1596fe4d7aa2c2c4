/** Small DOM helpers: elements built from text (never HTML strings), so names from the cluster cannot inject markup. */

type Child = Node | string | number | null | undefined | false;

/** `el('td', {class: 'num'}, '42')`: an element with attributes and children (text children are text nodes). */
export function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Readonly<Record<string, string | number | boolean | undefined>> = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const e = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === false) continue;
    e.setAttribute(name, value === true ? '' : String(value));
  }
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    e.append(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
  return e;
}

/**
 * Makes the children of the element with the id those given, changing only what differs:
 * an element of the same tag (and `data-key`) is kept and its attributes and children made
 * alike, a text node keeps its node and gets the new text only when it differs. So a poll
 * that brings nothing new leaves the DOM as it was (a text selection survives), and a table
 * whose rows carry a `data-key` keeps its old rows when new ones come on top.
 */
export function fill(id: string, ...children: Child[]): HTMLElement {
  const target = document.getElementById(id);
  if (target === null) throw new Error(`the page has no element '#${id}'`);
  morphChildren(
    target,
    children
      .filter((c): c is Node | string | number => c !== null && c !== undefined && c !== false)
      .map((c) => (typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c)),
  );
  return target;
}

function keyOf(n: Node): string | null {
  return n.nodeType === Node.ELEMENT_NODE ? (n as Element).getAttribute('data-key') : null;
}

function sameKind(a: Node, b: Node): boolean {
  if (a.nodeType !== b.nodeType) return false;
  if (a.nodeType !== Node.ELEMENT_NODE) return true;
  return (a as Element).tagName === (b as Element).tagName && keyOf(a) === keyOf(b);
}

/** Makes `old` like `fresh` (same kind), in place. */
function morphNode(old: Node, fresh: Node): void {
  // the node itself (a part the page keeps, unchanged since it was drawn)
  if (old === fresh) return;
  if (old.nodeType !== Node.ELEMENT_NODE) {
    if (old.nodeValue !== fresh.nodeValue) old.nodeValue = fresh.nodeValue;
    return;
  }
  const o = old as Element;
  const f = fresh as Element;
  // an open <details> stays open: the reader opened it
  const kept = (name: string) => name === 'open' && o.tagName === 'DETAILS';
  for (const a of [...o.attributes]) if (!f.hasAttribute(a.name) && !kept(a.name)) o.removeAttribute(a.name);
  for (const a of [...f.attributes]) if (o.getAttribute(a.name) !== a.value) o.setAttribute(a.name, a.value);
  morphChildren(o, [...f.childNodes]);
}

/** Makes the children of `parent` like `fresh`, keeping every node that matches (by kind, or by `data-key`). */
function morphChildren(parent: Element, fresh: readonly Node[]): void {
  const keyed = new Map<string, Element>();
  for (const c of parent.children) {
    const k = c.getAttribute('data-key');
    if (k !== null) keyed.set(k, c);
  }
  let cursor: ChildNode | null = parent.firstChild;
  for (const f of fresh) {
    const key = keyOf(f);
    let match: ChildNode | null = null;
    if (key !== null) {
      const k = keyed.get(key);
      if (k !== undefined && k.tagName === (f as Element).tagName) match = k;
    } else if (cursor !== null && sameKind(cursor, f)) match = cursor;
    if (match === null) {
      parent.insertBefore(f, cursor);
      continue;
    }
    if (key !== null) keyed.delete(key);
    if (match === cursor) cursor = cursor.nextSibling;
    else parent.insertBefore(match, cursor);
    morphNode(match, f);
  }
  while (cursor !== null) {
    const next: ChildNode | null = cursor.nextSibling;
    cursor.remove();
    cursor = next;
  }
}

/** `12.3 %` (one decimal), or `–` for no value. */
export function pct(ratio: number | null | undefined, digits = 1): string {
  // a no-break space: the figure and its unit stay on one line
  return ratio === null || ratio === undefined ? '–' : `${(ratio * 100).toFixed(digits)}\u00a0%`;
}

/** `4.0 GiB`. */
export function gib(bytes: number | null | undefined): string {
  return bytes === null || bytes === undefined ? '–' : `${(bytes / 1024 ** 3).toFixed(1)}\u00a0GiB`;
}

/** `1 min 20 s`, `45 s`, `2 h 5 min`. */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '–';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min${s % 60 ? ` ${s % 60} s` : ''}`;
  const m = Math.round(s / 60);
  return `${Math.floor(m / 60)} h${m % 60 ? ` ${m % 60} min` : ''}`;
}

/** A bar of a ratio (0..1) with its figure. */
export function bar(ratio: number | null | undefined, label: string): HTMLElement {
  const width = ratio === null || ratio === undefined ? 0 : Math.max(0, Math.min(1, ratio)) * 100;
  const level = ratio === null || ratio === undefined ? 'none' : ratio >= 0.9 ? 'high' : ratio >= 0.7 ? 'mid' : 'low';
  return el(
    'div',
    {
      class: 'bar',
      role: 'meter',
      'aria-label': label,
      'aria-valuenow': Math.round(width),
      'aria-valuemin': 0,
      'aria-valuemax': 100,
    },
    el('span', { class: 'bar-label' }, label),
    el(
      'span',
      { class: 'bar-track' },
      el('span', { class: `bar-fill ${level}`, style: `width: ${width.toFixed(1)}%` }),
    ),
    el('span', { class: 'bar-value' }, pct(ratio)),
  );
}

/// <reference lib="dom" />

// The page's only way to make DOM: elements by name, text by `textContent`. Run text never becomes markup:
// no innerHTML anywhere, and no attribute but the few named here, set from the page's own values.

type Child = Node | string | undefined | false
type Attributes = Readonly<Record<string, string | undefined>>

/** Text as it may be shown: control characters (a terminal's escapes, NULs) removed, line breaks and tabs kept. */
export const clean = (value: string): string => value.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/g, "")

/** An element with attributes and children; strings become text nodes. */
export const h = (tag: string, attributes: Attributes = {}, ...children: ReadonlyArray<Child>): HTMLElement => {
  const element = document.createElement(tag)
  for (const [name, value] of Object.entries(attributes)) if (value !== undefined) element.setAttribute(name, value)
  for (const child of children) {
    if (child === undefined || child === false) continue
    element.append(typeof child === "string" ? document.createTextNode(clean(child)) : child)
  }
  return element
}

/** A `<pre>` of Markdown or any run text: shown as it is written, never rendered. */
export const pre = (value: string, attributes: Attributes = {}): HTMLElement => h("pre", attributes, value)

/** A section with a heading; `undefined` children are skipped. */
export const section = (id: string, title: string, ...children: ReadonlyArray<Child>): HTMLElement =>
  h("section", { id, "aria-labelledby": `${id}-title` }, h("h2", { id: `${id}-title` }, title), ...children)

// Just enough of the DOM and of localStorage for the page modules' rules to run under Node.

export class FakeElement {
  constructor(tagName) {
    this.tagName = tagName.toUpperCase();
    this.children = [];
    this.attributes = {};
    this.className = "";
    this.textContent = "";
    this.style = {};
    this.listeners = {};
  }

  get classList() {
    return { contains: (name) => this.className.split(" ").includes(name) };
  }

  get lastElementChild() {
    return this.children.at(-1) ?? null;
  }

  setAttribute(name, value) {
    this.attributes[name] = String(value);
  }

  getAttribute(name) {
    return this.attributes[name] ?? null;
  }

  prepend(...nodes) {
    this.children.unshift(...nodes.filter((node) => typeof node !== "string"));
  }

  append(...nodes) {
    this.children.push(...nodes.filter((node) => typeof node !== "string"));
  }

  addEventListener(type, listener) {
    (this.listeners[type] ??= []).push(listener);
  }
}

export function installDocument() {
  globalThis.document = { createElement: (tag) => new FakeElement(tag) };
}

export class FakeStorage {
  constructor() {
    this.items = new Map();
  }

  get length() {
    return this.items.size;
  }

  key(i) {
    return [...this.items.keys()][i] ?? null;
  }

  getItem(key) {
    return this.items.has(key) ? this.items.get(key) : null;
  }

  setItem(key, value) {
    this.items.set(key, String(value));
  }

  removeItem(key) {
    this.items.delete(key);
  }
}

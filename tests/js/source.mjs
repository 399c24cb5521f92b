// Reading our JavaScript as text, for the tests that hold its shape: function lengths
// (functions.test.mjs) and the rooms and their imports (rooms.test.mjs).

/** `source` with comments, strings and template literals blanked (newlines kept). */
export function mask(source) {
  let out = "";
  let i = 0;
  const blank = (text) => text.replace(/[^\n]/g, " ");
  while (i < source.length) {
    const two = source.slice(i, i + 2);
    let end = i + 1;
    if (two === "//") end = source.indexOf("\n", i) === -1 ? source.length : source.indexOf("\n", i);
    else if (two === "/*") end = source.indexOf("*/", i + 2) + 2;
    else if (source[i] === '"' || source[i] === "'") {
      end = i + 1;
      // Bounded: a quote in a regex literal opens no string that ends (the file's end does).
      while (end < source.length && source[end] !== source[i]) end += source[end] === "\\" ? 2 : 1;
      end += 1;
    } else if (source[i] === "`") {
      end = i + 1;
      let depth = 0;
      while (end < source.length && (depth > 0 || source[end] !== "`")) {
        if (source[end] === "\\") end += 1;
        else if (source.startsWith("${", end)) depth += 1;
        else if (depth > 0 && source[end] === "}") depth -= 1;
        end += 1;
      }
      end += 1;
    } else {
      out += source[i];
      i += 1;
      continue;
    }
    out += blank(source.slice(i, end));
    i = end;
  }
  return out;
}

// Showing a cell's output: streamed text, the truncation marker, values and errors.
//
// Learner output is untrusted. Text goes in through textContent; SVG becomes an <img> (an image
// cannot run scripts); HTML goes into an iframe sandboxed without `allow-scripts`, so neither a
// <script> nor an `onerror=` in it ever runs, and it cannot reach this page.
//
// Which of a value's representations shows is one rule, promptdojo.kernel.SHOWN_FIRST: the server
// passes it in the kernel config (`outputOrder`, `htmlFrameHead`) and renders recorded outputs
// with it too.

/** The representation of `value` (a MIME bundle) that shows, or undefined. */
export function shownAs(value, order) {
  return order.find((mime) => value[mime] !== undefined && value[mime] !== null);
}

export function appendOutput(output, className, text) {
  if (className === "truncated") {
    const note = document.createElement("p");
    note.className = "truncated";
    note.textContent = `Output truncated: a cell shows at most ${Number(text).toLocaleString("en")} characters.`;
    output.append(note);
    return;
  }
  let last = output.lastElementChild;
  if (!last || !last.classList.contains(className)) {
    last = document.createElement("pre");
    last.className = className;
    output.append(last);
  }
  last.textContent += text;
}

/** An iframe that shows `html` and runs none of it. */
export function sandboxedHtml(html, title, head) {
  const frame = document.createElement("iframe");
  // allow-same-origin without allow-scripts: nothing inside runs, and the page may measure it.
  frame.setAttribute("sandbox", "allow-same-origin");
  frame.className = "value html-value";
  frame.title = title;
  frame.srcdoc = head + html;
  frame.addEventListener("load", () => fitFrame(frame));
  return frame;
}

/** Size a sandboxed frame to its content, up to 800 px. */
export function fitFrame(frame) {
  const height = frame.contentDocument?.documentElement.scrollHeight;
  if (height) frame.style.height = `${Math.min(height + 4, 800)}px`;
}

/** An <img> for an SVG picture: an image cannot run scripts. */
export function svgImage(svg, alt) {
  const img = document.createElement("img");
  img.className = "value";
  img.alt = alt;
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`;
  return img;
}

/**
 * A picture's words (the JSON of promptdojo.kernel.FIGURE_MIME): `{alt, title, columns, rows}`,
 * or null when it has none or they do not parse.
 */
export function figureWords(json) {
  if (typeof json !== "string") return null;
  try {
    const { title, summary, columns, rows } = JSON.parse(json);
    if (!Array.isArray(rows) || !Array.isArray(columns)) return null;
    return { alt: summary ? `${title}. ${summary}` : title, title, columns, rows };
  } catch {
    return null;
  }
}

/** The picture's data as a table a screen reader can walk, visually hidden beside the picture. */
export function figureTable({ title, columns, rows }) {
  const table = document.createElement("table");
  table.className = "figure-data visually-hidden";
  const caption = document.createElement("caption");
  caption.textContent = `Data of the picture: ${title}`;
  const row = (cells, header) => {
    const tr = document.createElement("tr");
    cells.forEach((text, i) => {
      const cell = document.createElement(header || i === 0 ? "th" : "td");
      if (header || i === 0) cell.setAttribute("scope", header ? "col" : "row");
      cell.textContent = String(text);
      tr.append(cell);
    });
    return tr;
  };
  const head = document.createElement("thead");
  head.append(row(columns, true));
  const body = document.createElement("tbody");
  body.append(...rows.map((cells) => row(cells, false)));
  table.append(caption, head, body);
  return table;
}

/**
 * Show a finished run: its value (rich when it has a rich repr) or its traceback.
 * `config` is the kernel config: `outputOrder` and `htmlFrameHead`.
 */
export function showResult(output, result, config) {
  if (!result.ok) {
    appendOutput(output, "error", result.traceback || `${result.error_type}: ${result.error_message}`);
    return;
  }
  const value = result.value ?? {};
  const plain = value["text/plain"];
  const shown = shownAs(value, config.outputOrder);
  if (shown === "text/html") {
    output.append(sandboxedHtml(value[shown], plain ?? "HTML output", config.htmlFrameHead));
  } else if (shown === "image/svg+xml") {
    const words = figureWords(value[config.figureMime]);
    output.append(svgImage(value[shown], words?.alt ?? plain ?? "picture"));
    if (words) output.append(figureTable(words));
  } else if (shown === "text/plain") {
    appendOutput(output, "value", plain);
  }
}

/** Put the step's failed setup cells first in a cell's output: they explain what follows. */
export function showSetupFailures(output, failures) {
  const notes = failures.map(({ text }) => {
    const pre = document.createElement("pre");
    pre.className = "error setup-error";
    pre.textContent = text.endsWith("\n") ? text : `${text}\n`;
    return pre;
  });
  output.prepend(...notes);
}

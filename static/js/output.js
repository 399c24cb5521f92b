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
    output.append(svgImage(value[shown], plain ?? "picture"));
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

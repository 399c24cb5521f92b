// Showing a cell's output: streamed text, the truncation marker, values and errors.
//
// Learner output is untrusted. Text goes in through textContent; SVG becomes an <img> (an image
// cannot run scripts); HTML goes into an iframe sandboxed without `allow-scripts`, so neither a
// <script> nor an `onerror=` in it ever runs, and it cannot reach this page.

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

function sandboxedHtml(html, title) {
  const frame = document.createElement("iframe");
  // allow-same-origin without allow-scripts: nothing inside runs, and the page may measure it.
  frame.setAttribute("sandbox", "allow-same-origin");
  frame.className = "value html-value";
  frame.title = title;
  frame.srcdoc =
    '<!doctype html><meta charset="utf-8"><meta name="color-scheme" content="light dark">' +
    "<style>body{margin:0;font:14px/1.4 system-ui,sans-serif}</style>" +
    html;
  frame.addEventListener("load", () => {
    const height = frame.contentDocument?.documentElement.scrollHeight;
    if (height) frame.style.height = `${Math.min(height + 4, 800)}px`;
  });
  return frame;
}

/** Show a finished run: its value (rich when it has a rich repr) or its traceback. */
export function showResult(output, result) {
  if (!result.ok) {
    appendOutput(output, "error", result.traceback || `${result.error_type}: ${result.error_message}`);
    return;
  }
  const value = result.value ?? {};
  const plain = value["text/plain"];
  if (value["text/html"] !== undefined) {
    output.append(sandboxedHtml(value["text/html"], plain ?? "HTML output"));
  } else if (value["image/svg+xml"] !== undefined) {
    const img = document.createElement("img");
    img.className = "value";
    img.alt = plain ?? "picture";
    img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(value["image/svg+xml"])}`;
    output.append(img);
  } else if (plain !== undefined) {
    appendOutput(output, "value", plain);
  }
}

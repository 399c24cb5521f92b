// In-place navigation between the steps of a lesson: fetch the step's page, swap <main> and the
// title, keep the kernel worker (and every step's Python namespace) running.
//
// Anything unexpected (another lesson, a new build of the assets, an error page, no network)
// falls back to an ordinary page load, which always works.

const pages = new Map();

function fetchPage(url) {
  const request = fetch(url, { headers: { accept: "text/html" }, credentials: "same-origin" }).then(
    async (response) => {
      if (!response.ok || !response.headers.get("content-type")?.startsWith("text/html")) {
        throw new Error(`HTTP ${response.status}`);
      }
      return response.text();
    },
  );
  request.catch(() => pages.delete(url));
  return request;
}

/** What the kept worker must match in a page: its lesson and the kernel build it runs. */
function kernelOf(page) {
  try {
    const meta = page.querySelector('meta[name="promptdojo-kernel"]');
    const { lesson, workerUrl, bundleUrl, pyodideUrl } = JSON.parse(meta?.content ?? "{}");
    return JSON.stringify([lesson, workerUrl, bundleUrl, pyodideUrl]);
  } catch {
    return null;
  }
}

/** Start fetching a step page the learner is likely to open next. */
export function prefetch(url) {
  if (!pages.has(url)) pages.set(url, fetchPage(url));
}

/**
 * Show the step at `url` without reloading the page. `before()` runs just before the old step
 * leaves (save edits, tear editors down), `after()` once the new one is in place.
 */
export async function navigateInPlace(url, { push = true, fresh = false, before, after }) {
  const target = new URL(url, location.href);
  let doc;
  try {
    const page = !fresh && pages.has(target.href) ? pages.get(target.href) : fetchPage(target.href);
    pages.delete(target.href);
    doc = new DOMParser().parseFromString(await page, "text/html");
  } catch {
    location.assign(target.href);
    return;
  }
  const next = doc.querySelector("main");
  // Same lesson and the same kernel build, or the worker we keep would not match the page.
  if (!next?.querySelector("#step-data") || kernelOf(doc) !== kernelOf(document)) {
    location.assign(target.href);
    return;
  }
  before?.();
  document.querySelector("main").replaceChildren(...[...next.childNodes].map((n) => document.adoptNode(n)));
  document.title = doc.title;
  if (push) history.pushState({ promptdojo: true }, "", target.href);
  after?.();
  const anchor = target.hash && document.getElementById(decodeURIComponent(target.hash.slice(1)));
  if (anchor) anchor.scrollIntoView();
  else if (push) window.scrollTo(0, 0);
  // Move focus to the new step's heading so screen readers announce it.
  const heading = document.querySelector("main h1");
  if (heading && push) {
    heading.tabIndex = -1;
    heading.focus({ preventScroll: true });
  }
}

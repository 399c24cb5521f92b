// Search across the course: the server's (or the export's) search.json, indexed by MiniSearch
// in the page, so it works in an export and offline. A result opens its step at its heading.
import MiniSearch from "minisearch";

const FIELDS = ["heading", "step", "lesson", "text", "code"];
const SHOWN = 20;

/** A MiniSearch index of the documents promptdojo.web.search makes. */
export function buildIndex(documents) {
  const index = new MiniSearch({
    fields: FIELDS,
    storeFields: ["lesson", "step", "heading", "url"],
    searchOptions: { boost: { heading: 3, step: 2, lesson: 1.5 }, prefix: true, fuzzy: 0.2 },
  });
  index.addAll(documents);
  return index;
}

function resultItem(result) {
  const item = document.createElement("li");
  const link = document.createElement("a");
  link.href = result.url;
  link.textContent = result.heading === result.step ? result.step : `${result.step}: ${result.heading}`;
  const where = document.createElement("span");
  where.className = "search-where";
  where.textContent = ` ${result.lesson}`;
  item.append(link, where);
  return item;
}

async function loadIndex(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`HTTP ${response.status}`);
  return buildIndex(await response.json());
}

/**
 * Wire the index page's search box to the course's documents, fetched and indexed when the
 * learner first focuses the box or types (a big course's documents weigh megabytes).
 */
export function startSearch(root) {
  const box = root.querySelector("input[type=search]");
  const list = root.querySelector(".search-results");
  const summary = root.querySelector(".search-summary");
  root.querySelector("form").addEventListener("submit", (event) => event.preventDefault());
  let loading = null;
  let index = null;
  const load = () => {
    loading ??= loadIndex(root.dataset.index).then(
      (made) => {
        index = made;
        show();
      },
      (error) => {
        summary.textContent = "Search is unavailable: the course's search file did not load.";
        console.warn("course search is unavailable:", error);
      },
    );
  };
  root.hidden = false;
  const show = () => {
    const query = box.value.trim();
    list.replaceChildren();
    if (!query) {
      summary.textContent = "";
      return;
    }
    if (!index) {
      summary.textContent = "Loading the course's search…";
      load();
      return;
    }
    const results = index.search(query);
    list.append(...results.slice(0, SHOWN).map(resultItem));
    summary.textContent = results.length
      ? `${results.length} section${results.length === 1 ? "" : "s"} match “${query}”`
      : `Nothing matches “${query}”`;
  };
  box.addEventListener("focus", load);
  box.addEventListener("input", show);
  box.addEventListener("keydown", (event) => {
    if (event.key === "Enter") list.querySelector("a")?.click();
  });
}

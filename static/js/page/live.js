// Live reload for authors (`promptdojo serve --reload`). When a lesson file changes, the open
// step page fetches itself again and, when it holds the same cells, updates in place: the prose,
// the title and the step's problems change, while Python keeps running and every cell keeps its
// editor and its output. A cell whose code (or check, hints, solution) changed is marked, with a
// button that reloads the page to run the new version. Anything else (another set of cells, the
// index page, a failed fetch) reloads the page.
const source = new EventSource("/_live");
source.addEventListener("message", async (event) => {
  if (event.data !== "reload") return;
  let updated = false;
  try {
    updated = await updateInPlace();
  } catch (error) {
    console.error("could not update the page in place", error);
  }
  if (!updated) window.location.reload();
});

const cellsOf = (article) => [...article.querySelectorAll(":scope > section.cell")];

/** What of a cell the page cannot take over without a reload: its code and hidden parts. */
function signature(section, data) {
  const id = section.dataset.cellId;
  const help = section.querySelector(".exercise-help")?.innerHTML ?? "";
  const hidden = JSON.stringify([data.checks?.[id], data.timeLimits?.[id], data.controls?.[id]]);
  return [section.dataset.starterHash, section.dataset.kind, help, hidden].join("\u0000");
}

/** Say in `section` that the lesson file changed it, with a button that reloads the page. */
function markChanged(section) {
  section.classList.add("changed-in-file");
  const notice = section.querySelector(".cell-notice");
  notice.replaceChildren();
  notice.hidden = false;
  const button = document.createElement("button");
  button.type = "button";
  button.textContent = "Reload the page";
  button.addEventListener("click", () => window.location.reload());
  notice.append(
    "This cell changed in the lesson file; Python still runs the version shown. ",
    button,
  );
}

/** Update the open step from the server's page; false when it must be reloaded instead. */
async function updateInPlace() {
  const article = document.querySelector("article.step");
  if (!article) return false;
  const response = await fetch(window.location.href, {
    cache: "no-store",
    headers: { accept: "text/html" },
  });
  if (!response.ok) return false;
  const fresh = new DOMParser().parseFromString(await response.text(), "text/html");
  const next = fresh.querySelector("article.step");
  const ids = (root) => cellsOf(root).map((section) => section.dataset.cellId);
  if (!next || ids(article).join("\n") !== ids(next).join("\n")) return false;
  const data = (doc) => JSON.parse(doc.getElementById("step-data")?.textContent || "{}");
  const [before, after] = [data(document), data(fresh)];
  const setupChanged = JSON.stringify(before.setup) !== JSON.stringify(after.setup);
  const mine = new Map(cellsOf(article).map((section) => [section.dataset.cellId, section]));
  const changed = [];
  const children = [...next.childNodes].map((node) => {
    const section = node.matches?.("section.cell") ? mine.get(node.dataset.cellId) : null;
    if (!section) return document.importNode(node, true);
    if (setupChanged || signature(section, before) !== signature(node, after)) {
      changed.push(section);
    }
    return section;
  });
  article.replaceChildren(...children);
  const problems = fresh.querySelector(".lesson-problems");
  document.querySelector(".lesson-problems")?.remove();
  if (problems) article.before(document.importNode(problems, true));
  document.title = fresh.title;
  for (const section of changed) markChanged(section);
  return true;
}

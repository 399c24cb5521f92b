// "Export my work" and "Import my work": everything promptdojo stored in this browser, as a file.
import { exportWork, importWork } from "./store.js";

/**
 * Wire the export link and the import file input; `reload()` shows the imported work, `flush()`
 * saves the edits still waiting for their debounce, so that the file holds what is on screen.
 */
export function wireWorkFiles(reload, flush = () => {}) {
  document.addEventListener("click", (event) => {
    if (!event.target.closest?.(".export-work")) return;
    flush();
    const blob = new Blob([JSON.stringify(exportWork(), null, 2)], { type: "application/json" });
    const link = document.createElement("a");
    link.href = URL.createObjectURL(blob);
    link.download = `promptdojo-work-${new Date().toISOString().slice(0, 10)}.json`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 0);
  });
  document.addEventListener("change", async (event) => {
    const input = event.target.closest?.(".import-work input[type=file]");
    if (!input?.files?.length) return;
    const file = input.files[0];
    input.value = "";
    try {
      const { edits } = importWork(await file.text());
      await reload();
      document.querySelector(".work-status").textContent =
        `Imported ${edits} edited cell(s) from ${file.name}.`;
    } catch (error) {
      document.querySelector(".work-status").textContent =
        `Could not import ${file.name}: ${error.message}. Nothing was changed.`;
    }
  });
}

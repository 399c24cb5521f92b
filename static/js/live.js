// Live reload for authors (`promptdojo serve --reload`): refresh the page when a lesson file changes.
const source = new EventSource("/_live");
source.addEventListener("message", (event) => {
  if (event.data === "reload") window.location.reload();
});

// Behaviour the console's pages share, from a static file: the Content-Security-Policy
// allows no inline script and no inline handler (memory_console/settings.py).

// "Select all" on the memory list: a convenience that needs JavaScript; each row's box works
// without it. Delegated from the document, so rows htmx swaps in later are covered too.
document.addEventListener("click", (event) => {
  const all = event.target.closest("#select-all");
  if (!all) return;
  all.closest("form").querySelectorAll("input[name=memory_ids]").forEach((box) => {
    box.checked = all.checked;
  });
});

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

// A button with data-copy="#selector" copies that input's value to the clipboard (the new
// API token) and says so next to it; where the Clipboard API is missing (plain http on
// another host) the text is selected so Ctrl+C copies it.
document.addEventListener("click", (event) => {
  const button = event.target.closest("[data-copy]");
  if (!button) return;
  const input = document.querySelector(button.dataset.copy);
  const status = document.getElementById("copy-status");
  if (!input) return;
  const say = (text) => { if (status) status.textContent = text; };
  input.focus();
  input.select();
  if (navigator.clipboard && window.isSecureContext) {
    navigator.clipboard.writeText(input.value).then(
      () => say("Copied."),
      () => say("Selected: press Ctrl+C (⌘C) to copy."),
    );
  } else {
    say("Selected: press Ctrl+C (⌘C) to copy.");
  }
});

// An input with data-select-on-focus selects its whole text when focused (a token to copy).
document.addEventListener("focusin", (event) => {
  if (event.target.matches && event.target.matches("input[data-select-on-focus]")) {
    event.target.select();
  }
});

// An answer a view made for its htmx target (a form with its errors, a refusal, "no longer
// exists") carries X-Console-Fragment (console/pages.py): htmx swaps it, a 4xx too, as
// base.html's responseHandling says. With DEBUG on, django-htmx's debug error handler
// (django-htmx.js, listening on the document) would first show any 400/403/404 as the whole
// page, unstyled; this listener, below the document, keeps those answers from reaching it,
// so it still shows the error pages no view made (Django's technical 404 and 500 pages).
// Stopping the event's propagation does not cancel it: htmx goes on with the swap.
document.body.addEventListener("htmx:beforeOnLoad", (event) => {
  if (event.detail.xhr.getResponseHeader("X-Console-Fragment")) event.stopPropagation();
});

// Ranking lab: slider read-outs and keyboard navigation and grading. Everything works without this file
// (forms submit normally); it only makes the compare page quicker to use.
(function () {
  "use strict";

  // A slider shows its value next to it while it moves.
  document.addEventListener("input", function (event) {
    var input = event.target;
    if (!input.matches || !input.matches("input[type=range][data-output]")) return;
    var output = document.getElementById(input.dataset.output);
    if (output) output.value = input.value;
  });

  // Every result card of the page, in reading order (column A's, then B's).
  function cards() {
    return Array.prototype.slice.call(document.querySelectorAll("#results [data-gradable]"));
  }

  function typing(el) {
    return el.isContentEditable || /^(INPUT|SELECT|TEXTAREA|BUTTON)$/.test(el.tagName);
  }

  // On a focused result card: 0-3 grade it (pressing its grade button, so it is the same
  // action as a click), j/k (or the arrows) move to the next/previous card. Outside any card
  // and any form field, j/k focus the first card: no Tab walk through the sliders.
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var card = event.target;
    var step = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 }[event.key];
    if (!card.matches || !card.matches("[data-gradable]")) {
      if ((event.key === "j" || event.key === "k") && !typing(card) && cards().length) {
        event.preventDefault();
        cards()[0].focus();
      }
      return;
    }
    if (event.key.length === 1 && "0123".indexOf(event.key) >= 0) {
      var button = card.querySelector('.grade button[value="' + event.key + '"]');
      if (button) {
        event.preventDefault();
        button.click();
      }
      return;
    }
    if (!step) return;
    var all = cards();
    var next = all[all.indexOf(card) + step];
    if (next) {
      event.preventDefault();
      next.focus();
    }
  });
})();

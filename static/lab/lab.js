// Ranking lab: slider read-outs and keyboard grading. Everything works without this file
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

  function rows(row) {
    var list = row.closest("ol.hits");
    return list ? Array.prototype.slice.call(list.querySelectorAll("[data-gradable]")) : [];
  }

  // On a focused result row: 0-3 grade it, arrows (or j/k) move to the next/previous row.
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) return;
    var row = event.target;
    if (!row.matches || !row.matches("[data-gradable]")) return;
    if (event.key.length === 1 && "0123".indexOf(event.key) >= 0) {
      var button = row.querySelector('.grade button[value="' + event.key + '"]');
      if (button) {
        event.preventDefault();
        button.click();
      }
      return;
    }
    var step = { ArrowDown: 1, j: 1, ArrowUp: -1, k: -1 }[event.key];
    if (!step) return;
    var all = rows(row);
    var next = all[all.indexOf(row) + step];
    if (next) {
      event.preventDefault();
      next.focus();
    }
  });
})();

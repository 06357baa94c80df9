// FRIS Explorer: the inquiry pages' few lines of script (no build step).
// The query builder's remove buttons, and the results' live updates from
// the gateway's Server-Sent Events. Without it the pages still work: the
// results show as of the page's load.
(function () {
  "use strict";
  document.addEventListener("click", function (e) {
    var b = e.target.closest("[data-remove]");
    if (!b) return;
    var item = b.closest("[data-removable]");
    if (!item) return;
    var group = item.parentElement && item.parentElement.closest("[data-group]");
    var status = document.getElementById("qb-status");
    if (status) status.textContent = b.getAttribute("data-removed") || "";
    item.remove();
    var next = (group && group.querySelector("input[type=search]")) || document.getElementById("qb-add-group");
    if (next) next.focus();
  });

  // A condition or group just added takes the focus: its first field
  // for a value, else its first choice.
  document.body.addEventListener("htmx:afterSwap", function (e) {
    var t = e.detail && e.detail.target;
    if (!t || !t.matches || !t.matches(".qb-conds, #qb-groups")) return;
    var added = t.lastElementChild;
    var first = added && (added.querySelector("input:not([type=hidden])") || added.querySelector("select"));
    if (first) first.focus();
  });

  var box = document.querySelector("[data-events]");
  if (!box || !window.EventSource) return;
  var live = document.getElementById("results-live");
  var es = new EventSource(box.getAttribute("data-events"));
  var first = true;
  es.addEventListener("results", function (e) {
    box.innerHTML = e.data;
    var s = box.querySelector("[data-summary]");
    // The first event repeats what the page shows: nothing to announce.
    if (!first && live && s) live.textContent = s.getAttribute("data-summary");
    first = false;
    box.setAttribute("data-updated", String(Date.now()));
  });
})();

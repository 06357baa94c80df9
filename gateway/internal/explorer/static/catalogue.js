// FRIS Explorer: the criteria catalogue's and the element search's few
// lines of script. Without it the catalogue's buttons submit the form,
// which comes back with the condition added.
(function () {
  "use strict";
  document.body.addEventListener("htmx:afterSwap", function (e) {
    var from = e.detail && e.detail.requestConfig && e.detail.requestConfig.elt;
    if (!from || !from.closest) return;
    // A pick from the found list closes the list and empties the search.
    var found = from.closest(".qb-found");
    if (found) {
      var box = found.parentElement;
      var field = box && box.closest(".qb-find");
      var input = field && field.querySelector("input[type=search]");
      if (input) input.value = "";
      if (box) box.innerHTML = "";
      return;
    }
    // An element added from the catalogue: its choices start afresh.
    if (from.hasAttribute("data-cat-add")) {
      var el = from.closest(".cat-el");
      if (!el) return;
      el.querySelectorAll("input").forEach(function (i) {
        if (i.type === "checkbox") i.checked = false; else i.value = "";
      });
    }
  });

  // No group left to add to: the form goes as without script, and comes
  // back with a new group holding the condition.
  document.body.addEventListener("htmx:targetError", function (e) {
    var b = e.target;
    if (!b || !b.hasAttribute || !b.hasAttribute("data-cat-add") || !b.form) return;
    if (b.form.requestSubmit) b.form.requestSubmit(b); else b.click();
  });
})();

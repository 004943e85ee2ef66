// proctor's keyboard shortcuts on lists: j / k move, Enter opens, / searches.
// No framework; the pages work without this file.
(function () {
  "use strict";
  function typing(el) {
    return el && (el.tagName === "INPUT" || el.tagName === "TEXTAREA" || el.tagName === "SELECT" || el.isContentEditable);
  }
  function rows() {
    return Array.prototype.slice.call(document.querySelectorAll("table.runs tbody tr, ol.session-runs li"));
  }
  function select(list, i) {
    list.forEach(function (r) { r.classList.remove("selected"); r.removeAttribute("aria-selected"); });
    var row = list[i];
    if (!row) { return; }
    row.classList.add("selected");
    row.setAttribute("aria-selected", "true");
    row.scrollIntoView({ block: "nearest" });
    var link = row.querySelector("a");
    if (link) { link.focus({ preventScroll: true }); }
  }
  document.addEventListener("keydown", function (e) {
    if (e.ctrlKey || e.metaKey || e.altKey || typing(document.activeElement)) { return; }
    if (e.key === "/") {
      var search = document.querySelector("input[type=search]");
      if (search) { e.preventDefault(); search.focus(); search.select(); }
      return;
    }
    var list = rows();
    if (!list.length) { return; }
    var current = list.findIndex(function (r) { return r.classList.contains("selected"); });
    if (e.key === "j") {
      e.preventDefault();
      select(list, Math.min(current + 1, list.length - 1));
    } else if (e.key === "k") {
      e.preventDefault();
      select(list, Math.max(current - 1, 0));
    } else if (e.key === "Enter" && current >= 0) {
      var link = list[current].querySelector("a");
      if (link) { e.preventDefault(); link.click(); }
    }
  });
})();

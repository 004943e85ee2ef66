// proctor's keyboard shortcuts on lists: j / k move, Enter opens, / searches;
// on a diff under review: j / k move between hunks, a / r accept or reject
// the focused one, e edits it, v marks its file viewed.
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
  function parts() {
    return Array.prototype.slice.call(document.querySelectorAll(".part")).filter(function (p) { return p.offsetParent !== null; });
  }
  function focusPart(list, i) {
    var part = list[i];
    if (part) { part.focus({ preventScroll: true }); part.scrollIntoView({ block: "nearest" }); }
  }
  function countParts() {
    var out = document.getElementById("parts-count");
    if (!out) { return; }
    var all = document.querySelectorAll(".part").length;
    var accepted = document.querySelectorAll(".part input[value=accept]:checked").length;
    var rejected = document.querySelectorAll(".part input[value=reject]:checked").length;
    out.textContent = accepted + " of " + all + " parts accepted, " + rejected + " rejected.";
  }
  function markViewed(box) {
    var file = box.closest("details.file");
    if (!file) { return; }
    file.classList.toggle("viewed", box.checked);
    if (box.checked) { file.open = false; }
  }
  document.addEventListener("change", function (e) {
    if (e.target.classList.contains("viewed-box")) { markViewed(e.target); }
    if (e.target.closest(".part")) { countParts(); }
  });
  document.addEventListener("htmx:afterSettle", countParts);
  document.addEventListener("DOMContentLoaded", countParts);
  // A diff under review: true when the key was one of its shortcuts.
  function reviewKey(e) {
    var list = parts();
    if (!list.length) { return false; }
    var current = list.indexOf(document.activeElement.closest ? document.activeElement.closest(".part") : null);
    var part = list[current];
    switch (e.key) {
    case "j":
      focusPart(list, Math.min(current + 1, list.length - 1));
      return true;
    case "k":
      focusPart(list, Math.max(current - 1, 0));
      return true;
    case "a":
    case "r":
      if (!part) { return false; }
      part.querySelector("input[value=" + (e.key === "a" ? "accept" : "reject") + "]").click();
      focusPart(list, Math.min(current + 1, list.length - 1));
      return true;
    case "e":
    case "c":
      var opened = part && part.querySelector(e.key === "e" ? ".hunk-edit details" : ".hunk-comment details");
      if (!opened) { return false; }
      opened.open = true;
      opened.querySelector("textarea").focus();
      return true;
    case "v":
      var file = (part || document.activeElement).closest("details.file");
      var box = file && file.querySelector(".viewed-box");
      if (!box) { return false; }
      box.click();
      var next = parts().filter(function (p) { return !file.contains(p); })
        .find(function (p) { return file.compareDocumentPosition(p) & Node.DOCUMENT_POSITION_FOLLOWING; });
      if (next) { next.focus({ preventScroll: true }); next.scrollIntoView({ block: "nearest" }); }
      return true;
    }
    return false;
  }
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && typing(document.activeElement)) {
      var inPart = document.activeElement.closest(".part");
      if (inPart) { inPart.focus(); }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey || typing(document.activeElement)) { return; }
    if (reviewKey(e)) { e.preventDefault(); return; }
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

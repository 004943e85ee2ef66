// proctor's keyboard shortcuts on lists: j / k move, Enter opens, / searches;
// on a diff under review: j / k move between hunks (opening, and loading, a
// closed file on the way), a / r accept or reject the focused one, e edits
// it, v marks its file viewed.
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
  function visible(els) {
    return Array.prototype.slice.call(els).filter(function (p) { return p.offsetParent !== null; });
  }
  // What j / k stop at on a diff under review: each hunk shown, and each
  // closed file (a large diff's files load when opened).
  function stops() {
    if (!document.getElementById("parts-count")) { return []; }
    return visible(document.querySelectorAll(".part, details.file:not([open]) > summary"));
  }
  function focusEl(el) {
    el.focus({ preventScroll: true });
    el.scrollIntoView({ block: "nearest" });
  }
  // enter moves to a stop; a closed file is opened, and the focus waits on
  // its name until its hunks are there (first, or last when going back).
  function enter(stop, back) {
    if (!stop) { return; }
    if (stop.tagName !== "SUMMARY") { focusEl(stop); return; }
    var file = stop.parentElement;
    file.dataset.enter = back ? "last" : "first";
    file.open = true;
    focusEl(stop);
    arrive(file);
  }
  function arrive(file) {
    var list = visible(file.querySelectorAll(".part"));
    if (!list.length || document.activeElement !== file.querySelector("summary")) { return; }
    focusEl(file.dataset.enter === "last" ? list[list.length - 1] : list[0]);
  }
  function countParts() {
    var out = document.getElementById("parts-count");
    if (!out) { return; }
    var all = Number(out.dataset.total) || document.querySelectorAll(".part").length;
    // A file not loaded yet carries its draft's decisions as hidden fields.
    var accepted = document.querySelectorAll(".part input[value=accept]:checked, input.draft-field[name^='part.'][value=accept]").length;
    var rejected = document.querySelectorAll(".part input[value=reject]:checked, input.draft-field[name^='part.'][value=reject]").length;
    out.textContent = accepted + " of " + all + " parts accepted, " + rejected + " rejected.";
  }
  function markViewed(box) {
    var file = box.closest("details.file");
    if (!file) { return; }
    file.classList.toggle("viewed", box.checked);
    if (box.checked) { file.open = false; }
    var item = document.getElementById("in-list-" + file.id.replace("file-", ""));
    if (item) { item.classList.toggle("viewed", box.checked); }
    var count = document.getElementById("viewed-count");
    if (count) {
      var total = Number(count.dataset.total);
      count.textContent = document.querySelectorAll(".viewed-box:checked").length + " viewed of " + total + (total === 1 ? " file" : " files");
    }
  }
  // The review form is kept on the server as a draft a moment after each
  // change (its decisions, edits and comments survive leaving the page).
  var saving = null, unsaved = null;
  function keepDraft(e) {
    var form = e.target.form;
    if (!form || form.id !== "review-form" || !form.dataset.draft) { return; }
    clearTimeout(saving);
    unsaved = form;
    saving = setTimeout(function () {
      unsaved = null;
      fetch(form.dataset.draft, { method: "POST", body: new URLSearchParams(new FormData(form)), credentials: "same-origin" });
    }, 600);
  }
  document.addEventListener("input", keepDraft);
  // Leaving the page within that moment still saves it.
  window.addEventListener("pagehide", function () {
    if (!unsaved) { return; }
    clearTimeout(saving);
    navigator.sendBeacon(unsaved.dataset.draft, new URLSearchParams(new FormData(unsaved)));
    unsaved = null;
  });
  // A line's text in a hunk: the code cell beside its number's button.
  function lineText(part, n) {
    var btn = part.querySelector(".ln-btn[data-line='" + n + "']");
    var code = btn && btn.closest("td").nextElementSibling;
    if (!code) { return ""; }
    var pfx = code.querySelector(".pfx");
    return code.textContent.slice(pfx ? pfx.textContent.length : 0);
  }
  // Clicking a line's number opens its hunk's comment on that line;
  // "Suggest a change" starts a suggestion block with the line's text.
  document.addEventListener("click", function (e) {
    var btn = e.target.closest(".ln-btn");
    var sug = e.target.closest(".suggest");
    var part = (btn || sug) && (btn || sug).closest("tbody");
    var box = part && part.querySelector(".hunk-comment details");
    if (!box) { return; }
    var line = box.querySelector(".line-no");
    var text = box.querySelector("textarea");
    if (btn) {
      box.open = true;
      line.value = btn.dataset.line;
      part.querySelectorAll("tr.commented").forEach(function (r) { r.classList.remove("commented"); });
      btn.closest("tr").classList.add("commented");
    } else {
      var block = "```suggestion\n" + lineText(part, line.value) + "\n```";
      text.value = text.value.trim() ? text.value.replace(/\s*$/, "\n") + block : block;
    }
    text.focus();
    keepDraft({ target: text });
  });
  // A button with data-copy copies its field's text (a share link).
  document.addEventListener("click", function (e) {
    var b = e.target.closest("[data-copy]");
    var field = b && document.getElementById(b.dataset.copy);
    if (!field) { return; }
    field.select();
    var done = document.getElementById(b.id + "-done");
    var say = function (text) { if (done) { done.textContent = text; } };
    if (navigator.clipboard) {
      navigator.clipboard.writeText(field.value).then(function () { say("Copied."); }, function () { say("Selected: press Ctrl+C to copy."); });
    } else {
      say("Selected: press Ctrl+C to copy.");
    }
  });
  // A button with data-confirm (Reject, Revoke) asks first; answered no,
  // nothing is sent (the capture phase stops it before HTMX sees it).
  document.addEventListener("submit", function (e) {
    var b = e.submitter;
    if (b && b.dataset.confirm && !window.confirm(b.dataset.confirm)) {
      e.preventDefault();
      e.stopImmediatePropagation();
      return;
    }
    // The review form's own submit saves the draft first: a save still
    // pending would come after it and put back what it sent.
    if (e.target.id === "review-form") {
      clearTimeout(saving);
      unsaved = null;
    }
  }, true);
  document.addEventListener("change", function (e) {
    if (e.target.classList.contains("viewed-box")) { markViewed(e.target); }
    if (e.target.closest(".part")) { countParts(); }
    keepDraft(e);
  });
  document.addEventListener("htmx:afterSettle", function () {
    countParts();
    var at = document.activeElement;
    if (at && at.tagName === "SUMMARY" && at.parentElement.matches("details.file[open]")) { arrive(at.parentElement); }
    replayKeys();
  });
  document.addEventListener("DOMContentLoaded", countParts);
  // A tool call the timeline shows without its result yet: how long it has
  // been running, each second, until the result arrives (a page that no
  // longer follows the run says none was recorded).
  function tickRunning() {
    document.querySelectorAll(".running[data-call]").forEach(function (el) {
      var id = el.dataset.call;
      var ended = Array.prototype.some.call(document.querySelectorAll("[data-ends]"), function (r) { return r.dataset.ends === id; });
      if (ended) { el.remove(); return; }
      if (!document.getElementById("live")) { el.textContent = "no result recorded"; return; }
      var s = Math.max(0, Math.round((Date.now() - Date.parse(el.dataset.since)) / 1000));
      el.textContent = "running for " + (s < 60 ? s + " s" : Math.floor(s / 60) + " min " + (s % 60) + " s");
    });
  }
  setInterval(tickRunning, 1000);
  document.addEventListener("DOMContentLoaded", tickRunning);
  document.addEventListener("htmx:afterSettle", tickRunning);
  // Keys pressed while the file they act on loads wait for it, in order.
  var waitingKeys = [];
  function loading() {
    var at = document.activeElement;
    return at && at.tagName === "SUMMARY" && at.parentElement.matches("details.file[open]") && at.parentElement.querySelector(".loading") !== null;
  }
  function replayKeys() {
    while (waitingKeys.length && !loading() && !typing(document.activeElement)) { reviewKey({ key: waitingKeys.shift(), replay: true }); }
  }
  // A diff under review: true when the key was one of its shortcuts.
  function reviewKey(e) {
    var list = stops();
    if (!list.length) { return false; }
    if ("jkarv".indexOf(e.key) >= 0 && !e.replay) {
      replayKeys();
      if (loading() || waitingKeys.length) {
        waitingKeys.push(e.key);
        return true;
      }
    }
    var at = document.activeElement;
    if (at && at.tagName === "SUMMARY" && at.parentElement.matches("details.file[open]") && "ar".indexOf(e.key) >= 0) {
      // On an opened file's name: its hunks are there now, go to them first.
      arrive(at.parentElement);
      at = document.activeElement;
      list = stops();
    }
    var current = list.indexOf(at.closest && at.closest(".part") || at);
    var between = current < 0 && at && at !== document.body;
    if (between) { // on a file's name or a link: j goes to the next stop, k to the one before
      var after = list.findIndex(function (p) { return at.compareDocumentPosition(p) & Node.DOCUMENT_POSITION_FOLLOWING; });
      current = (after < 0 ? list.length : after) - 1;
    }
    var part = list[current] && list[current].classList.contains("part") ? list[current] : null;
    switch (e.key) {
    case "j":
      enter(list[Math.min(current + 1, list.length - 1)], false);
      return true;
    case "k":
      enter(list[Math.max(between ? current : current - 1, 0)], true);
      return true;
    case "a":
    case "r":
      if (!part) { return false; }
      part.querySelector("input[value=" + (e.key === "a" ? "accept" : "reject") + "]").click();
      enter(stops()[Math.min(current + 1, list.length - 1)], false);
      return true;
    case "e":
    case "c":
      var opened = part && part.querySelector(e.key === "e" ? ".hunk-edit details" : ".hunk-comment details");
      if (!opened) { return false; }
      opened.open = true;
      opened.querySelector("textarea").focus();
      return true;
    case "v":
      var file = at.closest && at.closest("details.file");
      var box = file && file.querySelector(".viewed-box");
      if (!box) { return false; }
      box.click();
      enter(stops().find(function (p) { return !file.contains(p) && file.compareDocumentPosition(p) & Node.DOCUMENT_POSITION_FOLLOWING; }), false);
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
    if (e.key === "?") {
      var help = document.getElementById("shortcuts");
      if (help && !help.open) { e.preventDefault(); help.showModal(); }
      return;
    }
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

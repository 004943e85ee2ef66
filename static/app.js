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
  // Comments on lines of a hunk under review: clicking a line's number
  // opens a new comment under it (a line takes several); shift-clicking a
  // second line of the same hunk makes the last comment opened a range
  // ending there. Each is the review form's comment.F.H.N and line.F.H.N.
  var lastComment = null; // { row, part, from }: the comment opened last, and its first line
  function saveSoon(form) { keepDraft({ target: { form: form } }); }
  function rowOf(btn) { return btn.closest("tr"); }
  // A line's number button by its data-line ("12", "L7") in a hunk.
  function lineBtn(part, ref) { return part.querySelector(".ln-btn[data-line='" + ref + "']"); }
  // The person's words for lines, as the server's patch.Span.Words.
  function spanWords(span) {
    var ends = span.split("-");
    var one = function (r) { return r.charAt(0) === "L" ? r.slice(1) + " (old)" : r; };
    var old = function (r) { return r.charAt(0) === "L"; };
    var num = function (r) { return old(r) ? r.slice(1) : r; };
    if (ends.length === 1) { return (old(ends[0]) ? "old line " : "line ") + num(ends[0]); }
    if (old(ends[0]) === old(ends[1])) { return (old(ends[1]) ? "old lines " : "lines ") + num(ends[0]) + " to " + num(ends[1]); }
    return "lines " + one(ends[0]) + " to " + one(ends[1]);
  }
  // After a line's row: past the comments already under it.
  function below(tr) {
    while (tr.nextElementSibling && tr.nextElementSibling.classList.contains("line-comment")) { tr = tr.nextElementSibling; }
    return tr;
  }
  function place(row, span, part) {
    var ends = span.split("-");
    row.querySelector(".comment-span").value = span;
    var words = spanWords(span);
    row.querySelector(".comment-where").textContent = words;
    row.querySelector("textarea").setAttribute("aria-label", "Comment on " + words + " of " + part.dataset.path);
    row.querySelector(".suggest").hidden = ends.some(function (r) { return r.charAt(0) === "L"; });
  }
  function newComment(btn) {
    var part = btn.closest("tbody");
    var tpl = document.getElementById("comment-row");
    if (!part || !tpl || part.dataset.file === undefined) { return null; }
    var prefix = "comment." + part.dataset.file + "." + part.dataset.hunk + ".";
    var n = 0;
    document.querySelectorAll("[name^='" + prefix + "']").forEach(function (el) {
      var k = Number(el.name.slice(prefix.length));
      if (k >= n) { n = k + 1; }
    });
    var row = tpl.content.firstElementChild.cloneNode(true);
    var key = part.dataset.file + "." + part.dataset.hunk + "." + n;
    row.querySelector("textarea").name = "comment." + key;
    row.querySelector(".comment-span").name = "line." + key;
    row.querySelector("td").colSpan = rowOf(btn).cells.length;
    place(row, btn.dataset.line, part);
    below(rowOf(btn)).after(row);
    lastComment = { row: row, part: part, from: btn };
    return row;
  }
  // Shift-click: the last comment opened becomes lines from its first to
  // btn's (in the diff's order), and moves under the last of them.
  function extend(btn) {
    var c = lastComment;
    if (!c || !c.row.isConnected || c.part !== btn.closest("tbody")) { return null; }
    var first = c.from, last = btn;
    if (rowOf(last).compareDocumentPosition(rowOf(first)) & Node.DOCUMENT_POSITION_FOLLOWING) { first = btn; last = c.from; }
    place(c.row, first === last ? last.dataset.line : first.dataset.line + "-" + last.dataset.line, c.part);
    below(rowOf(last)).after(c.row);
    return c.row;
  }
  // The text of a hunk's new-side lines from..to (numbers).
  function linesText(part, span) {
    var ends = span.split("-");
    var out = [];
    for (var n = Number(ends[0]); n <= Number(ends[ends.length - 1]); n++) {
      var btn = lineBtn(part, String(n));
      var code = btn && btn.closest("td").nextElementSibling;
      if (!code) { continue; }
      var pfx = code.querySelector(".pfx");
      out.push(code.textContent.slice(pfx ? pfx.textContent.length : 0));
    }
    return out.join("\n");
  }
  document.addEventListener("click", function (e) {
    var btn = e.target.closest(".ln-btn");
    if (btn) {
      var row = (e.shiftKey && extend(btn)) || newComment(btn);
      if (!row) { return; }
      row.querySelector("textarea").focus();
      saveSoon(document.getElementById("review-form"));
      return;
    }
    var box = e.target.closest(".line-comment");
    if (!box) { return; }
    var text = box.querySelector("textarea");
    if (e.target.closest(".suggest")) {
      var block = "```suggestion\n" + linesText(box.closest("tbody"), box.querySelector(".comment-span").value) + "\n```";
      text.value = text.value.trim() ? text.value.replace(/\s*$/, "\n") + block : block;
      text.focus();
      saveSoon(document.getElementById("review-form"));
    } else if (e.target.closest(".discard")) {
      var part = box.closest("tbody");
      box.remove();
      if (part && part.classList.contains("part")) { part.focus(); }
      saveSoon(document.getElementById("review-form"));
    }
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
  // A running call's output in the transcript takes what the timeline got
  // since the page was made (rows after its data-seq).
  function followOutput() {
    document.querySelectorAll(".running-output[data-call]").forEach(function (box) {
      var pre = box.querySelector("pre");
      var seen = Number(box.dataset.seq) || 0;
      document.querySelectorAll("#timeline-list [data-output]").forEach(function (row) {
        var seq = Number(row.dataset.seq);
        if (row.dataset.output !== box.dataset.call || seq <= seen) { return; }
        var text = row.querySelector(".ev-output");
        pre.textContent += (pre.textContent ? "\n" : "") + (text ? text.textContent : "");
        seen = seq;
      });
      box.dataset.seq = seen;
    });
  }
  document.addEventListener("htmx:afterSettle", followOutput);
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
      var opened = part && part.querySelector(".hunk-edit details");
      if (!opened) { return false; }
      opened.open = true;
      opened.querySelector("textarea").focus();
      return true;
    case "c": // a comment on the hunk's first added line (else its first deleted one)
      var first = part && (part.querySelector("tr.add .ln-btn, td.add ~ td .ln-btn") || part.querySelector("tr.del .ln-btn, .ln-btn"));
      if (!first) { return false; }
      first.click();
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

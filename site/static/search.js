// errata offline search. The index (search/<lang>.js, built by errata-site's search
// module) sets window.ERRATA_SEARCH = {docs, terms, regexes}. Tokenisation here must
// match search.rs: lower-case ASCII words, and CJK text as character bigrams.
(function () {
  "use strict";
  var index = window.ERRATA_SEARCH;
  var form = document.getElementById("search-form");
  var box = document.getElementById("q");
  var status = document.getElementById("search-status");
  var list = document.getElementById("search-results");
  if (!index || !form || !box || !status || !list) return;

  function isCjk(code) {
    return (code >= 0x3400 && code <= 0x4dbf) || (code >= 0x4e00 && code <= 0x9fff) ||
      (code >= 0xf900 && code <= 0xfaff) || (code >= 0x3040 && code <= 0x30ff) ||
      (code >= 0xac00 && code <= 0xd7af);
  }
  function isWord(code) {
    return (code >= 48 && code <= 57) || (code >= 97 && code <= 122) || code === 95;
  }
  function tokens(text) {
    var out = [], word = "", cjk = [];
    text = text.toLowerCase();
    function flushWord() { if (word.length >= 2) out.push(word); word = ""; }
    function flushCjk() {
      if (cjk.length === 1) out.push(cjk[0]);
      for (var i = 0; i + 1 < cjk.length; i++) out.push(cjk[i] + cjk[i + 1]);
      cjk = [];
    }
    for (var ch of text) {
      var code = ch.codePointAt(0);
      if (isWord(code)) { flushCjk(); word += ch; }
      else if (isCjk(code)) { flushWord(); cjk.push(ch); }
      else { flushWord(); flushCjk(); }
    }
    flushWord(); flushCjk();
    return out;
  }
  function normalise(text) { return text.toLowerCase().replace(/\s+/g, " ").trim(); }

  var compiled = null;
  function regexes() {
    if (compiled) return compiled;
    compiled = [];
    index.regexes.forEach(function (pair) {
      try { compiled.push([pair[0], new RegExp(pair[1], "i")]); } catch (e) { /* not JS syntax: skip */ }
    });
    return compiled;
  }

  function search(query) {
    var scores = new Map();
    var seen = new Set();
    var n = index.docs.length;
    tokens(query).forEach(function (tok) {
      if (seen.has(tok)) return;
      seen.add(tok);
      var postings = index.terms[tok];
      if (!postings) return;
      var df = postings.length / 2;
      var idf = Math.log(1 + n / df);
      for (var i = 0; i < postings.length; i += 2) {
        var d = postings[i];
        scores.set(d, (scores.get(d) || 0) + postings[i + 1] * idf);
      }
    });
    var q = normalise(query);
    if (q.length >= 6) {
      // A pasted error message: an entry whose regex matches it, or whose message it
      // contains, is the answer, whatever the word scores say.
      regexes().forEach(function (pair) {
        if (pair[1].test(query)) scores.set(pair[0], (scores.get(pair[0]) || 0) + 1000);
      });
      index.docs.forEach(function (doc, d) {
        var sig = doc[4];
        if (sig && sig.length >= 6 && (q.indexOf(sig) >= 0 || sig.indexOf(q) >= 0)) {
          scores.set(d, (scores.get(d) || 0) + 500);
        }
      });
    }
    return Array.from(scores.entries())
      .sort(function (a, b) { return b[1] - a[1] || a[0] - b[0]; })
      .slice(0, 50)
      .map(function (pair) { return index.docs[pair[0]]; });
  }

  function render(query) {
    while (list.firstChild) list.removeChild(list.firstChild);
    if (!query.trim()) { status.textContent = ""; return; }
    var hits = search(query);
    status.textContent = hits.length
      ? status.getAttribute("data-count").replace("{n}", String(hits.length))
      : status.getAttribute("data-none");
    hits.forEach(function (doc) {
      var li = document.createElement("li");
      var a = document.createElement("a");
      a.href = doc[0];
      a.textContent = doc[1];
      li.appendChild(a);
      if (doc[2]) {
        var sub = document.createElement("span");
        sub.className = "sub";
        sub.textContent = doc[3] + " · " + doc[2];
        li.appendChild(sub);
      }
      list.appendChild(li);
    });
  }

  var params = new URLSearchParams(window.location.search);
  var initial = params.get("q") || "";
  box.value = initial;
  render(initial);
  var timer = null;
  box.addEventListener("input", function () {
    clearTimeout(timer);
    timer = setTimeout(function () { render(box.value); }, 120);
  });
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    render(box.value);
  });
})();

// errata offline search. The index (errata-site's search module) is split into shards
// loaded on demand: search/<lang>/t<k>.js hold the postings of the tokens whose hash is
// k, d<k>.js the documents whose key is k (both modulo data-shards). Each file calls
// ERRATA_SEARCH_SHARD(kind, k, [name, value, name, value, ...]); postings are
// [gap, weight, ...] with document keys as gaps from the previous key. Shards are
// scripts, so this works from file:// too. Tokenisation and the hash must match search.rs.
(function () {
  "use strict";
  var form = document.getElementById("search-form");
  var box = document.getElementById("q");
  var status = document.getElementById("search-status");
  var list = document.getElementById("search-results");
  if (!form || !box || !status || !list) return;
  var base = list.getAttribute("data-index") || "";
  var docCount = Number(list.getAttribute("data-docs")) || 0;
  var shards = Number(list.getAttribute("data-shards")) || 1;
  var kinds = [list.getAttribute("data-kind-entry") || "", list.getAttribute("data-kind-article") || ""];
  var MAX_HITS = 50;

  // Loaded shards: "t3" -> Map(token -> postings), "d7" -> Map(key -> document).
  var shardMaps = {};
  var waiting = {};
  window.ERRATA_SEARCH_SHARD = function (kind, k, pairs) {
    var name = kind + k;
    var map = new Map();
    for (var i = 0; i + 1 < pairs.length; i += 2) map.set(pairs[i], pairs[i + 1]);
    shardMaps[name] = map;
    (waiting[name] || []).forEach(function (done) { done(map); });
    delete waiting[name];
  };
  function load(kind, k) {
    var name = kind + k;
    return new Promise(function (resolve) {
      if (shardMaps[name]) { resolve(shardMaps[name]); return; }
      if (waiting[name]) { waiting[name].push(resolve); return; }
      waiting[name] = [resolve];
      var script = document.createElement("script");
      script.src = base + name + ".js";
      script.onerror = function () { window.ERRATA_SEARCH_SHARD(kind, k, []); };
      document.head.appendChild(script);
    });
  }

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
  // 32-bit FNV-1a over code points (search.rs: token_hash).
  function shardOf(token) {
    var h = 0x811c9dc5;
    for (var ch of token) h = Math.imul(h ^ ch.codePointAt(0), 16777619);
    return (h >>> 0) % shards;
  }
  function normalise(text) { return text.toLowerCase().replace(/\s+/g, " ").trim(); }

  var regexCache = new Map();
  function regex(pattern) {
    if (!pattern) return null;
    if (!regexCache.has(pattern)) {
      var re = null;
      try { re = new RegExp(pattern, "i"); } catch (e) { /* not JS syntax: skip */ }
      regexCache.set(pattern, re);
    }
    return regexCache.get(pattern);
  }
  function unique(items) {
    return items.filter(function (x, i) { return items.indexOf(x) === i; });
  }

  function search(query) {
    var toks = unique(tokens(query));
    var termShards = unique(toks.map(shardOf));
    return Promise.all(termShards.map(function (k) { return load("t", k); })).then(function () {
      var scores = new Map();
      toks.forEach(function (tok) {
        var postings = shardMaps["t" + shardOf(tok)].get(tok);
        if (!postings) return;
        var idf = Math.log(1 + docCount / (postings.length / 2));
        // Keys are written as gaps from the previous key.
        for (var i = 0, key = 0; i + 1 < postings.length; i += 2) {
          key += postings[i];
          scores.set(key, (scores.get(key) || 0) + postings[i + 1] * idf);
        }
      });
      var best = Array.from(scores.entries())
        .sort(function (a, b) { return b[1] - a[1] || a[0] - b[0]; })
        .slice(0, MAX_HITS);
      var docShards = unique(best.map(function (pair) { return pair[0] % shards; }));
      return Promise.all(docShards.map(function (k) { return load("d", k); })).then(function () {
        var q = normalise(query);
        var words = tokens(query).join(" ");
        var hits = [];
        best.forEach(function (pair) {
          var doc = shardMaps["d" + (pair[0] % shards)].get(pair[0]);
          if (!doc) return;
          var score = pair[1];
          // The query is this document's title (punctuation and case aside).
          if (words && tokens(doc[2]).join(" ") === words) score += 2000;
          if (q.length >= 6 && doc[0] === 0) {
            // A pasted error message: an entry whose regex matches it, or whose message
            // it contains, is the answer, whatever the word scores say.
            var re = regex(doc[5]);
            if (re && re.test(query)) score += 1000;
            var sig = doc[4] || normalise(doc[2]);
            if (sig.length >= 6 && (q.indexOf(sig) >= 0 || sig.indexOf(q) >= 0)) score += 500;
          }
          hits.push({key: pair[0], score: score, doc: doc});
        });
        // Ties: the shorter title (the closer match), then the id.
        hits.sort(function (a, b) {
          return b.score - a.score || a.doc[2].length - b.doc[2].length ||
            (a.doc[1] < b.doc[1] ? -1 : a.doc[1] > b.doc[1] ? 1 : 0);
        });
        return hits.map(function (hit) { return hit.doc; });
      });
    });
  }

  var latest = 0;
  function render(query) {
    var run = ++latest;
    if (!query.trim()) {
      while (list.firstChild) list.removeChild(list.firstChild);
      status.textContent = "";
      return;
    }
    search(query).then(function (hits) {
      if (run !== latest) return;
      while (list.firstChild) list.removeChild(list.firstChild);
      status.textContent = hits.length
        ? status.getAttribute("data-count").replace("{n}", String(hits.length))
        : status.getAttribute("data-none");
      hits.forEach(function (doc) {
        var li = document.createElement("li");
        var a = document.createElement("a");
        a.href = (doc[0] === 1 ? "articles/" : "entries/") + doc[1] + ".html";
        a.textContent = doc[2];
        li.appendChild(a);
        if (doc[3]) {
          var sub = document.createElement("span");
          sub.className = "sub";
          sub.textContent = kinds[doc[0]] + " · " + doc[3];
          li.appendChild(sub);
        }
        list.appendChild(li);
      });
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

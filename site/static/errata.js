// errata: progressive enhancement only; every page works without JavaScript.
(function () {
  "use strict";
  // Copy buttons: <button class="copy" data-copy-target="ID">.
  document.querySelectorAll("button.copy").forEach(function (button) {
    button.addEventListener("click", function () {
      var target = document.getElementById(button.getAttribute("data-copy-target"));
      if (!target || !navigator.clipboard) return;
      var label = button.textContent;
      navigator.clipboard.writeText(target.textContent).then(function () {
        button.textContent = document.documentElement.lang === "zh" ? "已复制" : "Copied";
        setTimeout(function () { button.textContent = label; }, 1500);
      }, function () { /* clipboard refused (file://, permissions): leave the text selectable */ });
    });
  });
})();

/**
 * The web app's one script, served at `/app.js` and allowed only on pages that ask for it (`htmlPage(…, { script:
 * true })`): copy buttons. Progressive enhancement: the buttons are rendered `hidden` and shown by this script, so
 * without it the page is the same minus the buttons (the text stays selectable).
 */
export const APP_JS = `"use strict";
for (const button of document.querySelectorAll("button[data-copy]")) {
  button.hidden = false;
  button.addEventListener("click", () => {
    const target = document.getElementById(button.dataset.copy);
    if (target === null) return;
    const text = "value" in target ? target.value : target.textContent;
    const label = button.textContent;
    navigator.clipboard.writeText(text).then(
      () => { button.textContent = "Copied"; },
      () => { button.textContent = "Copy failed: select the text"; }
    ).finally(() => setTimeout(() => { button.textContent = label; }, 2000));
  });
}
`

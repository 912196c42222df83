// Shared by every section script: the page's data, element building, the hover tip, seeded layouts.
var D = JSON.parse(document.getElementById("nkw-data").textContent);
var tip = document.getElementById("tip");

function el(tag, attrs, text) {
  var node = document.createElement(tag);
  Object.keys(attrs || {}).forEach(function (key) { node.setAttribute(key, attrs[key]); });
  if (text !== undefined && text !== null) { node.textContent = text; }
  return node;
}

// The tip stays inside the window, so it never widens the page on a narrow screen.
function placeTip(ev) {
  var x = ev.clientX + 12, y = ev.clientY + 12;
  var width = tip.offsetWidth, height = tip.offsetHeight;
  if (x + width > window.innerWidth - 4) { x = Math.max(4, ev.clientX - width - 12); }
  if (y + height > window.innerHeight - 4) { y = Math.max(4, ev.clientY - height - 12); }
  tip.style.left = x + "px";
  tip.style.top = y + "px";
}

function showTip(ev, lines) {
  tip.textContent = "";
  lines.forEach(function (line, i) {
    if (line) { tip.appendChild(el(i ? "div" : "b", {}, line)); }
  });
  tip.style.display = "block";
  placeTip(ev);
}

function hideTip() { tip.style.display = "none"; }

// Hover tips on a graph's elements: `lines(element)` gives the tip's lines, the first in bold.
function tipOn(cy, selector, lines) {
  cy.on("mouseover", selector, function (ev) {
    if (ev.originalEvent) { showTip(ev.originalEvent, lines(ev.target)); }
  });
  cy.on("mousemove", selector, function (ev) {
    if (ev.originalEvent) { placeTip(ev.originalEvent); }
  });
  cy.on("mouseout", selector, hideTip);
}

// fCoSE samples with Math.random: a seeded generator while it runs draws the same graph on every load.
function seeded(seed, run) {
  var saved = Math.random, state = seed >>> 0;
  Math.random = function () {
    state = (state + 0x6d2b79f5) >>> 0;
    var t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  try { return run(); } finally { Math.random = saved; }
}

// Text broken into lines no wider than `width` (as the canvas measures it in `font`), at spaces only:
// a word longer than a line keeps a line of its own, whole.
var measureContext = document.createElement("canvas").getContext("2d");
function wrapText(text, width, font) {
  measureContext.font = font;
  var lines = [], line = "", widest = 0;
  String(text || "").split(/\s+/).filter(Boolean).forEach(function (word) {
    var candidate = line ? line + " " + word : word;
    if (line && measureContext.measureText(candidate).width > width) {
      lines.push(line);
      line = word;
    } else {
      line = candidate;
    }
  });
  if (line) { lines.push(line); }
  lines.forEach(function (l) { widest = Math.max(widest, measureContext.measureText(l).width); });
  return { lines: lines.length ? lines : [""], width: widest };
}

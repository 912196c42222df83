// Timeline swimlane: characters (rows) by scenes (columns); a cell is lit where the character is
// mentioned, dark where an observable state of theirs is recorded.
var L = D.swimlane, sceneById = {};
L.scenes.forEach(function (s) { sceneById[s.id] = s; });
var laneHead = document.getElementById("lane-head");
var laneBody = document.getElementById("lane-body");

L.scenes.forEach(function (s) {
  var th = el("th", { "class": "scene-col", "data-scene": s.id }, String(s.n));
  th.addEventListener("mousemove", function (ev) { showTip(ev, ["Scene " + s.n + ": " + s.heading, s.summary]); });
  th.addEventListener("mouseleave", hideTip);
  laneHead.appendChild(th);
});

function sortedCharacters(key) {
  return L.characters.slice().sort(function (a, b) {
    if (key === "count") { return b.count - a.count || a.first - b.first; }
    if (key === "name") { return a.name.localeCompare(b.name); }
    return a.first - b.first || b.count - a.count;
  });
}

function laneCell(character, scene, states) {
  var cls = "cell" + (states ? (states.length ? " on state" : " on") : "");
  var td = el("td", { "class": cls });
  if (states) {
    td.addEventListener("mousemove", function (ev) {
      var head = character.name + " in scene " + scene.n + " (" + scene.heading + ")";
      showTip(ev, [head].concat(states.length ? states : ["present (no state recorded)"]));
    });
    td.addEventListener("mouseleave", hideTip);
  }
  return td;
}

function renderRows() {
  laneBody.textContent = "";
  sortedCharacters(document.getElementById("sort").value).forEach(function (c) {
    var tr = el("tr", { "class": "char-row", "data-entity": c.id });
    tr.appendChild(el("th", { "class": "char-name" }, c.name + " (" + c.count + ")"));
    var mine = L.cells[c.id] || {};
    L.scenes.forEach(function (s) { tr.appendChild(laneCell(c, s, mine[s.id])); });
    laneBody.appendChild(tr);
  });
}
document.getElementById("sort").addEventListener("change", renderRows);
renderRows();
document.getElementById("lane-stats").textContent = L.characters.length + " characters x " + L.scenes.length + " scenes";

// The grid as a PNG: the names column is as wide as the longest name, so every name is whole.
var PNG_CELL = 12, PNG_TOP = 24, PNG_FONT = "10px sans-serif";
function swimlanePng() {
  var rows = laneBody.querySelectorAll("tr.char-row");
  measureContext.font = PNG_FONT;
  var left = 8 + Array.prototype.reduce.call(rows, function (widest, tr) {
    return Math.max(widest, Math.ceil(measureContext.measureText(tr.firstChild.textContent).width));
  }, 0) + 8;
  var canvas = el("canvas", { width: left + L.scenes.length * PNG_CELL + 10, height: PNG_TOP + rows.length * PNG_CELL + 10 });
  var g = canvas.getContext("2d");
  g.fillStyle = "#fff";
  g.fillRect(0, 0, canvas.width, canvas.height);
  g.font = PNG_FONT;
  g.fillStyle = "#555";
  L.scenes.forEach(function (s, i) {
    if (s.n % 5 === 0 || s.n === 1) { g.fillText(String(s.n), left + i * PNG_CELL, PNG_TOP - 6); }
  });
  rows.forEach(function (tr, r) {
    g.fillStyle = "#222";
    g.fillText(tr.firstChild.textContent, 8, PNG_TOP + r * PNG_CELL + 10);
    tr.querySelectorAll("td").forEach(function (td, i) {
      g.fillStyle = td.classList.contains("state") ? "#0277bd" : td.classList.contains("on") ? "#4fc3f7" : "#f1f1f1";
      g.fillRect(left + i * PNG_CELL, PNG_TOP + r * PNG_CELL, PNG_CELL - 1, PNG_CELL - 1);
    });
  });
  document.body.setAttribute("data-png-left", String(left));
  return canvas.toDataURL("image/png");
}
document.getElementById("png").addEventListener("click", function () {
  var a = document.getElementById("png-link");
  a.href = swimlanePng();
  a.download = D.doc_id + "-swimlane.png";
  a.textContent = "download swimlane.png";
  a.click();
});

// Storyline DAG: episodes laid out in layers by dagre (cytoscape-dagre), left to right along the
// relations, each box as large as its whole title, coloured by its storyline.
var G = D.dag;
// White text on each of these keeps a contrast of at least 4.5:1.
var STORYLINE_COLORS = ["#b34700", "#2e7d32", "#6a1b9a", "#00695c", "#ad1457", "#5d4037", "#283593", "#6b6b00"];
var UNGROUPED_COLOR = "#546e7a";
var EDGE_COLORS = { causes: "#c62828", precedes: "#546e7a", elaborates: "#1565c0" };
var EPISODE_FONT_SIZE = 12, EPISODE_LINE = 1.25, EPISODE_FONT = EPISODE_FONT_SIZE + "px sans-serif";
var EPISODE_TEXT_WIDTH = 150, EPISODE_PADDING = 8;

var storylinesOf = {};
G.storylines.forEach(function (s, i) {
  s.episodes.forEach(function (id) { (storylinesOf[id] = storylinesOf[id] || []).push(i); });
});

function episodeNode(e) {
  var wrapped = wrapText(e.title, EPISODE_TEXT_WIDTH, EPISODE_FONT);
  var grouped = e.lane < G.storylines.length;
  return {
    group: "nodes",
    data: {
      id: e.id, label: wrapped.lines.join("\n"), title: e.title, summary: e.summary, scenes: e.scenes,
      ordinal: e.ordinal,
      color: grouped ? STORYLINE_COLORS[e.lane % STORYLINE_COLORS.length] : UNGROUPED_COLOR,
      w: Math.ceil(Math.max(EPISODE_TEXT_WIDTH, wrapped.width)) + 2 * EPISODE_PADDING,
      h: Math.ceil(wrapped.lines.length * EPISODE_FONT_SIZE * EPISODE_LINE) + 2 * EPISODE_PADDING
    }
  };
}

var dagElements = G.episodes.map(episodeNode);
G.edges.forEach(function (e, i) {
  dagElements.push({ group: "edges", classes: "relation", data: {
    id: "de" + i, source: e.s, target: e.t, type: e.type, layout: e.layout, color: EDGE_COLORS[e.type] || UNGROUPED_COLOR } });
});
// Story-order links for episodes no relation touches: they place those episodes, and are not drawn.
G.order.forEach(function (e, i) {
  dagElements.push({ group: "edges", classes: "order", data: { id: "do" + i, source: e.s, target: e.t } });
});

var dag = cytoscape({
  container: document.getElementById("dag-canvas"), elements: dagElements, layout: { name: "preset" },
  minZoom: 0.02, maxZoom: 3,
  style: [
    { selector: "node", style: {
      shape: "round-rectangle", width: "data(w)", height: "data(h)", "background-color": "data(color)",
      label: "data(label)", "text-wrap": "wrap", "text-max-width": function (n) { return n.data("w"); },
      "text-valign": "center", "text-halign": "center", "font-family": "sans-serif",
      "font-size": EPISODE_FONT_SIZE, "line-height": EPISODE_LINE, color: "#ffffff", "min-zoomed-font-size": 5 } },
    { selector: "edge.relation", style: {
      width: 1.6, "line-color": "data(color)", "target-arrow-color": "data(color)", "target-arrow-shape": "triangle",
      "curve-style": "bezier", "arrow-scale": 0.9 } },
    { selector: "edge.order", style: { display: "none" } },
    { selector: ".faded", style: { opacity: 0.15 } }
  ]
});
// Layers come from the transitive reduction (and the story-order links); every kept relation is drawn.
dag.nodes().union(dag.edges(".relation[?layout], .order")).layout({
  name: "dagre", rankDir: "LR", nodeSep: 12, rankSep: 36, edgeSep: 8, fit: false, animate: false,
  sort: function (a, b) { return (a.data("ordinal") || 0) - (b.data("ordinal") || 0); }
}).run();

tipOn(dag, "node", function (n) {
  var names = (storylinesOf[n.id()] || []).map(function (i) { return "storyline: " + G.storylines[i].name; });
  return [n.data("title"), "scenes " + n.data("scenes"), n.data("summary")].concat(names);
});

// The zoom the DAG opens at: the whole of it when that is readable (labels at 70 % or more),
// else a readable size from the start of the story.
var READABLE_ZOOM = 0.7, START_ZOOM = 0.9;
function openingZoom() {
  var box = dag.nodes().boundingBox(), width = document.getElementById("dag-canvas").clientWidth || 800;
  var whole = (width - 40) / Math.max(1, box.w);
  return whole >= READABLE_ZOOM ? { zoom: Math.min(1, whole), whole: true } : { zoom: START_ZOOM, whole: false };
}

// The canvas as tall as the drawing at its opening zoom (within bounds).
function sizeDagCanvas() {
  var box = dag.nodes().boundingBox();
  var height = Math.max(220, Math.min(560, box.h * openingZoom().zoom + 40));
  document.getElementById("dag-canvas").style.height = Math.round(height) + "px";
  dag.resize();
}

// "Fit" shows everything; a storyline in the legend zooms to its chain.
function dagStart() {
  dag.elements().removeClass("faded");
  var opening = openingZoom(), zoom = opening.zoom;
  if (opening.whole || !dag.nodes().length) {
    dag.fit(undefined, 20);
    if (dag.zoom() > zoom) { dag.zoom(zoom); dag.center(); }
    return;
  }
  var first = dag.nodes().min(function (n) { return n.data("ordinal"); }).ele;
  var box = dag.nodes().boundingBox(), spare = dag.height() - box.h * zoom;
  dag.zoom(zoom);
  // Every layer whole when they fit in the height, else centred on the first episode.
  var y = spare >= 0 ? spare / 2 - box.y1 * zoom : dag.height() / 2 - first.position("y") * zoom;
  dag.pan({ x: 20 - box.x1 * zoom, y: y });
}
sizeDagCanvas();
dagStart();

function showStoryline(i) {
  var chain = dag.collection();
  G.storylines[i].episodes.forEach(function (id) { chain = chain.union(dag.getElementById(id)); });
  chain = chain.union(chain.edgesWith(chain).filter(".relation"));
  dag.elements().addClass("faded");
  chain.removeClass("faded");
  dag.fit(chain, 30);
  if (dag.zoom() > 1.2) { dag.zoom(1.2); dag.center(chain); }
  document.body.setAttribute("data-storyline", String(i));
  return chain.nodes().length;
}
document.getElementById("dag-fit").addEventListener("click", function () {
  dag.elements().removeClass("faded");
  dag.fit(undefined, 20);
});

var dagLegend = document.getElementById("dag-legend");
G.storylines.forEach(function (s, i) {
  var row = el("div", { "class": "storyline", "data-storyline": String(i) });
  row.appendChild(el("span", { "class": "swatch box", style: "background:" + STORYLINE_COLORS[i % STORYLINE_COLORS.length] }));
  row.appendChild(el("a", { href: "#dag", title: "zoom to this storyline" },
    (s.origin ? s.origin + ": " : "") + s.name + " (" + s.episodes.length + " episodes)"));
  row.addEventListener("click", function (ev) { ev.preventDefault(); showStoryline(i); });
  dagLegend.appendChild(row);
});
var typesUsed = {};
G.edges.forEach(function (e) { typesUsed[e.type] = 1; });
if (Object.keys(typesUsed).length) {
  var arrows = el("div", { "class": "muted" }, "Arrows: ");
  Object.keys(typesUsed).sort().forEach(function (t) {
    arrows.appendChild(el("span", { style: "color:" + (EDGE_COLORS[t] || UNGROUPED_COLOR) }, "\u2192 " + t + " "));
  });
  dagLegend.appendChild(arrows);
}
document.getElementById("dag-stats").textContent = G.episodes.length + " episodes, " + G.edges.length +
  " kept relations, " + G.storylines.length + " storylines";

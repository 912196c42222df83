// Entity graph: entities coloured by type and sized by their relations, laid out by fCoSE
// (cytoscape-fcose); entities without relations are tiled in a labelled box of their own.
var E = D.graph;
// Node fills (never behind text: labels sit below their node on a white outline).
var TYPE_COLORS = { character: "#e53935", location: "#43a047", object: "#fb8c00", time: "#8e24aa", group: "#3949ab",
  institution: "#00897b", role: "#6d4c41", concept: "#757575" };
var byId = {}, maxLinks = 1;
E.nodes.forEach(function (n) { byId[n.id] = n; maxLinks = Math.max(maxLinks, n.links); });

// Hubs: the best-linked tenth (at least eight) keep their labels at every zoom.
var hubs = {};
E.nodes.filter(function (n) { return n.links >= 2; })
  .sort(function (a, b) { return b.links - a.links || a.name.localeCompare(b.name); })
  .slice(0, Math.max(8, Math.ceil(E.nodes.length / 10)))
  .forEach(function (n) { hubs[n.id] = 1; });
// A larger graph is fitted at a smaller zoom: its hub labels are set larger before the layout (which
// keeps labels apart), so they stay readable on screen.
var grow = Math.min(2, Math.max(1, Math.sqrt(E.nodes.length / 40)));
var isolated = E.nodes.filter(function (n) { return !n.links; });

var graphElements = [];
if (isolated.length) {
  graphElements.push({ group: "nodes", data: { id: "__isolated", name: "No relations (" + isolated.length + ")", font: 24 * grow } });
}
E.nodes.forEach(function (n) {
  var share = Math.sqrt(n.links / maxLinks), font = hubs[n.id] ? Math.min(32, (15 + 9 * share) * grow) : 11;
  graphElements.push({ group: "nodes", classes: hubs[n.id] ? "hub" : "", data: {
    id: n.id, name: n.name, type: n.type, color: TYPE_COLORS[n.type] || "#757575", size: 12 + 30 * share,
    font: font, wrap: hubs[n.id] ? font * 8 : 110, parent: n.links ? undefined : "__isolated" } });
});
E.edges.forEach(function (e, i) {
  graphElements.push({ group: "edges", data: { id: "ge" + i, source: e.s, target: e.t, description: e.description } });
});

var cy = cytoscape({
  container: document.getElementById("graph-canvas"), elements: graphElements, layout: { name: "preset" },
  minZoom: 0.1, maxZoom: 5,
  style: [
    { selector: "node", style: {
      label: "data(name)", "font-size": "data(font)", "min-zoomed-font-size": 12, "text-valign": "bottom",
      "text-margin-y": 2, color: "#263238", "text-outline-color": "#ffffff", "text-outline-width": 2, "text-wrap": "wrap" } },
    // Mapped only where the data is there: the box of isolated entities has neither size nor colour.
    { selector: "node[size]", style: {
      "background-color": "data(color)", width: "data(size)", height: "data(size)", "text-max-width": "data(wrap)" } },
    { selector: "node.hub", style: { "font-weight": "bold", "min-zoomed-font-size": 0, "z-index": 5 } },
    { selector: "node:parent", style: {
      shape: "round-rectangle", "background-color": "#eceff1", "background-opacity": 0.7, "border-color": "#b0bec5",
      "border-width": 1, label: "data(name)", "text-valign": "top", "text-halign": "center", "font-size": "data(font)",
      "min-zoomed-font-size": 0, color: "#37474f", "text-outline-width": 0, padding: 14 } },
    { selector: "edge", style: { width: 1, "line-color": "#b0bec5", "curve-style": "haystack", opacity: 0.8 } },
    { selector: ".faded", style: { opacity: 0.12 } },
    { selector: "node.hit", style: { "border-width": 5, "border-color": "#ffd600", "z-index": 10, "min-zoomed-font-size": 0 } },
    { selector: ".hidden", style: { display: "none" } }
  ]
});
if (E.nodes.length) {
  seeded(7, function () {
    cy.layout({ name: "fcose", quality: "proof", randomize: true, animate: false, fit: false,
      nodeDimensionsIncludeLabels: true, packComponents: true, tile: true, tilingPaddingVertical: 16,
      tilingPaddingHorizontal: 16,
      // Story casts are densely linked: strong repulsion and long, soft edges keep the hubs' labels apart.
      nodeRepulsion: 45000, idealEdgeLength: 160, edgeElasticity: 0.15, gravity: 0.1 }).run();
  });
}
cy.fit(undefined, 24);

var profile = document.getElementById("profile");
function showProfile(node) {
  var n = byId[node.id()];
  if (!n) { return; }
  profile.className = "";
  profile.textContent = "";
  profile.appendChild(el("h3", {}, n.name));
  profile.appendChild(el("div", { "class": "muted" }, n.type + " \u00b7 " + n.links + " relations \u00b7 " + n.mentions + " mentions"));
  profile.appendChild(el("p", {}, n.profile || "No profile (below the profiling degree)."));
  var facts = el("ul", {});
  n.facts.forEach(function (f) { facts.appendChild(el("li", {}, f)); });
  profile.appendChild(facts);
}
cy.on("tap", "node", function (ev) { if (!ev.target.isParent()) { showProfile(ev.target); } });
tipOn(cy, "node", function (n) {
  return n.isParent() ? [n.data("name"), "entities no relation links to anything else"]
    : [n.data("name") + " (" + n.data("type") + ")", byId[n.id()].links + " relations"];
});
tipOn(cy, "edge", function (e) { return [e.source().data("name") + " \u2014 " + e.target().data("name"), e.data("description")]; });

var hiddenTypes = {}, showIsolated = document.getElementById("show-isolated");
function applyVisibility() {
  cy.batch(function () {
    cy.nodes().forEach(function (n) {
      var off = n.isParent() ? !showIsolated.checked : (hiddenTypes[n.data("type")] || (n.isChild() && !showIsolated.checked));
      n.toggleClass("hidden", !!off);
    });
    cy.edges().forEach(function (e) { e.toggleClass("hidden", e.source().hasClass("hidden") || e.target().hasClass("hidden")); });
  });
}
var typeCounts = {};
E.nodes.forEach(function (n) { typeCounts[n.type] = (typeCounts[n.type] || 0) + 1; });
var typeLegend = document.getElementById("legend");
Object.keys(typeCounts).sort().forEach(function (t) {
  var row = el("div", { "class": "legend-type", "data-type": t }), label = el("label", {});
  var box = el("input", { type: "checkbox", value: t });
  box.checked = true;
  box.addEventListener("change", function () { hiddenTypes[t] = !box.checked; applyVisibility(); });
  label.appendChild(box);
  label.appendChild(el("span", { "class": "swatch", style: "background:" + (TYPE_COLORS[t] || "#757575") }));
  label.appendChild(document.createTextNode(t + " (" + typeCounts[t] + ")"));
  row.appendChild(label);
  typeLegend.appendChild(row);
});
document.getElementById("isolated-label").textContent = "show " + isolated.length + " entities without relations";
showIsolated.addEventListener("change", applyVisibility);
if (!isolated.length) { showIsolated.parentNode.style.display = "none"; }

var entityNames = document.getElementById("entity-names");
E.nodes.slice().sort(function (a, b) { return a.name.localeCompare(b.name); }).forEach(function (n) {
  entityNames.appendChild(el("option", { value: n.name }));
});
function findEntity(text) {
  var q = String(text || "").trim().toLowerCase();
  if (!q) { return null; }
  var exact = E.nodes.filter(function (n) { return n.name.toLowerCase() === q; });
  var part = E.nodes.filter(function (n) { return n.name.toLowerCase().indexOf(q) >= 0; })
    .sort(function (a, b) { return b.links - a.links; });
  return exact[0] || part[0] || null;
}
function search(text) {
  var found = findEntity(text), result = document.getElementById("search-result");
  cy.elements().removeClass("faded hit");
  document.body.removeAttribute("data-search-hit");
  if (!found) { result.textContent = String(text || "").trim() ? "no entity matches" : ""; return null; }
  var node = cy.getElementById(found.id);
  if (node.hasClass("hidden")) {
    hiddenTypes[found.type] = false;
    typeLegend.querySelector("input[value=" + found.type + "]").checked = true;
    showIsolated.checked = true;
    applyVisibility();
  }
  cy.elements().addClass("faded");
  node.closedNeighborhood().removeClass("faded");
  node.parent().removeClass("faded");
  node.addClass("hit");
  cy.zoom({ level: Math.max(cy.zoom(), 1.4), position: node.position() });
  cy.center(node);
  showProfile(node);
  result.textContent = found.name + " (" + found.type + ", " + found.links + " relations)";
  document.body.setAttribute("data-search-hit", found.id);
  return found.id;
}
var searchBox = document.getElementById("search");
searchBox.addEventListener("change", function () { search(searchBox.value); });
searchBox.addEventListener("keydown", function (ev) { if (ev.key === "Enter") { search(searchBox.value); } });
searchBox.addEventListener("search", function () { if (!searchBox.value) { search(""); } });
function zoomBy(factor) {
  cy.zoom({ level: cy.zoom() * factor, renderedPosition: { x: cy.width() / 2, y: cy.height() / 2 } });
}
document.getElementById("zoom-in").addEventListener("click", function () { zoomBy(1.3); });
document.getElementById("zoom-out").addEventListener("click", function () { zoomBy(1 / 1.3); });
document.getElementById("fit").addEventListener("click", function () { cy.fit(cy.elements(":visible"), 24); });
document.getElementById("graph-stats").textContent = E.nodes.length + " entities, " + E.edges.length + " relations";
